#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "driver/aa_driver_context.h"
#include "agent/aa_agent.h"
#include "concurrent/aa_atomic.h"
#include "concurrent/aa_broadcast.h"
#include "concurrent/aa_mpsc_rb.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_cidr.h"
#include "util/aa_error.h"
#include "util/aa_options.h"
#include "util/aa_fs.h"
#include "util/aa_registry.h"
#include "media/aa_udp_channel.h"
#include "protocols/aa_flow_control.h"

/* The driver's option table (util/aa_options.h, docs/configuration.md): the engine parses, sets,
 * formats, writes and lists the options; this file adds the checks of a few values and the checks
 * between fields (aa_driver_context_validate). */

/* AERON_NAME_RESOLVER_SUPPLIER: a name resolver of the strategy registry. */
static int aa_name_resolver_option_check(const aa_option_t *opt, const char *value)
{
    aa_strategy_t entry;
    if (aa_name_resolver_register_builtins() < 0 || aa_registry_lookup(AA_STRATEGY_KIND_NAME_RESOLVER, value, &entry) < 0)
    {
        AA_APPEND_ERR("invalid %s", opt->env_name);
        return -1;
    }
    return 0;
}

/* AERON_DRIVER_RESOLVER_ALLOWED_NETWORKS: a CIDR list (util/aa_cidr.h). */
static int aa_cidr_option_check(const aa_option_t *opt, const char *value)
{
    aa_cidr_list_t list;
    return aa_cidr_list_parse(opt->env_name, value, &list);
}

/* AERON_*_FLOW_CONTROL_STRATEGY: a registered flow control strategy with its options, probed. */
static int aa_flow_control_option_check(const aa_option_t *opt, const char *value)
{
    aa_flow_control_strategy_choice_t choice;
    aa_flow_control_strategy_params_t params;
    aa_flow_control_strategy_t *probe = NULL;
    aa_flow_control_strategy_params_default(&params);
    if (aa_flow_control_strategy_select_with_defaults(false, NULL, value, NULL, &choice) < 0 ||
        aa_flow_control_strategy_create(&probe, &choice, &params) < 0)
    {
        char cause[768];
        snprintf(cause, sizeof(cause), "%s", aa_errmsg());
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "invalid %s=%s: %s", opt->env_name, value, cause);
        return -1;
    }
    probe->fini(probe);
    return 0;
}

/* AERON_UDP_*_LOSS: loss generator rules (docs/loss-generator.md), kept with their text. */
static int aa_loss_option_parse(void *ctx, const aa_option_t *opt, const char *value)
{
    aa_loss_generator_params_t params;
    if (aa_loss_generator_params_parse(&params, value) < 0)
    {
        AA_APPEND_ERR("invalid %s", opt->env_name);
        return -1;
    }
    *(aa_loss_generator_params_t *)((uint8_t *)ctx + opt->offset) = params;
    return 0;
}

static int aa_loss_option_format(const void *ctx, const aa_option_t *opt, char *out, size_t length)
{
    return snprintf(out, length, "%s", ((const aa_loss_generator_params_t *)((const uint8_t *)ctx + opt->offset))->spec);
}

/* AERON_RECEIVER_GROUP_TAG: "" = none, else a 64-bit integer (has_receiver_group_tag says which). */
static int aa_receiver_group_tag_parse(void *ctx, const aa_option_t *opt, const char *value)
{
    aa_driver_context_t *driver_ctx = ctx;
    if ('\0' == value[0])
    {
        driver_ctx->has_receiver_group_tag = false;
        driver_ctx->receiver_group_tag = 0;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (0 != errno || end == value || '\0' != *end)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "%s=%s is not a 64-bit integer; give the group tag as an integer (e.g. 1001), or leave it empty for "
            "none", opt->env_name, value);
        return -1;
    }
    driver_ctx->has_receiver_group_tag = true;
    driver_ctx->receiver_group_tag = (int64_t)v;
    return 0;
}

static int aa_receiver_group_tag_format(const void *ctx, const aa_option_t *opt, char *out, size_t length)
{
    const aa_driver_context_t *driver_ctx = ctx;
    (void)opt;
    return driver_ctx->has_receiver_group_tag ?
        snprintf(out, length, "%" PRId64, driver_ctx->receiver_group_tag) : snprintf(out, length, "%s", "");
}

/* AERON_DIR_GROUP: "" (owner only), a group name or a gid (docs/security.md, "Files"). */
static int aa_dir_group_parse(void *ctx, const aa_option_t *opt, const char *value)
{
    return aa_fs_access_parse(&((aa_driver_context_t *)ctx)->dir_access, value, true, opt->env_name);
}

static int aa_dir_group_format(const void *ctx, const aa_option_t *opt, char *out, size_t length)
{
    (void)opt;
    return aa_fs_access_format(&((const aa_driver_context_t *)ctx)->dir_access, out, length);
}

/* in the order of aa_threading_mode_t, which the engine stores as an int32 (AA_OPTION_ENUM) */
_Static_assert(sizeof(aa_threading_mode_t) == sizeof(int32_t), "an enum option's field is an int32");
static const char *const aa_driver_threading_mode_names[] = { "DEDICATED", "SHARED_NETWORK", "SHARED", "INVOKER" };
static const aa_option_enum_t aa_driver_threading_modes =
{
    aa_driver_threading_mode_names, 4, "is not a threading mode; use DEDICATED, SHARED_NETWORK, SHARED or INVOKER"
};

#define AA_DRIVER_FIELD(f) AA_OPTION_FIELD(aa_driver_context_t, f)

