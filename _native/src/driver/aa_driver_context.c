#include <ctype.h>
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
#include "util/aa_error.h"
#include "util/aa_parse.h"
#include "util/aa_fs.h"
#include "util/aa_registry.h"
#include "media/aa_udp_channel.h"
#include "protocols/aa_flow_control.h"

typedef enum aa_option_kind_enum
{
    AA_OPT_STRING,
    AA_OPT_DIR,
    AA_OPT_IDLE,
    AA_OPT_NAME_RESOLVER,
    AA_OPT_BOOL,
    AA_OPT_SIZE,
    AA_OPT_INT32,
    AA_OPT_INT64,
    AA_OPT_LOSS,
    AA_OPT_DURATION_NS,
    AA_OPT_DURATION_MS,
    AA_OPT_THREADING_MODE,
    AA_OPT_FLOW_CONTROL,        /* a flow control strategy of the registry with its options */
    AA_OPT_RECEIVER_GROUP_TAG   /* "" = none, else a 64-bit integer (has_receiver_group_tag says which) */
}
aa_option_kind_t;

typedef struct aa_driver_option_stct
{
    const char *env_name;
    const char *property_name;
    aa_option_kind_t kind;
    size_t offset;
    size_t size;
    const char *default_value;
    const char *description;
}
aa_driver_option_t;

#define AA_FIELD(f) offsetof(aa_driver_context_t, f), sizeof(((aa_driver_context_t *)0)->f)