static const aa_option_t aa_driver_options[] =
{
    { "aeron_dir", "AERON_DIR", "aeron.dir",
        AA_OPTION_STRING, AA_DRIVER_FIELD(aeron_dir), "",
        "directory of the CnC file and log buffers (default /dev/shm/aeron-<user>)",
        .fill_empty = aa_default_aeron_dir },
    { "dir_delete_on_start", "AERON_DIR_DELETE_ON_START", "aeron.dir.delete.on.start",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(dir_delete_on_start), "false",
        "delete the aeron directory on start even if a driver there looks alive" },
    { "dir_delete_on_shutdown", "AERON_DIR_DELETE_ON_SHUTDOWN", "aeron.dir.delete.on.shutdown",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(dir_delete_on_shutdown), "false",
        "delete the aeron directory when the driver closes" },
    { "dir_group", "AERON_DIR_GROUP", "aeron.dir.group",
        AA_OPTION_CUSTOM, AA_DRIVER_FIELD(dir_access), "",
        "a group (name or gid) whose members' clients may use the driver: the aeron directory 2750 and its files "
        "0660 with that group (docs/security.md, Files); empty, the default: the driver's user only (0700 and 0600)",
        .parse = aa_dir_group_parse, .format = aa_dir_group_format },
    { "threading_mode", "AERON_THREADING_MODE", "aeron.threading.mode",
        AA_OPTION_ENUM, AA_DRIVER_FIELD(threading_mode), "DEDICATED",
        "DEDICATED, SHARED_NETWORK, SHARED or INVOKER",
        .choices = &aa_driver_threading_modes },
    { "conductor_idle_strategy", "AERON_CONDUCTOR_IDLE_STRATEGY", "aeron.conductor.idle.strategy",
        AA_OPTION_STRING, AA_DRIVER_FIELD(conductor_idle_strategy), "backoff",
        "idle strategy of the conductor agent",
        .check = aa_idle_strategy_option_check },
    { "sender_idle_strategy", "AERON_SENDER_IDLE_STRATEGY", "aeron.sender.idle.strategy",
        AA_OPTION_STRING, AA_DRIVER_FIELD(sender_idle_strategy), "backoff",
        "idle strategy of the sender agent (DEDICATED)",
        .check = aa_idle_strategy_option_check },
    { "receiver_idle_strategy", "AERON_RECEIVER_IDLE_STRATEGY", "aeron.receiver.idle.strategy",
        AA_OPTION_STRING, AA_DRIVER_FIELD(receiver_idle_strategy), "backoff",
        "idle strategy of the receiver agent (DEDICATED)",
        .check = aa_idle_strategy_option_check },
    { "sharednetwork_idle_strategy", "AERON_SHAREDNETWORK_IDLE_STRATEGY", "aeron.sharednetwork.idle.strategy",
        AA_OPTION_STRING, AA_DRIVER_FIELD(shared_network_idle_strategy), "backoff",
        "idle strategy of the sender+receiver thread (SHARED_NETWORK)",
        .check = aa_idle_strategy_option_check },
    { "shared_idle_strategy", "AERON_SHARED_IDLE_STRATEGY", "aeron.shared.idle.strategy",
        AA_OPTION_STRING, AA_DRIVER_FIELD(shared_idle_strategy), "backoff",
        "idle strategy of the single driver thread (SHARED)",
        .check = aa_idle_strategy_option_check },
    { "term_buffer_length", "AERON_TERM_BUFFER_LENGTH", "aeron.term.buffer.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(term_buffer_length), "16m",
        "term length of network publications, a power of two from 64k to 1g" },
    { "ipc_term_buffer_length", "AERON_IPC_TERM_BUFFER_LENGTH", "aeron.ipc.term.buffer.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(ipc_term_buffer_length), "64m",
        "term length of IPC publications, a power of two from 64k to 1g" },
    { "term_buffer_sparse_file", "AERON_TERM_BUFFER_SPARSE_FILE", "aeron.term.buffer.sparse.file",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(term_buffer_sparse_file), "false",
        "Aeron's sparse log buffers; accepted, but every log is allocated whole when it is created (a full disk fails "
        "its creation, never a write with a SIGBUS)" },
    { "mtu_length", "AERON_MTU_LENGTH", "aeron.mtu.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(mtu_length), "1408",
        "maximum datagram length of network publications, a multiple of 32" },
    { "ipc_mtu_length", "AERON_IPC_MTU_LENGTH", "aeron.ipc.mtu.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(ipc_mtu_length), "1408",
        "maximum frame length of IPC publications, a multiple of 32" },
    { "publication_term_window_length", "AERON_PUBLICATION_TERM_WINDOW_LENGTH",
        "aeron.publication.term.window.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(publication_term_window_length), "0",
        "how far a network publisher may run ahead (0 = term/2)" },
    { "ipc_publication_term_window_length", "AERON_IPC_PUBLICATION_TERM_WINDOW_LENGTH",
        "aeron.ipc.publication.term.window.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(ipc_publication_term_window_length), "0",
        "how far an IPC publisher may run ahead (0 = term/2)" },
    { "file_page_size", "AERON_FILE_PAGE_SIZE", "aeron.file.page.size",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(file_page_size), "4k",
        "page size log buffer files are aligned to" },
    { "perform_storage_checks", "AERON_PERFORM_STORAGE_CHECKS", "aeron.perform.storage.checks",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(perform_storage_checks), "true",
        "check free space before creating a log buffer" },
    { "low_file_store_warning_threshold", "AERON_LOW_FILE_STORE_WARNING_THRESHOLD",
        "aeron.low.file.store.warning.threshold",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(low_file_store_warning_threshold), "160m",
        "free space below which a warning is logged" },
    { "conductor_buffer_length", "AERON_CONDUCTOR_BUFFER_LENGTH", "aeron.conductor.buffer.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(to_driver_buffer_length), "1049344",
        "to-driver ring buffer: capacity (power of two) + 768" },
    { "clients_buffer_length", "AERON_CLIENTS_BUFFER_LENGTH", "aeron.clients.buffer.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(to_clients_buffer_length), "1048704",
        "to-clients broadcast buffer: capacity (power of two) + 128" },
    { "counters_buffer_length", "AERON_COUNTERS_BUFFER_LENGTH", "aeron.counters.buffer.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(counters_values_buffer_length), "1m",
        "counter values buffer (metadata is 4x this)" },
    { "error_buffer_length", "AERON_ERROR_BUFFER_LENGTH", "aeron.error.buffer.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(error_buffer_length), "1m",
        "distinct error log length" },
    { "client_liveness_timeout", "AERON_CLIENT_LIVENESS_TIMEOUT", "aeron.client.liveness.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(client_liveness_timeout_ns), "10s",
        "a client silent this long is timed out and its resources reclaimed",
        .unit_ns = 1 },
    { "publication_linger_timeout", "AERON_PUBLICATION_LINGER_TIMEOUT", "aeron.publication.linger.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(publication_linger_timeout_ns), "5s",
        "how long a drained publication lingers before removal",
        .unit_ns = 1 },
    { "publication_unblock_timeout", "AERON_PUBLICATION_UNBLOCK_TIMEOUT", "aeron.publication.unblock.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(publication_unblock_timeout_ns), "15s",
        "unblock a publication whose writer died mid-claim after this",
        .unit_ns = 1 },
    { "publication_connection_timeout", "AERON_PUBLICATION_CONNECTION_TIMEOUT",
        "aeron.publication.connection.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(publication_connection_timeout_ns), "5s",
        "a network publication without status messages this long is not connected",
        .unit_ns = 1 },
    { "image_liveness_timeout", "AERON_IMAGE_LIVENESS_TIMEOUT", "aeron.image.liveness.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(image_liveness_timeout_ns), "10s",
        "an image without data or heartbeats this long is removed",
        .unit_ns = 1 },
    { "timer_interval", "AERON_TIMER_INTERVAL", "aeron.timer.interval",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(timer_interval_ns), "1s",
        "interval of the conductor's resource checks (liveness, linger, unblock)",
        .unit_ns = 1 },
    { "counters_free_to_reuse_timeout", "AERON_COUNTERS_FREE_TO_REUSE_TIMEOUT",
        "aeron.counters.free.to.reuse.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(counters_free_to_reuse_timeout_ns), "1s",
        "a freed counter id is reused only after this",
        .unit_ns = 1 },
    { "untethered_window_limit_timeout", "AERON_UNTETHERED_WINDOW_LIMIT_TIMEOUT",
        "aeron.untethered.window.limit.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(untethered_window_limit_timeout_ns), "5s",
        "an untethered subscriber behind the window this long is dropped",
        .unit_ns = 1 },
    { "untethered_resting_timeout", "AERON_UNTETHERED_RESTING_TIMEOUT", "aeron.untethered.resting.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(untethered_resting_timeout_ns), "10s",
        "a dropped untethered subscriber rejoins after this",
        .unit_ns = 1 },
    { "untethered_linger_timeout", "AERON_UNTETHERED_LINGER_TIMEOUT", "aeron.untethered.linger.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(untethered_linger_timeout_ns), "0",
        "a dropped untethered subscriber lingers this long before it rests (0: unset, the window-limit timeout)",
        .unit_ns = 1 },
    { "mdc_destination_timeout", "AERON_MDC_DESTINATION_TIMEOUT", "aeron.mdc.destination.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(mdc_destination_timeout_ns), "5s",
        "a dynamic multi-destination-cast destination without a status message this long is dropped (this driver's "
        "option; Aeron's timeout is a fixed 5 s)",
        .unit_ns = 1 },
    { "mdc_max_destinations", "AERON_MDC_MAX_DESTINATIONS", "aeron.mdc.max.destinations",
        AA_OPTION_INT32, AA_DRIVER_FIELD(mdc_max_destinations), "64",
        "ours: dynamic multi-destination-cast destinations one endpoint sends to at most; a status message from a "
        "new receiver beyond them is dropped and counted ('MDC destinations refused', docs/security.md)" },
    { "sender_max_receivers", "AERON_SENDER_MAX_RECEIVERS", "aeron.sender.max.receivers",
        AA_OPTION_INT32, AA_DRIVER_FIELD(sender_max_receivers), "1024",
        "ours: receivers (addresses that sent status messages) a network publication honours NAKs from; a new "
        "one beyond them gets no retransmits and is counted ('Receivers refused, publication full', docs/security.md)" },
    { "driver_timeout", "AERON_DRIVER_TIMEOUT", "aeron.driver.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(driver_timeout_ms), "10s",
        "a driver whose heartbeat is older than this is considered dead (also used to detect a live driver on start); "
        "one that closed, or whose process is gone, is dead at once",
        .unit_ns = 1000000 },
    { "tether_subscriptions", "AERON_TETHER_SUBSCRIPTIONS", "aeron.tether.subscriptions",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(tether_subscriptions), "true",
        "subscriptions hold publishers back (tether) unless their channel says tether=false" },
    { "rejoin_stream", "AERON_REJOIN_STREAM", "aeron.rejoin.stream",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(rejoin_stream), "true",
        "dropped subscribers may rejoin a stream" },
    { "reliable_stream", "AERON_RELIABLE_STREAM", "aeron.reliable.stream",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(reliable_stream), "true",
        "recover loss by NAK (false: fill gaps with padding)" },
    { "spies_simulate_connection", "AERON_SPIES_SIMULATE_CONNECTION", "aeron.spies.simulate.connection",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(spies_simulate_connection), "false",
        "spy subscriptions count as a connection" },
    { "publication_reserved_session_id_low", "AERON_PUBLICATION_RESERVED_SESSION_ID_LOW",
        "aeron.publication.reserved.session.id.low",
        AA_OPTION_INT32, AA_DRIVER_FIELD(publication_reserved_session_id_low), "-1",
        "low end of session ids never assigned automatically" },
    { "publication_reserved_session_id_high", "AERON_PUBLICATION_RESERVED_SESSION_ID_HIGH",
        "aeron.publication.reserved.session.id.high",
        AA_OPTION_INT32, AA_DRIVER_FIELD(publication_reserved_session_id_high), "1000",
        "high end of session ids never assigned automatically" },
    { "conductor_cycle_threshold", "AERON_CONDUCTOR_CYCLE_THRESHOLD", "aeron.conductor.cycle.threshold",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(conductor_cycle_threshold_ns), "1s",
        "conductor duty cycles longer than this are counted",
        .unit_ns = 1 },
    { "sender_cycle_threshold", "AERON_SENDER_CYCLE_THRESHOLD", "aeron.sender.cycle.threshold",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(sender_cycle_threshold_ns), "1s",
        "sender duty cycles longer than this are counted",
        .unit_ns = 1 },
    { "receiver_cycle_threshold", "AERON_RECEIVER_CYCLE_THRESHOLD", "aeron.receiver.cycle.threshold",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(receiver_cycle_threshold_ns), "1s",
        "receiver duty cycles longer than this are counted",
        .unit_ns = 1 },
    { "rcv_status_message_timeout", "AERON_RCV_STATUS_MESSAGE_TIMEOUT", "aeron.rcv.status.message.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(status_message_timeout_ns), "200ms",
        "a receiver sends a status message at least this often",
        .unit_ns = 1 },
    { "rcv_initial_window_length", "AERON_RCV_INITIAL_WINDOW_LENGTH", "aeron.rcv.initial.window.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(rcv_initial_window_length), "128k",
        "receiver window of UDP images (at most term/2 and SO_RCVBUF; rcv-wnd= per channel)" },
    /* what a receive channel endpoint takes from the network (docs/security.md, Network: receivers) */
    { "receiver_max_images", "AERON_RECEIVER_MAX_IMAGES", "aeron.receiver.max.images",
        AA_OPTION_INT32, AA_DRIVER_FIELD(receiver_max_images), "1000",
        "images a receive channel endpoint (one subscription channel) holds at most; SETUPs of further sessions are "
        "refused and counted (0 = no limit, as Aeron)" },
    { "receiver_max_sessions_per_stream", "AERON_RECEIVER_MAX_SESSIONS_PER_STREAM",
        "aeron.receiver.max.sessions.per.stream",
        AA_OPTION_INT32, AA_DRIVER_FIELD(receiver_max_sessions_per_stream), "0",
        "images one stream of a receive channel endpoint holds at most, so a flood on one stream leaves room for "
        "the others; SETUPs beyond it are refused and counted (0 = only AERON_RECEIVER_MAX_IMAGES applies)" },
    { "receiver_max_term_length", "AERON_RECEIVER_MAX_TERM_LENGTH", "aeron.receiver.max.term.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(receiver_max_term_length), "0",
        "longest term a SETUP may ask an image for (its log is 3 terms), a power of two from 64k to 1g; longer "
        "ones are refused and counted (0 = the larger of AERON_TERM_BUFFER_LENGTH and AERON_IPC_TERM_BUFFER_LENGTH)" },
    { "nak_unicast_delay", "AERON_NAK_UNICAST_DELAY", "aeron.nak.unicast.delay",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(nak_unicast_delay_ns), "100us",
        "a receiver NAKs a gap this long after seeing it (nak-delay= per channel)",
        .unit_ns = 1 },
    { "nak_unicast_retry_delay_ratio", "AERON_NAK_UNICAST_RETRY_DELAY_RATIO", "aeron.nak.unicast.retry.delay.ratio",
        AA_OPTION_INT32, AA_DRIVER_FIELD(nak_unicast_retry_delay_ratio), "100",
        "a gap still open is NAKed again after delay x this ratio" },
    { "retransmit_unicast_delay", "AERON_RETRANSMIT_UNICAST_DELAY", "aeron.retransmit.unicast.delay",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(retransmit_unicast_delay_ns), "0",
        "a sender resends this long after a NAK",
        .unit_ns = 1 },
    { "retransmit_unicast_linger", "AERON_RETRANSMIT_UNICAST_LINGER", "aeron.retransmit.unicast.linger",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(retransmit_unicast_linger_ns), "10ms",
        "a sender ignores NAKs for a range it just resent this long",
        .unit_ns = 1 },
    { "send_to_status_poll_ratio", "AERON_SEND_TO_STATUS_POLL_RATIO", "aeron.send.to.status.poll.ratio",
        AA_OPTION_INT32, AA_DRIVER_FIELD(send_to_status_poll_ratio), "6",
        "a busy sender reads status messages and NAKs every this many cycles" },
    { "cubiccongestioncontrol_measurertt", "AERON_CUBICCONGESTIONCONTROL_MEASURERTT",
        "aeron.CubicCongestionControl.measureRtt",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(cubic_congestion_control_measure_rtt), "false",
        "cc=cubic images measure the RTT with RTTM frames (cc=cubic,measure-rtt:true per channel)" },
    { "cubiccongestioncontrol_initialrtt", "AERON_CUBICCONGESTIONCONTROL_INITIALRTT",
        "aeron.CubicCongestionControl.initialRtt",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(cubic_congestion_control_initial_rtt_ns), "100us",
        "RTT cc=cubic assumes until one is measured (cc=cubic,initial-rtt:<duration> per channel)",
        .unit_ns = 1 },
    { "cubiccongestioncontrol_tcpmode", "AERON_CUBICCONGESTIONCONTROL_TCPMODE",
        "aeron.CubicCongestionControl.tcpMode",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(cubic_congestion_control_tcp_mode), "false",
        "cc=cubic grows at least as fast as TCP below the last window (cc=cubic,tcp-mode:true per channel)" },
    { "nak_multicast_max_backoff", "AERON_NAK_MULTICAST_MAX_BACKOFF", "aeron.nak.multicast.max.backoff",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(nak_multicast_max_backoff_ns), "10ms",
        "a receiver of a group image (multicast, or group=true) NAKs a gap after a random delay below this "
        "(reference 4.3), so one loss seen by many receivers brings few NAKs",
        .unit_ns = 1 },
    { "nak_multicast_group_size", "AERON_NAK_MULTICAST_GROUP_SIZE", "aeron.nak.multicast.group.size",
        AA_OPTION_INT32, AA_DRIVER_FIELD(nak_multicast_group_size), "10",
        "the number of receivers the random multicast NAK delay is shaped for (at least 1)" },
    { "max_resend", "AERON_MAX_RESEND", "aeron.max.resend",
        AA_OPTION_INT32, AA_DRIVER_FIELD(max_resend), "16",
        "retransmissions a multicast publication runs at once, 1 to 256 (max-resend= per channel); "
        "a NAK arriving when all are busy is dropped and counted as a retransmit pool overflow" },
    { "multicast_flow_control_strategy", "AERON_MULTICAST_FLOW_CONTROL_STRATEGY",
        "aeron.multicast.flow.control.strategy",
        AA_OPTION_STRING, AA_DRIVER_FIELD(multicast_flow_control_strategy), "max",
        "flow control of multicast publications without fc=, a registered name with its options "
        "(max: the fastest receiver paces the publication; min,g:/2: the slowest, once two are there)",
        .check = aa_flow_control_option_check },
    { "socket_so_rcvbuf", "AERON_SOCKET_SO_RCVBUF", "aeron.socket.so_rcvbuf",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(socket_so_rcvbuf), "128k",
        "SO_RCVBUF of UDP sockets whose channel has no so-rcvbuf (0 = OS default)" },
    { "socket_so_sndbuf", "AERON_SOCKET_SO_SNDBUF", "aeron.socket.so_sndbuf",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(socket_so_sndbuf), "0",
        "SO_SNDBUF of UDP sockets whose channel has no so-sndbuf (0 = OS default)" },
    { "socket_multicast_ttl", "AERON_SOCKET_MULTICAST_TTL", "aeron.socket.multicast.ttl",
        AA_OPTION_INT32, AA_DRIVER_FIELD(socket_multicast_ttl), "0",
        "multicast TTL of UDP channels without ttl, 0 to 255 (0 = OS default)" },
    { "name_resolver_supplier", "AERON_NAME_RESOLVER_SUPPLIER", "aeron.name.resolver.supplier",
        AA_OPTION_STRING, AA_DRIVER_FIELD(name_resolver_supplier), "default",
        "name resolver of the host names in UDP channels, by its name in the strategy registry",
        .check = aa_name_resolver_option_check },
    { "name_resolver_init_args", "AERON_NAME_RESOLVER_INIT_ARGS", "aeron.name.resolver.init.args",
        AA_OPTION_STRING, AA_DRIVER_FIELD(name_resolver_init_args), "",
        "arguments of the name resolver (the default takes none)" },
    { "unicast_flow_control_strategy", "AERON_UNICAST_FLOW_CONTROL_STRATEGY", "aeron.unicast.flow.control.strategy",
        AA_OPTION_STRING, AA_DRIVER_FIELD(unicast_flow_control_strategy), "unicast",
        "flow control of unicast publications without fc=, a registered name with its options (e.g. min,t:2s)",
        .check = aa_flow_control_option_check },
    { "flow_control_receiver_timeout", "AERON_FLOW_CONTROL_RECEIVER_TIMEOUT", "aeron.flow.control.receiver.timeout",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(flow_control_receiver_timeout_ns), "5s",
        "min and tagged flow control drop a receiver without status messages this long (t: per channel)",
        .unit_ns = 1 },
    { "flow_control_group_min_size", "AERON_FLOW_CONTROL_GROUP_MIN_SIZE", "aeron.flow.control.group.min.size",
        AA_OPTION_INT32, AA_DRIVER_FIELD(flow_control_group_min_size), "0",
        "min and tagged flow control: receivers needed before the publication is connected (g:/N per channel)" },
    { "flow_control_group_tag", "AERON_FLOW_CONTROL_GROUP_TAG", "aeron.flow.control.group.tag",
        AA_OPTION_INT64, AA_DRIVER_FIELD(flow_control_group_tag), "-1",
        "tagged flow control tracks the receivers sending this group tag (g:<tag> per channel)" },
    { "receiver_group_tag", "AERON_RECEIVER_GROUP_TAG", "aeron.receiver.group.tag",
        AA_OPTION_CUSTOM, AA_DRIVER_FIELD(receiver_group_tag), "",
        "group tag this driver's receivers send in their status messages (44-byte SMs) for tagged flow control, "
        "a 64-bit integer (gtag= per subscription; empty = none)",
        .parse = aa_receiver_group_tag_parse, .format = aa_receiver_group_tag_format },
    { "udp_receive_loss", "AERON_UDP_RECEIVE_LOSS", "aeron.udp.receive.loss",
        AA_OPTION_CUSTOM, AA_DRIVER_FIELD(udp_receive_loss), "",
        "testing only: drop, duplicate or reorder received UDP datagrams by frame type and rate, e.g. "
        "drop:data:0.05,dup:any:1% (see docs/loss-generator.md; empty = off)",
        .parse = aa_loss_option_parse, .format = aa_loss_option_format },
    { "udp_send_loss", "AERON_UDP_SEND_LOSS", "aeron.udp.send.loss",
        AA_OPTION_CUSTOM, AA_DRIVER_FIELD(udp_send_loss), "",
        "testing only: the same rules applied to UDP datagrams being sent (empty = off)",
        .parse = aa_loss_option_parse, .format = aa_loss_option_format },
    { "udp_loss_seed", "AERON_UDP_LOSS_SEED", "aeron.udp.loss.seed",
        AA_OPTION_INT64, AA_DRIVER_FIELD(udp_loss_seed), "0",
        "seed of the loss generator: the same seed and the same traffic lose the same datagrams" },
    /* driver-name (gossip) resolver (resolver/aa_driver_name_resolver.h, reference 8.2) */
    { "driver_resolver_name", "AERON_DRIVER_RESOLVER_NAME", "aeron.driver.resolver.name",
        AA_OPTION_STRING, AA_DRIVER_FIELD(driver_resolver_name), "",
        "this driver's name for the driver name resolver, what channels of other drivers name it by "
        "(empty = the host name)" },
    { "driver_resolver_interface", "AERON_DRIVER_RESOLVER_INTERFACE", "aeron.driver.resolver.interface",
        AA_OPTION_STRING, AA_DRIVER_FIELD(driver_resolver_interface), "",
        "host:port the driver name resolver binds its UDP socket to; setting it makes 'driver' the name resolver "
        "(a wildcard host such as 0.0.0.0 lets peers take the datagrams' source address; empty = off)" },
    { "driver_resolver_bootstrap_neighbor", "AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR",
        "aeron.driver.resolver.bootstrap.neighbor",
        AA_OPTION_STRING, AA_DRIVER_FIELD(driver_resolver_bootstrap_neighbor), "",
        "comma list of host:port of driver name resolvers to announce this driver to, every one of them "
        "(at most 20; host names are looked up with the default resolver, again every 10 s)" },
    /* whom the gossip resolver believes (docs/security.md, Name resolution (gossip)) */
    { "driver_resolver_allowed_networks", "AERON_DRIVER_RESOLVER_ALLOWED_NETWORKS",
        "aeron.driver.resolver.allowed.networks",
        AA_OPTION_STRING, AA_DRIVER_FIELD(driver_resolver_allowed_networks), "",
        "ours: comma list of networks (CIDR, IPv4 and IPv6, e.g. 10.0.0.0/8,fd00::/8) the driver name resolver "
        "takes resolution frames from, and names may point into; others are refused and counted (empty = every "
        "source, as Aeron)",
        .check = aa_cidr_option_check },
    { "driver_resolver_hmac_key_file", "AERON_DRIVER_RESOLVER_HMAC_KEY_FILE", "aeron.driver.resolver.hmac.key.file",
        AA_OPTION_STRING, AA_DRIVER_FIELD(driver_resolver_hmac_key_file), "",
        "ours: file (owner-only, 0400 or 0600; 16 to 1024 bytes) of a key shared by the drivers: resolution "
        "frames are signed with HMAC-SHA256 and unsigned or badly signed ones refused and counted; drivers with "
        "a key gossip only with drivers of ours holding the same key, not with Aeron's (empty = off)" },
    { "driver_resolver_cache_max_entries", "AERON_DRIVER_RESOLVER_CACHE_MAX_ENTRIES",
        "aeron.driver.resolver.cache.max.entries",
        AA_OPTION_INT32, AA_DRIVER_FIELD(driver_resolver_cache_max_entries), "1024",
        "ours: names the driver name resolver caches at most; beyond it new names are refused and counted, "
        "known ones still updated (0 = no cap)" },
    { "driver_resolver_neighbors_max", "AERON_DRIVER_RESOLVER_NEIGHBORS_MAX", "aeron.driver.resolver.neighbors.max",
        AA_OPTION_INT32, AA_DRIVER_FIELD(driver_resolver_neighbors_max), "256",
        "ours: neighbours the driver name resolver gossips with at most; beyond it new ones are refused and "
        "counted (0 = no cap)" },
    { "driver_resolver_gossip_rate_limit", "AERON_DRIVER_RESOLVER_GOSSIP_RATE_LIMIT",
        "aeron.driver.resolver.gossip.rate.limit",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(driver_resolver_gossip_rate_limit), "1m",
        "ours: bytes a second the driver name resolver forwards in cache gossip at most (2 s worth may go at "
        "once); frames beyond it are not sent and counted (0 = no limit)" },
    /* driver control (docs/architecture.md, Operations): TERMINATE_DRIVER's validation */
    { "driver_termination_validator", "AERON_DRIVER_TERMINATION_VALIDATOR", "aeron.driver.termination.validator",
        AA_OPTION_STRING, AA_DRIVER_FIELD(termination_validator), "deny",
        "who may stop this driver with a TERMINATE_DRIVER command (`aeron-async driver --terminate`): deny (nobody), "
        "allow (any request), token (a request carrying AERON_DRIVER_TERMINATION_TOKEN); refusals go to the error log" },
    { "driver_termination_token", "AERON_DRIVER_TERMINATION_TOKEN", "aeron.driver.termination.token",
        AA_OPTION_STRING, AA_DRIVER_FIELD(termination_token), "",
        "the token a TERMINATE_DRIVER request must carry with AERON_DRIVER_TERMINATION_VALIDATOR=token "
        "(never written to driver-options.properties)",
        .secret = true },
    { "driver_termination_token_file", "AERON_DRIVER_TERMINATION_TOKEN_FILE", "aeron.driver.termination.token.file",
        AA_OPTION_STRING, AA_DRIVER_FIELD(termination_token_file), "",
        "a file holding AERON_DRIVER_TERMINATION_TOKEN (its first line), so that the token is on no command line "
        "and in no environment; keep it mode 0600" },
    /* the loss report (docs/architecture.md, The loss report) */
    { "loss_report_buffer_length", "AERON_LOSS_REPORT_BUFFER_LENGTH", "aeron.loss.report.buffer.length",
        AA_OPTION_SIZE, AA_DRIVER_FIELD(loss_report_buffer_length), "1m",
        "length of the loss report file loss-report.dat (rounded up to AERON_FILE_PAGE_SIZE), where the receiver "
        "records the loss of every image; `aeron-async loss` reads it" },
    /* name resolution (docs/architecture.md, Name resolution) */
    { "driver_async_executor_threads", "AERON_DRIVER_ASYNC_EXECUTOR_THREADS", "aeron.driver.async.executor.threads",
        AA_OPTION_INT32, AA_DRIVER_FIELD(async_executor_threads), "1",
        "threads that look names of UDP channels up and resolve them, off the conductor, 1 to 64 (a channel by "
        "address never waits for them)" },
    { "driver_reresolution_check_interval", "AERON_DRIVER_RERESOLUTION_CHECK_INTERVAL",
        "aeron.driver.reresolution.check.interval",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(reresolution_check_interval_ns), "1s",
        "how often named endpoints and control addresses that fell silent (5 s without status messages, or "
        "without data) are resolved again; 0 disables re-resolution",
        .unit_ns = 1 },
    { "name_resolver_threshold", "AERON_NAME_RESOLVER_THRESHOLD", "aeron.name.resolver.threshold",
        AA_OPTION_DURATION, AA_DRIVER_FIELD(name_resolver_time_threshold_ns), "5s",
        "a name lookup that takes longer is counted in the 'Name resolver time threshold exceeded' system counter",
        .unit_ns = 1 },
    { "name_resolution_pending_allowed", "AERON_NAME_RESOLUTION_PENDING_ALLOWED",
        "aeron.name.resolution.pending.allowed",
        AA_OPTION_BOOL, AA_DRIVER_FIELD(name_resolution_pending_allowed), "false",
        "ours: a channel whose name does not resolve yet is registered anyway, not connected, and its name is "
        "retried every re-resolution check interval (each failure in the error log); false: an error, as Aeron" },
};

static const aa_options_table_t aa_driver_options_table =
{
    "driver", aa_driver_options, sizeof(aa_driver_options) / sizeof(aa_driver_options[0]),
    "65536, 64k, 16m", "500ms, 10s", "a 64-bit integer", "a 32-bit integer"
};

const aa_options_table_t *aa_driver_context_options(void)
{
    return &aa_driver_options_table;
}

int aa_driver_context_init(aa_driver_context_t *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->clock = aa_clock_system();
    return aa_options_init(&aa_driver_options_table, ctx);
}

int aa_driver_context_set(aa_driver_context_t *ctx, const char *name, const char *value)
{
    return aa_options_set(&aa_driver_options_table, ctx, name, value);
}

int aa_driver_context_get(const aa_driver_context_t *ctx, const char *name, char *value, size_t length)
{
    return aa_options_get(&aa_driver_options_table, ctx, name, value, length);
}

static int aa_check_mtu(const char *name, int64_t mtu, int64_t term_length)
{
    if (mtu < AA_DATA_HEADER_LENGTH * 2 || mtu > 65504 || 0 != (mtu % AA_LOGBUFFER_FRAME_ALIGNMENT))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%" PRId64 " must be a multiple of 32 between 64 and 65504",
            name, mtu);
        return -1;
    }
    if (mtu > term_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%" PRId64 " is longer than the term length %" PRId64,
            name, mtu, term_length);
        return -1;
    }
    return 0;
}