static const aa_driver_option_t aa_driver_options[] =
{
    { "AERON_DIR", "aeron.dir", AA_OPT_DIR, AA_FIELD(aeron_dir), "",
        "directory of the CnC file and log buffers (default /dev/shm/aeron-<user>)" },
    { "AERON_DIR_DELETE_ON_START", "aeron.dir.delete.on.start", AA_OPT_BOOL, AA_FIELD(dir_delete_on_start), "false",
        "delete the aeron directory on start even if a driver there looks alive" },
    { "AERON_DIR_DELETE_ON_SHUTDOWN", "aeron.dir.delete.on.shutdown", AA_OPT_BOOL, AA_FIELD(dir_delete_on_shutdown),
        "false", "delete the aeron directory when the driver closes" },
    { "AERON_THREADING_MODE", "aeron.threading.mode", AA_OPT_THREADING_MODE, AA_FIELD(threading_mode), "DEDICATED",
        "DEDICATED, SHARED_NETWORK, SHARED or INVOKER" },
    { "AERON_CONDUCTOR_IDLE_STRATEGY", "aeron.conductor.idle.strategy", AA_OPT_IDLE,
        AA_FIELD(conductor_idle_strategy), "backoff", "idle strategy of the conductor agent" },
    { "AERON_SENDER_IDLE_STRATEGY", "aeron.sender.idle.strategy", AA_OPT_IDLE, AA_FIELD(sender_idle_strategy),
        "backoff", "idle strategy of the sender agent (DEDICATED)" },
    { "AERON_RECEIVER_IDLE_STRATEGY", "aeron.receiver.idle.strategy", AA_OPT_IDLE, AA_FIELD(receiver_idle_strategy),
        "backoff", "idle strategy of the receiver agent (DEDICATED)" },
    { "AERON_SHAREDNETWORK_IDLE_STRATEGY", "aeron.sharednetwork.idle.strategy", AA_OPT_IDLE,
        AA_FIELD(shared_network_idle_strategy), "backoff", "idle strategy of the sender+receiver thread (SHARED_NETWORK)" },
    { "AERON_SHARED_IDLE_STRATEGY", "aeron.shared.idle.strategy", AA_OPT_IDLE, AA_FIELD(shared_idle_strategy),
        "backoff", "idle strategy of the single driver thread (SHARED)" },
    { "AERON_TERM_BUFFER_LENGTH", "aeron.term.buffer.length", AA_OPT_SIZE, AA_FIELD(term_buffer_length), "16m",
        "term length of network publications, a power of two from 64k to 1g" },
    { "AERON_IPC_TERM_BUFFER_LENGTH", "aeron.ipc.term.buffer.length", AA_OPT_SIZE, AA_FIELD(ipc_term_buffer_length),
        "64m", "term length of IPC publications, a power of two from 64k to 1g" },
    { "AERON_TERM_BUFFER_SPARSE_FILE", "aeron.term.buffer.sparse.file", AA_OPT_BOOL,
        AA_FIELD(term_buffer_sparse_file), "false", "create log buffers as sparse files (no up-front allocation)" },
    { "AERON_MTU_LENGTH", "aeron.mtu.length", AA_OPT_SIZE, AA_FIELD(mtu_length), "1408",
        "maximum datagram length of network publications, a multiple of 32" },
    { "AERON_IPC_MTU_LENGTH", "aeron.ipc.mtu.length", AA_OPT_SIZE, AA_FIELD(ipc_mtu_length), "1408",
        "maximum frame length of IPC publications, a multiple of 32" },
    { "AERON_PUBLICATION_TERM_WINDOW_LENGTH", "aeron.publication.term.window.length", AA_OPT_SIZE,
        AA_FIELD(publication_term_window_length), "0", "how far a network publisher may run ahead (0 = term/2)" },
    { "AERON_IPC_PUBLICATION_TERM_WINDOW_LENGTH", "aeron.ipc.publication.term.window.length", AA_OPT_SIZE,
        AA_FIELD(ipc_publication_term_window_length), "0", "how far an IPC publisher may run ahead (0 = term/2)" },
    { "AERON_FILE_PAGE_SIZE", "aeron.file.page.size", AA_OPT_SIZE, AA_FIELD(file_page_size), "4k",
        "page size log buffer files are aligned to" },
    { "AERON_PERFORM_STORAGE_CHECKS", "aeron.perform.storage.checks", AA_OPT_BOOL,
        AA_FIELD(perform_storage_checks), "true", "check free space before creating a log buffer" },
    { "AERON_LOW_FILE_STORE_WARNING_THRESHOLD", "aeron.low.file.store.warning.threshold", AA_OPT_SIZE,
        AA_FIELD(low_file_store_warning_threshold), "160m", "free space below which a warning is logged" },
    { "AERON_CONDUCTOR_BUFFER_LENGTH", "aeron.conductor.buffer.length", AA_OPT_SIZE,
        AA_FIELD(to_driver_buffer_length), "1049344", "to-driver ring buffer: capacity (power of two) + 768" },
    { "AERON_CLIENTS_BUFFER_LENGTH", "aeron.clients.buffer.length", AA_OPT_SIZE, AA_FIELD(to_clients_buffer_length),
        "1048704", "to-clients broadcast buffer: capacity (power of two) + 128" },
    { "AERON_COUNTERS_BUFFER_LENGTH", "aeron.counters.buffer.length", AA_OPT_SIZE,
        AA_FIELD(counters_values_buffer_length), "1m", "counter values buffer (metadata is 4x this)" },
    { "AERON_ERROR_BUFFER_LENGTH", "aeron.error.buffer.length", AA_OPT_SIZE, AA_FIELD(error_buffer_length), "1m",
        "distinct error log length" },
    { "AERON_CLIENT_LIVENESS_TIMEOUT", "aeron.client.liveness.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(client_liveness_timeout_ns), "10s", "a client silent this long is timed out and its resources reclaimed" },
    { "AERON_PUBLICATION_LINGER_TIMEOUT", "aeron.publication.linger.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(publication_linger_timeout_ns), "5s", "how long a drained publication lingers before removal" },
    { "AERON_PUBLICATION_UNBLOCK_TIMEOUT", "aeron.publication.unblock.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(publication_unblock_timeout_ns), "15s", "unblock a publication whose writer died mid-claim after this" },
    { "AERON_PUBLICATION_CONNECTION_TIMEOUT", "aeron.publication.connection.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(publication_connection_timeout_ns), "5s", "a network publication without status messages this long is not connected" },
    { "AERON_IMAGE_LIVENESS_TIMEOUT", "aeron.image.liveness.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(image_liveness_timeout_ns), "10s", "an image without data or heartbeats this long is removed" },
    { "AERON_TIMER_INTERVAL", "aeron.timer.interval", AA_OPT_DURATION_NS, AA_FIELD(timer_interval_ns), "1s",
        "interval of the conductor's resource checks (liveness, linger, unblock)" },
    { "AERON_COUNTERS_FREE_TO_REUSE_TIMEOUT", "aeron.counters.free.to.reuse.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(counters_free_to_reuse_timeout_ns), "1s", "a freed counter id is reused only after this" },
    { "AERON_UNTETHERED_WINDOW_LIMIT_TIMEOUT", "aeron.untethered.window.limit.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(untethered_window_limit_timeout_ns), "5s", "an untethered subscriber behind the window this long is dropped" },
    { "AERON_UNTETHERED_RESTING_TIMEOUT", "aeron.untethered.resting.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(untethered_resting_timeout_ns), "10s", "a dropped untethered subscriber rejoins after this" },
    { "AERON_MDC_DESTINATION_TIMEOUT", "aeron.mdc.destination.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(mdc_destination_timeout_ns), "5s",
        "a dynamic multi-destination-cast destination without a status message this long is dropped (this driver's "
        "option; Aeron's timeout is a fixed 5 s)" },
    { "AERON_DRIVER_TIMEOUT", "aeron.driver.timeout", AA_OPT_DURATION_MS, AA_FIELD(driver_timeout_ms), "10s",
        "a driver whose heartbeat is older than this is considered dead (also used to detect a live driver on start); "
        "one that closed, or whose process is gone, is dead at once" },
    { "AERON_TETHER_SUBSCRIPTIONS", "aeron.tether.subscriptions", AA_OPT_BOOL, AA_FIELD(tether_subscriptions), "true",
        "IPC and spy subscriptions hold publishers back (tether) unless their channel says "
        "tether=false; network subscriptions are always tethered here, so with false they must say tether=true" },
    { "AERON_REJOIN_STREAM", "aeron.rejoin.stream", AA_OPT_BOOL, AA_FIELD(rejoin_stream), "true",
        "dropped subscribers may rejoin a stream" },
    { "AERON_RELIABLE_STREAM", "aeron.reliable.stream", AA_OPT_BOOL, AA_FIELD(reliable_stream), "true",
        "recover loss by NAK (false: fill gaps with padding)" },
    { "AERON_SPIES_SIMULATE_CONNECTION", "aeron.spies.simulate.connection", AA_OPT_BOOL,
        AA_FIELD(spies_simulate_connection), "false", "spy subscriptions count as a connection" },
    { "AERON_PUBLICATION_RESERVED_SESSION_ID_LOW", "aeron.publication.reserved.session.id.low", AA_OPT_INT32,
        AA_FIELD(publication_reserved_session_id_low), "-1", "low end of session ids never assigned automatically" },
    { "AERON_PUBLICATION_RESERVED_SESSION_ID_HIGH", "aeron.publication.reserved.session.id.high", AA_OPT_INT32,
        AA_FIELD(publication_reserved_session_id_high), "1000", "high end of session ids never assigned automatically" },
    { "AERON_CONDUCTOR_CYCLE_THRESHOLD", "aeron.conductor.cycle.threshold", AA_OPT_DURATION_NS,
        AA_FIELD(conductor_cycle_threshold_ns), "1s", "conductor duty cycles longer than this are counted" },
    { "AERON_SENDER_CYCLE_THRESHOLD", "aeron.sender.cycle.threshold", AA_OPT_DURATION_NS,
        AA_FIELD(sender_cycle_threshold_ns), "1s", "sender duty cycles longer than this are counted" },
    { "AERON_RECEIVER_CYCLE_THRESHOLD", "aeron.receiver.cycle.threshold", AA_OPT_DURATION_NS,
        AA_FIELD(receiver_cycle_threshold_ns), "1s", "receiver duty cycles longer than this are counted" },
    { "AERON_RCV_STATUS_MESSAGE_TIMEOUT", "aeron.rcv.status.message.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(status_message_timeout_ns), "200ms", "a receiver sends a status message at least this often" },
    { "AERON_RCV_INITIAL_WINDOW_LENGTH", "aeron.rcv.initial.window.length", AA_OPT_SIZE,
        AA_FIELD(rcv_initial_window_length), "128k",
        "receiver window of UDP images (at most term/2 and SO_RCVBUF; rcv-wnd= per channel)" },
    { "AERON_NAK_UNICAST_DELAY", "aeron.nak.unicast.delay", AA_OPT_DURATION_NS, AA_FIELD(nak_unicast_delay_ns),
        "100us", "a receiver NAKs a gap this long after seeing it (nak-delay= per channel)" },
    { "AERON_NAK_UNICAST_RETRY_DELAY_RATIO", "aeron.nak.unicast.retry.delay.ratio", AA_OPT_INT32,
        AA_FIELD(nak_unicast_retry_delay_ratio), "100", "a gap still open is NAKed again after delay x this ratio" },
    { "AERON_RETRANSMIT_UNICAST_DELAY", "aeron.retransmit.unicast.delay", AA_OPT_DURATION_NS,
        AA_FIELD(retransmit_unicast_delay_ns), "0", "a sender resends this long after a NAK" },
    { "AERON_RETRANSMIT_UNICAST_LINGER", "aeron.retransmit.unicast.linger", AA_OPT_DURATION_NS,
        AA_FIELD(retransmit_unicast_linger_ns), "10ms", "a sender ignores NAKs for a range it just resent this long" },
    { "AERON_SEND_TO_STATUS_POLL_RATIO", "aeron.send.to.status.poll.ratio", AA_OPT_INT32,
        AA_FIELD(send_to_status_poll_ratio), "6", "a busy sender reads status messages and NAKs every this many cycles" },
    { "AERON_CUBICCONGESTIONCONTROL_MEASURERTT", "aeron.CubicCongestionControl.measureRtt", AA_OPT_BOOL,
        AA_FIELD(cubic_congestion_control_measure_rtt), "false",
        "cc=cubic images measure the RTT with RTTM frames (cc=cubic,measure-rtt:true per channel)" },
    { "AERON_CUBICCONGESTIONCONTROL_INITIALRTT", "aeron.CubicCongestionControl.initialRtt", AA_OPT_DURATION_NS,
        AA_FIELD(cubic_congestion_control_initial_rtt_ns), "100us",
        "RTT cc=cubic assumes until one is measured (cc=cubic,initial-rtt:<duration> per channel)" },
    { "AERON_CUBICCONGESTIONCONTROL_TCPMODE", "aeron.CubicCongestionControl.tcpMode", AA_OPT_BOOL,
        AA_FIELD(cubic_congestion_control_tcp_mode), "false",
        "cc=cubic grows at least as fast as TCP below the last window (cc=cubic,tcp-mode:true per channel)" },
    { "AERON_NAK_MULTICAST_MAX_BACKOFF", "aeron.nak.multicast.max.backoff", AA_OPT_DURATION_NS,
        AA_FIELD(nak_multicast_max_backoff_ns), "10ms",
        "a receiver of a group image (multicast, or group=true) NAKs a gap after a random delay below this "
        "(reference 4.3), so one loss seen by many receivers brings few NAKs" },
    { "AERON_NAK_MULTICAST_GROUP_SIZE", "aeron.nak.multicast.group.size", AA_OPT_INT32,
        AA_FIELD(nak_multicast_group_size), "10",
        "the number of receivers the random multicast NAK delay is shaped for (at least 1)" },
    { "AERON_MAX_RESEND", "aeron.max.resend", AA_OPT_INT32, AA_FIELD(max_resend), "16",
        "retransmissions a multicast publication runs at once, 1 to 256 (max-resend= per channel); "
        "a NAK arriving when all are busy is dropped and counted as a retransmit pool overflow" },
    { "AERON_MULTICAST_FLOW_CONTROL_STRATEGY", "aeron.multicast.flow.control.strategy", AA_OPT_FLOW_CONTROL,
        AA_FIELD(multicast_flow_control_strategy), "max",
        "flow control of multicast publications without fc=, a registered name with its options "
        "(max: the fastest receiver paces the publication; min,g:/2: the slowest, once two are there)" },
    { "AERON_SOCKET_SO_RCVBUF", "aeron.socket.so_rcvbuf", AA_OPT_SIZE, AA_FIELD(socket_so_rcvbuf), "128k",
        "SO_RCVBUF of UDP sockets whose channel has no so-rcvbuf (0 = OS default)" },
    { "AERON_SOCKET_SO_SNDBUF", "aeron.socket.so_sndbuf", AA_OPT_SIZE, AA_FIELD(socket_so_sndbuf), "0",
        "SO_SNDBUF of UDP sockets whose channel has no so-sndbuf (0 = OS default)" },
    { "AERON_SOCKET_MULTICAST_TTL", "aeron.socket.multicast.ttl", AA_OPT_INT32, AA_FIELD(socket_multicast_ttl), "0",
        "multicast TTL of UDP channels without ttl, 0 to 255 (0 = OS default)" },
    { "AERON_NAME_RESOLVER_SUPPLIER", "aeron.name.resolver.supplier", AA_OPT_NAME_RESOLVER,
        AA_FIELD(name_resolver_supplier), "default",
        "name resolver of the host names in UDP channels, by its name in the strategy registry" },
    { "AERON_NAME_RESOLVER_INIT_ARGS", "aeron.name.resolver.init.args", AA_OPT_STRING,
        AA_FIELD(name_resolver_init_args), "", "arguments of the name resolver (the default takes none)" },
    { "AERON_UNICAST_FLOW_CONTROL_STRATEGY", "aeron.unicast.flow.control.strategy", AA_OPT_FLOW_CONTROL,
        AA_FIELD(unicast_flow_control_strategy), "unicast",
        "flow control of unicast publications without fc=, a registered name with its options (e.g. min,t:2s)" },
    { "AERON_FLOW_CONTROL_RECEIVER_TIMEOUT", "aeron.flow.control.receiver.timeout", AA_OPT_DURATION_NS,
        AA_FIELD(flow_control_receiver_timeout_ns), "5s",
        "min and tagged flow control drop a receiver without status messages this long (t: per channel)" },
    { "AERON_FLOW_CONTROL_GROUP_MIN_SIZE", "aeron.flow.control.group.min.size", AA_OPT_INT32,
        AA_FIELD(flow_control_group_min_size), "0",
        "min and tagged flow control: receivers needed before the publication is connected (g:/N per channel)" },
    { "AERON_FLOW_CONTROL_GROUP_TAG", "aeron.flow.control.group.tag", AA_OPT_INT64, AA_FIELD(flow_control_group_tag),
        "-1", "tagged flow control tracks the receivers sending this group tag (g:<tag> per channel)" },
    { "AERON_RECEIVER_GROUP_TAG", "aeron.receiver.group.tag", AA_OPT_RECEIVER_GROUP_TAG, AA_FIELD(receiver_group_tag), "",
        "group tag this driver's receivers send in their status messages (44-byte SMs) for tagged flow control, "
        "a 64-bit integer (gtag= per subscription; empty = none)" },
    { "AERON_UDP_RECEIVE_LOSS", "aeron.udp.receive.loss", AA_OPT_LOSS, AA_FIELD(udp_receive_loss), "",
        "testing only: drop, duplicate or reorder received UDP datagrams by frame type and rate, e.g. "
        "drop:data:0.05,dup:any:1% (see docs/loss-generator.md; empty = off)" },
    { "AERON_UDP_SEND_LOSS", "aeron.udp.send.loss", AA_OPT_LOSS, AA_FIELD(udp_send_loss), "",
        "testing only: the same rules applied to UDP datagrams being sent (empty = off)" },
    { "AERON_UDP_LOSS_SEED", "aeron.udp.loss.seed", AA_OPT_INT64, AA_FIELD(udp_loss_seed), "0",
        "seed of the loss generator: the same seed and the same traffic lose the same datagrams" },
    /* driver-name (gossip) resolver (resolver/aa_driver_name_resolver.h, reference 8.2) */
    { "AERON_DRIVER_RESOLVER_NAME", "aeron.driver.resolver.name", AA_OPT_STRING, AA_FIELD(driver_resolver_name), "",
        "this driver's name for the driver name resolver, what channels of other drivers name it by "
        "(empty = the host name)" },
    { "AERON_DRIVER_RESOLVER_INTERFACE", "aeron.driver.resolver.interface", AA_OPT_STRING,
        AA_FIELD(driver_resolver_interface), "",
        "host:port the driver name resolver binds its UDP socket to; setting it makes 'driver' the name resolver "
        "(a wildcard host such as 0.0.0.0 lets peers take the datagrams' source address; empty = off)" },
    { "AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR", "aeron.driver.resolver.bootstrap.neighbor", AA_OPT_STRING,
        AA_FIELD(driver_resolver_bootstrap_neighbor), "",
        "comma list of host:port of driver name resolvers to announce this driver to, every one of them "
        "(at most 20; host names are looked up with the default resolver, again every 10 s)" },
    /* ---- driver control (docs/architecture.md, "Operations"): TERMINATE_DRIVER's validation ---- */
    { "AERON_DRIVER_TERMINATION_VALIDATOR", "aeron.driver.termination.validator", AA_OPT_STRING,
        AA_FIELD(termination_validator), "deny",
        "who may stop this driver with a TERMINATE_DRIVER command (`aeron-async driver --terminate`): deny (nobody), "
        "allow (any request), token (a request carrying AERON_DRIVER_TERMINATION_TOKEN); refusals go to the error log" },
    { "AERON_DRIVER_TERMINATION_TOKEN", "aeron.driver.termination.token", AA_OPT_STRING,
        AA_FIELD(termination_token), "",
        "the token a TERMINATE_DRIVER request must carry with AERON_DRIVER_TERMINATION_VALIDATOR=token "
        "(never written to driver-options.properties)" },
    /* the loss report (docs/architecture.md, "The loss report") */
    { "AERON_LOSS_REPORT_BUFFER_LENGTH", "aeron.loss.report.buffer.length", AA_OPT_SIZE,
        AA_FIELD(loss_report_buffer_length), "1m",
        "length of the loss report file loss-report.dat (rounded up to AERON_FILE_PAGE_SIZE), where the receiver "
        "records the loss of every image; `aeron-async loss` reads it" },
    /* ---- name resolution (docs/architecture.md, "Name resolution", "Driver names") ---- */
    { "AERON_DRIVER_ASYNC_EXECUTOR_THREADS", "aeron.driver.async.executor.threads", AA_OPT_INT32,
        AA_FIELD(async_executor_threads), "1",
        "threads that look names of UDP channels up and resolve them, off the conductor, 1 to 64 (a channel by "
        "address never waits for them)" },
    { "AERON_DRIVER_RERESOLUTION_CHECK_INTERVAL", "aeron.driver.reresolution.check.interval", AA_OPT_DURATION_NS,
        AA_FIELD(reresolution_check_interval_ns), "1s",
        "how often named endpoints and control addresses that fell silent (5 s without status messages, or "
        "without data) are resolved again; 0 disables re-resolution" },
    { "AERON_NAME_RESOLVER_THRESHOLD", "aeron.name.resolver.threshold", AA_OPT_DURATION_NS,
        AA_FIELD(name_resolver_time_threshold_ns), "5s",
        "a name lookup that takes longer is counted in the 'Name resolver time threshold exceeded' system counter" },
    { "AERON_NAME_RESOLUTION_PENDING_ALLOWED", "aeron.name.resolution.pending.allowed", AA_OPT_BOOL,
        AA_FIELD(name_resolution_pending_allowed), "false",
        "ours: a channel whose name does not resolve yet is registered anyway, not connected, and its name is "
        "retried every re-resolution check interval (each failure in the error log); false: an error, as Aeron" },
};

#define AA_DRIVER_OPTION_COUNT (sizeof(aa_driver_options) / sizeof(aa_driver_options[0]))

static const aa_driver_option_t *aa_driver_option_find(const char *name)
{
    char normalised[128];
    size_t len = strlen(name);
    if (len >= sizeof(normalised))
    {
        return NULL;
    }
    for (size_t i = 0; i <= len; i++)
    {
        char c = name[i];
        normalised[i] = '.' == c ? '_' : (char)toupper((unsigned char)c);
    }
    for (size_t i = 0; i < AA_DRIVER_OPTION_COUNT; i++)
    {
        if (0 == strcmp(aa_driver_options[i].env_name, normalised))
        {
            return &aa_driver_options[i];
        }
    }
    return NULL;
}

static int aa_parse_bool(const char *value, bool *out)
{
    if (0 == strcasecmp(value, "true") || 0 == strcmp(value, "1") || 0 == strcasecmp(value, "yes"))
    {
        *out = true;
        return 0;
    }
    if (0 == strcasecmp(value, "false") || 0 == strcmp(value, "0") || 0 == strcasecmp(value, "no"))
    {
        *out = false;
        return 0;
    }
    return -1;
}

static int aa_driver_option_apply(aa_driver_context_t *ctx, const aa_driver_option_t *opt, const char *value)
{
    uint8_t *field = (uint8_t *)ctx + opt->offset;
    switch (opt->kind)
    {
        case AA_OPT_DIR:
            if ('\0' == value[0])
            {
                aa_default_aeron_dir((char *)field, opt->size);
                return 0;
            }
            /* fall through */
        case AA_OPT_STRING:
            if (strlen(value) >= opt->size)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s is too long (%zu characters, at most %zu)",
                    opt->env_name, strlen(value), opt->size - 1);
                return -1;
            }
            snprintf((char *)field, opt->size, "%s", value);
            return 0;

        case AA_OPT_IDLE:
        {
            aa_idle_strategy_t probe;
            if (aa_idle_strategy_load(&probe, value) < 0)
            {
                AA_APPEND_ERR("invalid %s", opt->env_name);
                return -1;
            }
            aa_idle_strategy_close(&probe);
            if (strlen(value) >= opt->size)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s is too long", opt->env_name);
                return -1;
            }
            snprintf((char *)field, opt->size, "%s", value);
            return 0;
        }

        case AA_OPT_NAME_RESOLVER:
        {
            aa_strategy_t entry;
            if (aa_name_resolver_register_builtins() < 0 ||
                aa_registry_lookup(AA_STRATEGY_KIND_NAME_RESOLVER, value, &entry) < 0)
            {
                AA_APPEND_ERR("invalid %s", opt->env_name);
                return -1;
            }
            if (strlen(value) >= opt->size)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s is too long", opt->env_name);
                return -1;
            }
            snprintf((char *)field, opt->size, "%s", value);
            return 0;
        }

        case AA_OPT_BOOL:
        {
            bool b;
            if (aa_parse_bool(value, &b) < 0)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s is not a boolean; use true or false",
                    opt->env_name, value);
                return -1;
            }
            *(bool *)field = b;
            return 0;
        }

        case AA_OPT_SIZE:
        {
            int64_t v = aa_parse_size(value);
            if (v < 0)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                    "%s=%s is not a size; use bytes with an optional k, m or g suffix (e.g. 65536, 64k, 16m)",
                    opt->env_name, value);
                return -1;
            }
            *(int64_t *)field = v;
            return 0;
        }

        case AA_OPT_INT32:
        {
            char *end = NULL;
            errno = 0;
            long long v = strtoll(value, &end, 10);
            if (0 != errno || end == value || '\0' != *end || v < INT32_MIN || v > INT32_MAX)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s is not a 32-bit integer", opt->env_name, value);
                return -1;
            }
            *(int32_t *)field = (int32_t)v;
            return 0;
        }

        case AA_OPT_INT64:
        {
            char *end = NULL;
            errno = 0;
            long long v = strtoll(value, &end, 10);
            if (0 != errno || end == value || '\0' != *end)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s is not a 64-bit integer", opt->env_name, value);
                return -1;
            }
            *(int64_t *)field = (int64_t)v;
            return 0;
        }

        case AA_OPT_LOSS:
        {
            aa_loss_generator_params_t params;
            if (aa_loss_generator_params_parse(&params, value) < 0)
            {
                AA_APPEND_ERR("invalid %s", opt->env_name);
                return -1;
            }
            *(aa_loss_generator_params_t *)field = params;
            return 0;
        }

        case AA_OPT_DURATION_NS:
        case AA_OPT_DURATION_MS:
        {
            int64_t ns = aa_parse_duration_ns(value);
            if (ns < 0)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                    "%s=%s is not a duration; use a number with ns, us, ms or s (e.g. 500ms, 10s)",
                    opt->env_name, value);
                return -1;
            }
            *(int64_t *)field = AA_OPT_DURATION_MS == opt->kind ? ns / 1000000 : ns;
            return 0;
        }

        case AA_OPT_FLOW_CONTROL:
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
            if (strlen(value) >= opt->size)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s is too long", opt->env_name);
                return -1;
            }
            snprintf((char *)field, opt->size, "%s", value);
            return 0;
        }

        case AA_OPT_RECEIVER_GROUP_TAG:
        {
            if ('\0' == value[0])
            {
                ctx->has_receiver_group_tag = false;
                ctx->receiver_group_tag = 0;
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
            ctx->has_receiver_group_tag = true;
            ctx->receiver_group_tag = (int64_t)v;
            return 0;
        }

        case AA_OPT_THREADING_MODE:
        {
            static const char *names[] = { "DEDICATED", "SHARED_NETWORK", "SHARED", "INVOKER" };
            for (int i = 0; i < 4; i++)
            {
                if (0 == strcasecmp(value, names[i]))
                {
                    *(aa_threading_mode_t *)field = (aa_threading_mode_t)i;
                    return 0;
                }
            }
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                "%s=%s is not a threading mode; use DEDICATED, SHARED_NETWORK, SHARED or INVOKER",
                opt->env_name, value);
            return -1;
        }
    }
    return -1;
}