static int aa_config_error(const char *name)
{
    char cause[512];
    snprintf(cause, sizeof(cause), "%s", aa_errmsg());
    AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: %s", name, cause);
    return -1;
}

int64_t aa_driver_context_untethered_linger_timeout_ns(const aa_driver_context_t *ctx)
{
    return ctx->untethered_linger_timeout_ns > 0 ? ctx->untethered_linger_timeout_ns : ctx->untethered_window_limit_timeout_ns;
}

int aa_driver_context_validate(aa_driver_context_t *ctx)
{
    if (aa_logbuffer_check_term_length(ctx->term_buffer_length) < 0)
    {
        return aa_config_error("AERON_TERM_BUFFER_LENGTH");
    }
    if (aa_logbuffer_check_term_length(ctx->ipc_term_buffer_length) < 0)
    {
        return aa_config_error("AERON_IPC_TERM_BUFFER_LENGTH");
    }
    if (aa_logbuffer_check_page_size(ctx->file_page_size) < 0)
    {
        return aa_config_error("AERON_FILE_PAGE_SIZE");
    }
    if (0 != ctx->receiver_max_term_length && aa_logbuffer_check_term_length(ctx->receiver_max_term_length) < 0)
    {
        return aa_config_error("AERON_RECEIVER_MAX_TERM_LENGTH (0 = the larger of the configured term lengths)");
    }
    if (ctx->receiver_max_images < 0 || ctx->receiver_max_sessions_per_stream < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_RECEIVER_MAX_IMAGES=%" PRId32 " and AERON_RECEIVER_MAX_SESSIONS_PER_STREAM=%" PRId32
            " must be at least 0 (0 = no limit)", ctx->receiver_max_images, ctx->receiver_max_sessions_per_stream);
        return -1;
    }
    if (aa_check_mtu("AERON_MTU_LENGTH", ctx->mtu_length, ctx->term_buffer_length) < 0 ||
        aa_check_mtu("AERON_IPC_MTU_LENGTH", ctx->ipc_mtu_length, ctx->ipc_term_buffer_length) < 0)
    {
        return -1;
    }
    if (ctx->async_executor_threads < 1 || ctx->async_executor_threads > 64)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_DRIVER_ASYNC_EXECUTOR_THREADS=%d: give 1 to 64 threads for name lookups", ctx->async_executor_threads);
        return -1;
    }
    if (ctx->reresolution_check_interval_ns < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "AERON_DRIVER_RERESOLUTION_CHECK_INTERVAL must be 0 (off) or a positive duration, e.g. 1s");
        return -1;
    }
    int64_t rb_capacity = ctx->to_driver_buffer_length - AA_RB_TRAILER_LENGTH;
    if (rb_capacity < 1024 || !AA_IS_POWER_OF_TWO(rb_capacity))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_CONDUCTOR_BUFFER_LENGTH=%" PRId64 " must be a power of two (at least 1024) plus %d",
            ctx->to_driver_buffer_length, AA_RB_TRAILER_LENGTH);
        return -1;
    }
    int64_t bc_capacity = ctx->to_clients_buffer_length - AA_BROADCAST_BUFFER_TRAILER_LENGTH;
    if (bc_capacity < 1024 || !AA_IS_POWER_OF_TWO(bc_capacity))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_CLIENTS_BUFFER_LENGTH=%" PRId64 " must be a power of two (at least 1024) plus %d",
            ctx->to_clients_buffer_length, AA_BROADCAST_BUFFER_TRAILER_LENGTH);
        return -1;
    }
    if (ctx->counters_values_buffer_length < 4096 || 0 != (ctx->counters_values_buffer_length % 128) ||
        ctx->counters_values_buffer_length > 500 * 1024 * 1024 / 4)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_COUNTERS_BUFFER_LENGTH=%" PRId64 " must be a multiple of 128 between 4096 and 125m",
            ctx->counters_values_buffer_length);
        return -1;
    }
    if (ctx->error_buffer_length < 4096 || 0 != (ctx->error_buffer_length % 8))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "AERON_ERROR_BUFFER_LENGTH=%" PRId64 " must be a multiple of 8, at least 4096",
            ctx->error_buffer_length);
        return -1;
    }
    if (ctx->loss_report_buffer_length < 1024 || ctx->loss_report_buffer_length > INT32_MAX)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_LOSS_REPORT_BUFFER_LENGTH=%" PRId64 " must be from 1k to 2g (default 1m)",
            ctx->loss_report_buffer_length);
        return -1;
    }
    if (ctx->socket_so_rcvbuf > INT32_MAX || ctx->socket_so_sndbuf > INT32_MAX)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_SOCKET_SO_RCVBUF=%" PRId64 " and AERON_SOCKET_SO_SNDBUF=%" PRId64 " must be below 2g",
            ctx->socket_so_rcvbuf, ctx->socket_so_sndbuf);
        return -1;
    }
    if (ctx->socket_multicast_ttl < 0 || ctx->socket_multicast_ttl > 255)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "AERON_SOCKET_MULTICAST_TTL=%" PRId32 " must be from 0 to 255",
            ctx->socket_multicast_ttl);
        return -1;
    }
    if (ctx->flow_control_group_min_size < 0 || ctx->flow_control_receiver_timeout_ns <= 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_FLOW_CONTROL_GROUP_MIN_SIZE=%" PRId32 " must be at least 0 and AERON_FLOW_CONTROL_RECEIVER_TIMEOUT "
            "above 0 (e.g. 5s)", ctx->flow_control_group_min_size);
        return -1;
    }
    if (ctx->mdc_destination_timeout_ns <= 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "AERON_MDC_DESTINATION_TIMEOUT must be positive (e.g. 5s, the default)");
        return -1;
    }
    if (ctx->mdc_max_destinations < 1 || ctx->sender_max_receivers < 1)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_MDC_MAX_DESTINATIONS=%" PRId32 " and AERON_SENDER_MAX_RECEIVERS=%" PRId32 " must be at least 1 "
            "(the defaults are 64 and 1024)", ctx->mdc_max_destinations, ctx->sender_max_receivers);
        return -1;
    }
    if (ctx->status_message_timeout_ns <= 0 || ctx->nak_unicast_retry_delay_ratio < 1 ||
        ctx->send_to_status_poll_ratio < 1)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "AERON_RCV_STATUS_MESSAGE_TIMEOUT must be positive, AERON_NAK_UNICAST_RETRY_DELAY_RATIO and "
            "AERON_SEND_TO_STATUS_POLL_RATIO at least 1");
        return -1;
    }
    if (ctx->cubic_congestion_control_initial_rtt_ns <= 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_CUBICCONGESTIONCONTROL_INITIALRTT=%" PRId64 "ns must be above 0 (e.g. 100us)",
            ctx->cubic_congestion_control_initial_rtt_ns);
        return -1;
    }
    if (ctx->nak_multicast_max_backoff_ns <= 0 || ctx->nak_multicast_group_size < 1)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_NAK_MULTICAST_MAX_BACKOFF=%" PRId64 "ns must be positive and AERON_NAK_MULTICAST_GROUP_SIZE=%" PRId32
            " at least 1", ctx->nak_multicast_max_backoff_ns, ctx->nak_multicast_group_size);
        return -1;
    }
    if (ctx->max_resend < 1 || ctx->max_resend > 256)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "AERON_MAX_RESEND=%" PRId32 " must be from 1 to 256", ctx->max_resend);
        return -1;
    }
    if ('\0' == ctx->multicast_flow_control_strategy[0])
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "AERON_MULTICAST_FLOW_CONTROL_STRATEGY is empty; name a registered flow control strategy (e.g. max)");
        return -1;
    }
    if (ctx->rcv_initial_window_length < 256 || ctx->rcv_initial_window_length > INT32_MAX ||
        (ctx->socket_so_rcvbuf > 0 && ctx->rcv_initial_window_length > ctx->socket_so_rcvbuf))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_RCV_INITIAL_WINDOW_LENGTH=%" PRId64 " must be at least 256 and at most AERON_SOCKET_SO_RCVBUF=%" PRId64,
            ctx->rcv_initial_window_length, ctx->socket_so_rcvbuf);
        return -1;
    }
    if (ctx->publication_term_window_length < 0 || ctx->publication_term_window_length > ctx->term_buffer_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_PUBLICATION_TERM_WINDOW_LENGTH=%" PRId64 " must be between 0 and the term length",
            ctx->publication_term_window_length);
        return -1;
    }
    if (ctx->ipc_publication_term_window_length < 0 || ctx->ipc_publication_term_window_length > ctx->ipc_term_buffer_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_IPC_PUBLICATION_TERM_WINDOW_LENGTH=%" PRId64 " must be between 0 and the IPC term length",
            ctx->ipc_publication_term_window_length);
        return -1;
    }
    if (aa_driver_context_load_termination_token(ctx) < 0 || aa_driver_context_check_termination(ctx) < 0)
    {
        return -1;
    }
    return 0;
}

int32_t aa_driver_context_receiver_max_term_length(const aa_driver_context_t *ctx)
{
    int64_t length = ctx->receiver_max_term_length;
    if (0 == length)
    {
        length = ctx->term_buffer_length > ctx->ipc_term_buffer_length ? ctx->term_buffer_length : ctx->ipc_term_buffer_length;
    }
    return (int32_t)(length < AA_LOGBUFFER_TERM_MAX_LENGTH ? length : AA_LOGBUFFER_TERM_MAX_LENGTH);
}

/* driver control (docs/architecture.md, Operations) */

aa_termination_validator_t aa_driver_context_termination_validator(const aa_driver_context_t *ctx)
{
    if (0 == strcasecmp(ctx->termination_validator, "allow"))
    {
        return AA_TERMINATION_ALLOW;
    }
    if (0 == strcasecmp(ctx->termination_validator, "token"))
    {
        return AA_TERMINATION_TOKEN;
    }
    return AA_TERMINATION_DENY;
}

int aa_driver_context_load_termination_token(aa_driver_context_t *ctx)
{
    if ('\0' == ctx->termination_token_file[0])
    {
        return 0;
    }
    char token[sizeof(ctx->termination_token)];
    if (aa_secret_file_first_line("AERON_DRIVER_TERMINATION_TOKEN_FILE", ctx->termination_token_file, token,
        sizeof(token)) < 0)
    {
        return -1;
    }
    /* validated again (the Python context, then the driver): the token read the first time is no conflict */
    if ('\0' != ctx->termination_token[0] && 0 != strcmp(ctx->termination_token, token))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "AERON_DRIVER_TERMINATION_TOKEN and AERON_DRIVER_TERMINATION_TOKEN_FILE are both set; set one of them "
            "(the file keeps the token off command lines and out of the environment)");
        return -1;
    }
    snprintf(ctx->termination_token, sizeof(ctx->termination_token), "%s", token);
    return 0;
}