int aa_driver_context_init(aa_driver_context_t *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->clock = aa_clock_system();
    for (size_t i = 0; i < AA_DRIVER_OPTION_COUNT; i++)
    {
        if (aa_driver_option_apply(ctx, &aa_driver_options[i], aa_driver_options[i].default_value) < 0)
        {
            return -1;
        }
    }
    for (size_t i = 0; i < AA_DRIVER_OPTION_COUNT; i++)
    {
        const char *env = getenv(aa_driver_options[i].env_name);
        if (NULL != env)
        {
            if (aa_driver_option_apply(ctx, &aa_driver_options[i], env) < 0)
            {
                AA_APPEND_ERR("%s", "from the environment");
                return -1;
            }
        }
    }
    return 0;
}

int aa_driver_context_set(aa_driver_context_t *ctx, const char *name, const char *value)
{
    const aa_driver_option_t *opt = aa_driver_option_find(name);
    if (NULL == opt)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "unknown driver option %s; see `aeron-async driver --help-options`",
            name);
        return -1;
    }
    return aa_driver_option_apply(ctx, opt, value);
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
    if (aa_driver_context_check_termination(ctx) < 0)
    {
        return -1;
    }
    return 0;
}

void aa_driver_context_foreach_option(aa_driver_context_option_func_t func, void *clientd)
{
    for (size_t i = 0; i < AA_DRIVER_OPTION_COUNT; i++)
    {
        const aa_driver_option_t *o = &aa_driver_options[i];
        func(o->env_name, o->property_name, o->default_value, o->description, clientd);
    }
}