int aa_driver_context_check_termination(const aa_driver_context_t *ctx)
{
    const char *v = ctx->termination_validator;
    if (0 != strcasecmp(v, "deny") && 0 != strcasecmp(v, "allow") && 0 != strcasecmp(v, "token"))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_DRIVER_TERMINATION_VALIDATOR=%s is not a termination validator; use deny (the default), allow or "
            "token (with AERON_DRIVER_TERMINATION_TOKEN)", v);
        return -1;
    }
    bool has_token = '\0' != ctx->termination_token[0];
    if (AA_TERMINATION_TOKEN == aa_driver_context_termination_validator(ctx) && !has_token)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "AERON_DRIVER_TERMINATION_VALIDATOR=token needs AERON_DRIVER_TERMINATION_TOKEN, the token a request must "
            "carry; set it, best from a file (AERON_DRIVER_TERMINATION_TOKEN_FILE=<path>) so that it is on no "
            "command line");
        return -1;
    }
    if (AA_TERMINATION_TOKEN != aa_driver_context_termination_validator(ctx) && has_token)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_DRIVER_TERMINATION_TOKEN is set but AERON_DRIVER_TERMINATION_VALIDATOR=%s does not use it; set "
            "AERON_DRIVER_TERMINATION_VALIDATOR=token to accept requests carrying it, or unset the token", v);
        return -1;
    }
    return 0;
}

int aa_driver_context_write_options(const aa_driver_context_t *ctx, FILE *out)
{
    return aa_options_write(&aa_driver_options_table, ctx, out);
}