/* ---- driver control (docs/architecture.md, "Operations") ---- */

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
            "carry; set it (e.g. -o AERON_DRIVER_TERMINATION_TOKEN=<secret>)");
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

static int aa_driver_option_format(
    const aa_driver_context_t *ctx, const aa_driver_option_t *opt, char *out, size_t out_length)
{
    const uint8_t *field = (const uint8_t *)ctx + opt->offset;
    if ((const void *)field == (const void *)ctx->termination_token)
    {
        return snprintf(out, out_length, "%s", '\0' == ctx->termination_token[0] ? "" : "(set)");
    }
    switch (opt->kind)
    {
        case AA_OPT_STRING:
        case AA_OPT_DIR:
        case AA_OPT_IDLE:
        case AA_OPT_NAME_RESOLVER:
        case AA_OPT_FLOW_CONTROL:
            return snprintf(out, out_length, "%s", (const char *)field);
        case AA_OPT_BOOL:
            return snprintf(out, out_length, "%s", *(const bool *)field ? "true" : "false");
        case AA_OPT_SIZE:
        case AA_OPT_INT64:
            return snprintf(out, out_length, "%" PRId64, *(const int64_t *)field);
        case AA_OPT_INT32:
            return snprintf(out, out_length, "%" PRId32, *(const int32_t *)field);
        case AA_OPT_DURATION_NS:
            return snprintf(out, out_length, "%" PRId64 "ns", *(const int64_t *)field);
        case AA_OPT_DURATION_MS:
            return snprintf(out, out_length, "%" PRId64 "ms", *(const int64_t *)field);
        case AA_OPT_LOSS:
            return snprintf(out, out_length, "%s", ((const aa_loss_generator_params_t *)field)->spec);
        case AA_OPT_RECEIVER_GROUP_TAG:
            return ctx->has_receiver_group_tag ?
                snprintf(out, out_length, "%" PRId64, ctx->receiver_group_tag) : snprintf(out, out_length, "%s", "");
        case AA_OPT_THREADING_MODE:
        {
            static const char *names[] = { "DEDICATED", "SHARED_NETWORK", "SHARED", "INVOKER" };
            int mode = (int)*(const aa_threading_mode_t *)field;
            return snprintf(out, out_length, "%s", mode >= 0 && mode < 4 ? names[mode] : "?");
        }
        default:
            break;
    }
    return -1; /* a kind this writer does not know: the line says so instead of guessing */
}

int aa_driver_context_write_options(const aa_driver_context_t *ctx, FILE *out)
{
    char value[1100];
    for (size_t i = 0; i < AA_DRIVER_OPTION_COUNT; i++)
    {
        const aa_driver_option_t *o = &aa_driver_options[i];
        int n = aa_driver_option_format(ctx, o, value, sizeof(value));
        int rc = n < 0 ?
            fprintf(out, "# %s: value not recorded (option kind %d)\n", o->property_name, (int)o->kind) :
            fprintf(out, "%s=%s\n", o->property_name, value);
        if (rc < 0)
        {
            AA_SET_ERR(errno, "%s", "writing the driver's options");
            return -1;
        }
    }
    return 0;
}
