/*
 * aeron_async: the public C API, and the only header cffi sees (the part between the CDEF markers).
 *
 * Conventions: functions return 0 (or a count, a position, a pointer) on success and -1 (or NULL)
 * on failure with aa_errcode() / aa_errmsg() set for the calling thread. Offer-style functions
 * return a stream position (> 0) or one of the AA_PUBLICATION_* codes. Nothing here blocks except
 * aa_client_connect (bounded by the driver timeout) and the close functions (which join threads).
 */
#ifndef AERON_ASYNC_H
#define AERON_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef AA_CDEF
#include "util/aa_error.h"
#include "util/aa_parse.h"
#include "util/aa_options.h"
#include "util/aa_registry.h"
#include "logbuffer/aa_term.h"
#include "client/aa_client.h"
#include "driver/aa_driver.h"
#include "strategy/aa_flow_control_proxy.h"
#include "resolver/aa_name_resolver_proxy.h"
#include "protocols/aa_archive_codecs.h"
#include "archive/aa_archive_checksum.h"
#include "archive/aa_archive_segment.h"
#include "archive/aa_archive_retention.h"
#include "archive/aa_archive_catalog.h"
#include "archive/aa_archive_context.h"
#include "archive/aa_archive_auth.h"
#include "protocols/aa_resolution_frame.h"
#include "concurrent/aa_loss_reporter.h"
#endif

/* CDEF BEGIN */

#define AA_PUBLICATION_NOT_CONNECTED -1
#define AA_PUBLICATION_BACK_PRESSURED -2
#define AA_PUBLICATION_ADMIN_ACTION -3
#define AA_PUBLICATION_CLOSED -4
#define AA_PUBLICATION_MAX_POSITION_EXCEEDED -5
#define AA_PUBLICATION_ERROR -6

#define AA_CLIENT_STATE_ACTIVE 0
#define AA_CLIENT_STATE_CLOSED 1
#define AA_CLIENT_STATE_DRIVER_TIMEOUT 2
#define AA_CLIENT_STATE_CLIENT_TIMEOUT 3
#define AA_CLIENT_STATE_DRIVER_CORRUPT 4

#define AA_IMAGE_EVENT_AVAILABLE 1
#define AA_IMAGE_EVENT_UNAVAILABLE 2

/* the most the client conductor stays awake after waking an async waiter (aa_client_set_wake_spin_ns) */
#define AA_CLIENT_WAKE_SPIN_DEFAULT_NS 200000

typedef struct aa_driver_context_stct aa_driver_context_t;
typedef struct aa_driver_stct aa_driver_t;
typedef struct aa_client_stct aa_client_t;
typedef struct aa_publication_stct aa_publication_t;
typedef struct aa_subscription_stct aa_subscription_t;
typedef struct aa_image_stct aa_image_t;
typedef struct aa_counter_stct aa_counter_t;
typedef struct aa_cnc_reader_stct aa_cnc_reader_t;
typedef struct aa_idle_strategy_stct aa_idle_strategy_t;

#if AA_CDEF
typedef struct aa_iovec_stct
{
    const uint8_t *base;
    size_t length;
}
aa_iovec_t;

typedef struct aa_buffer_claim_stct
{
    uint8_t *frame;
    uint8_t *data;
    size_t length;
    void *doorbell;
}
aa_buffer_claim_t;

typedef struct aa_image_event_stct
{
    int32_t type;
    aa_image_t *image;
}
aa_image_event_t;

/* Position arithmetic (static inline in aa_logbuffer.h), bound for tests and tools. */
int64_t aa_compute_position(int32_t term_id, int32_t term_offset, int32_t position_bits_to_shift, int32_t initial_term_id);
int32_t aa_compute_term_id_from_position(int64_t position, int32_t position_bits_to_shift, int32_t initial_term_id);
int32_t aa_compute_term_offset_from_position(int64_t position, int32_t position_bits_to_shift);
int32_t aa_index_by_position(int64_t position, int32_t position_bits_to_shift);
int32_t aa_index_by_term(int32_t initial_term_id, int32_t active_term_id);
int64_t aa_compute_fragmented_length(size_t length, size_t max_payload_length);
int32_t aa_compute_max_message_length(int32_t term_length);
int32_t aa_position_bits_to_shift(int32_t term_length);
#endif

/* One whole message copied into a caller's buffer at offset. */
typedef struct aa_message_stct
{
    aa_image_t *image;
    int64_t offset;
    int64_t length;
    int64_t position;
    int64_t reserved_value;
    int32_t session_id;
    int32_t stream_id;
}
aa_message_t;

/* ---- the fragment-handler polling API (Aeron's Image/Subscription poll family) ----
 * A handler gets each DATA fragment in place in the log (header, then payload), valid only during
 * the call, and returns an action. The four of Aeron's controlled poll, with Aeron's numbering:
 * ABORT leaves the fragment unconsumed and stops; BREAK consumes it and stops; COMMIT consumes it
 * and stores the subscriber position at once; CONTINUE goes on (the position is stored when the
 * poll ends). Plain polls are the same loop with handlers that return CONTINUE. Two more stop a
 * poll of a whole subscription too: STOP consumes the fragment and stops (a handler that failed),
 * CLOSED stops at once touching nothing more (the handler closed the subscription or client). */
#define AA_POLL_ABORT 1
#define AA_POLL_BREAK 2
#define AA_POLL_COMMIT 3
#define AA_POLL_CONTINUE 4
#define AA_POLL_STOP 5
#define AA_POLL_CLOSED 6

typedef struct aa_poll_fragment_stct
{
    const uint8_t *frame; /* the DATA frame: its 32-byte header, then frame_length - 32 bytes of payload */
    aa_image_t *image;
    int32_t frame_length;
    int32_t initial_term_id;
    int32_t position_bits_to_shift;
}
aa_poll_fragment_t;

typedef int (*aa_poll_handler_t)(void *clientd, const aa_poll_fragment_t *fragment);
/* A block of whole frames, term_buffer[offset, offset + length); returns 0, AA_POLL_STOP or AA_POLL_CLOSED. */
typedef int (*aa_block_handler_t)(void *clientd, const uint8_t *term_buffer, int32_t term_length, int32_t offset,
    int32_t length, int32_t session_id, int32_t term_id);

typedef struct aa_image_info_stct
{
    int64_t correlation_id;
    int64_t join_position;
    int32_t session_id;
    int32_t stream_id;
    int32_t term_length;
    int32_t mtu_length;
    int32_t initial_term_id;
    int32_t subscriber_position_id;
    char source_identity[128];
}
aa_image_info_t;

/* ON_PUBLICATION_ERROR (aeron-wave3.md 4.2): a receiver rejected the image of one of this client's
 * publications (an ERR frame; IPC: a reject, receiver_id and group_tag -1, address 127.0.0.1). */
typedef struct aa_publication_error_info_stct
{
    int64_t registration_id;
    int64_t destination_registration_id;
    int64_t receiver_id;
    int64_t group_tag;
    int32_t session_id;
    int32_t stream_id;
    int32_t error_code;
    int32_t source_port;
    char source_address[64];
    char error_text[1024];
}
aa_publication_error_info_t;

typedef struct aa_counter_info_stct
{
    int64_t value;
    int64_t registration_id;
    int64_t owner_id;
    int32_t id;
    int32_t type_id;
    int32_t key_length;
    int32_t label_length;
    uint8_t key[112];
    char label[384];
}
aa_counter_info_t;

typedef struct aa_error_record_stct
{
    int64_t first_observation_ms;
    int64_t last_observation_ms;
    int32_t observation_count;
    int32_t text_length;
    const char *text;
}
aa_error_record_t;

typedef struct aa_cnc_info_stct
{
    int32_t cnc_version;
    int32_t to_driver_buffer_length;
    int32_t to_clients_buffer_length;
    int32_t counters_metadata_buffer_length;
    int32_t counters_values_buffer_length;
    int32_t error_log_buffer_length;
    int64_t client_liveness_timeout_ns;
    int64_t start_timestamp_ms;
    int64_t pid;
    int64_t driver_heartbeat_age_ms; /* -1: the driver has closed */
}
aa_cnc_info_t;

/* ---- version: AA_VERSION_STRING of src/util/aa_version.h, the one source of the version ---- */
const char *aa_version(void);

/* ---- errors: aa_errcode() is one of the AA_ERROR_CODE_* of src/util/aa_error.h (build_ffi.py adds
 * them to the cdef, and aeron_async/errors.py maps each to its exception class) ---- */
int aa_errcode(void);
const char *aa_errmsg(void);
void aa_err_clear(void);

/* ---- configuration parsing helpers ---- */
int64_t aa_parse_size(const char *text);
int64_t aa_parse_duration_ns(const char *text);
int aa_default_aeron_dir(char *buf, size_t length);
/* files of secrets, one rule for all (src/util/aa_fs.h; docs/security.md, "Files of secrets") */
int64_t aa_secret_file_read(const char *what, const char *path, uint8_t *out, size_t capacity);
int aa_secret_file_first_line(const char *what, const char *path, char *out, size_t length);

/* ---- idle strategies for application loops ----
 * The driver's strategies, by the same names ("backoff[:spins-yields-minPark-maxPark]", "spin",
 * "yield", "sleeping[:duration]", "noop"), for a duty-cycle loop of the application's own: call
 * aa_idle_strategy_apply with the loop's work count after every pass (0 = nothing done). */
aa_idle_strategy_t *aa_idle_strategy_new(const char *spec);
void aa_idle_strategy_apply(aa_idle_strategy_t *strategy, int work_count);
const char *aa_idle_strategy_name(const aa_idle_strategy_t *strategy);
void aa_idle_strategy_free(aa_idle_strategy_t *strategy);

/* ---- the strategy registry (src/util/aa_registry.h) ----
 * Strategies by (kind, name): flow control (fc= on a publication channel), congestion control (cc=
 * on a subscription channel), name resolvers (AERON_NAME_RESOLVER_SUPPLIER) and idle strategies
 * (the driver's *_IDLE_STRATEGY options, aa_idle_strategy_new). A table's type depends on the kind:
 * aa_flow_control_strategy_table_t (protocols/aa_flow_control.h), aa_congestion_control_strategy_table_t
 * (protocols/aa_congestion_control.h), aa_name_resolver_table_t (media/aa_udp_channel.h),
 * aa_idle_strategy_table_t (src/agent/aa_agent.h); it and its functions must live as long as the
 * process. Registration is thread-safe and allowed while drivers run; an entry is never removed or
 * replaced. The built-ins are registered before the first call returns. */
#if AA_CDEF
#define AA_STRATEGY_KIND_FLOW_CONTROL 0
#define AA_STRATEGY_KIND_CONGESTION_CONTROL 1
#define AA_STRATEGY_KIND_NAME_RESOLVER 2
#define AA_STRATEGY_KIND_IDLE 3
#define AA_STRATEGY_KIND_COUNT 4

typedef struct aa_strategy_stct
{
    int32_t kind;
    const char *name;
    const char *target;
    const void *table;
    void *clientd;
    const char *options;
    const char *description;
    bool is_alias;
}
aa_strategy_t;
#endif

/* name -> table (+ clientd handed back to the table's functions); -1 when the name is taken or
 * malformed (1 to 63 of [A-Za-z0-9_.-]) or the kind unknown. */
int aa_strategy_register(int32_t kind, const char *name, const void *table, void *clientd, const char *description);
/* name -> the registered (non-alias) entry target, with options used when the name is given without
 * options of its own (fc=name, AERON_*_IDLE_STRATEGY=name). */
int aa_strategy_register_alias(
    int32_t kind, const char *name, const char *target, const char *options, const char *description);
/* -1 with an error naming every registered name of the kind when name is not registered. */
int aa_strategy_lookup(int32_t kind, const char *name, aa_strategy_t *strategy);
int aa_strategy_count(int32_t kind);
/* "a, b, c" into buffer; returns the number of names, or -1 when buffer is too short. */
int aa_strategy_names(int32_t kind, char *buffer, size_t length);
/* The index-th entry of a kind, in registration order (built-ins first). */
int aa_strategy_entry(int32_t kind, int32_t index, aa_strategy_t *strategy);
const char *aa_strategy_kind_name(int32_t kind);

/* ---- flow control strategies that run off the sender (written in Python) ----
 * src/strategy/aa_flow_control_proxy.h: a proxy strategy registered by name queues each sender
 * event into a wait-free ring per publication and answers from atomics; a worker thread drains a
 * driver's host (poll), calls the strategy and publishes its answers (answer), or replaces a failed
 * one with the native min (fail: logged in the driver's error log). The sender never waits. */
#if AA_CDEF
#define AA_FLOW_CONTROL_PROXY_NO_ANSWER ...
#define AA_FLOW_CONTROL_PROXY_IDLE_INTERVAL_NS ...
#define AA_FLOW_CONTROL_PROXY_RING_CAPACITY ...
#endif
/* CDEF INCLUDE strategy/aa_flow_control_proxy.h */
/* The driver's host (lives as long as the driver). */
aa_flow_control_proxy_host_t *aa_driver_flow_control_proxy_host(aa_driver_t *driver);

/* ---- name resolvers written in Python (pyres) ----
 * resolver/aa_name_resolver_proxy.h: a proxy resolver registered by name copies each lookup and
 * resolve (on the driver's resolver executor) into a slot of a process-wide host and waits for the
 * answer, at most the registration's timeout; a worker (aeron_async/name_resolver.py) polls the host,
 * calls Python on threads of its own and answers. do_work (conductor) is posted, never waited for. */
/* CDEF INCLUDE resolver/aa_name_resolver_proxy.h */

/* ---- clocks ----
 * The driver and the client read every timer (liveness, linger, flow-control and connection
 * timeouts) through a pair of clocks: nano_time (monotonic nanoseconds) and epoch_time (milliseconds
 * since the epoch, compared across processes: heartbeats). Both are called with clientd from the
 * driver's or the client's threads, often: they must be quick and must not block.
 * A test clock stands still until moved, so a test moves time instead of sleeping; pass
 * aa_test_clock_nano_time, aa_test_clock_epoch_time and the clock as clientd. Where another process
 * reads the system clock (a driver or client of its own), start the epoch time at the system's. */
typedef int64_t (*aa_clock_func_t)(void *clientd);
typedef struct aa_test_clock_stct aa_test_clock_t;
aa_test_clock_t *aa_test_clock_new(int64_t nano_time, int64_t epoch_time_ms);
void aa_test_clock_free(aa_test_clock_t *test_clock);
/* Moves both clocks forward (the epoch clock by the whole milliseconds crossed). */
void aa_test_clock_advance(aa_test_clock_t *test_clock, int64_t delta_ns);
int64_t aa_test_clock_nano_time(void *test_clock);
int64_t aa_test_clock_epoch_time(void *test_clock);

/* ---- media driver ---- */
aa_driver_context_t *aa_driver_context_new(void);
void aa_driver_context_free(aa_driver_context_t *ctx);
int aa_driver_context_set(aa_driver_context_t *ctx, const char *name, const char *value);
/* The driver's clocks (see clocks above); both NULL: the system's (the default). */
int aa_driver_context_set_clock(
    aa_driver_context_t *ctx, aa_clock_func_t nano_time, aa_clock_func_t epoch_time, void *clientd);
const char *aa_driver_context_aeron_dir(aa_driver_context_t *ctx);
int aa_driver_launch(aa_driver_t **driver, aa_driver_context_t *ctx);
/* As aa_driver_launch, but a live driver in the directory is no failure: 0 with *driver NULL. */
int aa_driver_launch_or_join(aa_driver_t **driver, aa_driver_context_t *ctx);
int aa_driver_do_work(aa_driver_t *driver);
void aa_driver_idle(aa_driver_t *driver, int work_count);
int aa_driver_close(aa_driver_t *driver);
int aa_driver_is_active(const char *aeron_dir, int64_t driver_timeout_ms, int64_t *heartbeat_age_ms, int64_t *pid);
/* The value an option holds, by its environment or property name, as it would be set; the length
 * written, or -1 (unknown name, buffer too short). */
int aa_driver_context_get(const aa_driver_context_t *ctx, const char *name, char *value, size_t length);
/* Options table: index from 0 until it returns -1 (aa_option_describe tells more). */
int aa_driver_option(int index, const char **env_name, const char **property_name, const char **default_value,
    const char **description);

/* ---- option tables ----
 * util/aa_options.h: the driver's (AA_OPTIONS_DRIVER) and the archive's (AA_OPTIONS_ARCHIVE)
 * options, one table each, run by one option engine: names, environment variables, Aeron's
 * property names, types, defaults and descriptions. */
/* CDEF INCLUDE util/aa_options.h */
/* The number of options of a table; -1 for another kind. */
int aa_options_count(int32_t kind);
/* The index-th option of a table (0 up); -1 past the end or for another kind. */
int aa_option_describe(int32_t kind, int32_t index, aa_option_info_t *info);

/* ---- client ---- */
int aa_client_connect(aa_client_t **client, const char *aeron_dir, int64_t driver_timeout_ms, bool use_invoker,
    const char *idle_strategy);
/* aa_client_connect with the client's clocks (see clocks above; both NULL: the system's). Waiting for
 * the driver to start at connect is in real time; every timer after it reads these clocks. */
int aa_client_connect_with_clock(aa_client_t **client, const char *aeron_dir, int64_t driver_timeout_ms,
    bool use_invoker, const char *idle_strategy, aa_clock_func_t nano_time, aa_clock_func_t epoch_time, void *clientd);
int aa_client_close(aa_client_t *client);
int aa_client_do_work(aa_client_t *client);
int32_t aa_client_state(aa_client_t *client);
const char *aa_client_state_message(aa_client_t *client);
int64_t aa_client_id(aa_client_t *client);
const char *aa_client_aeron_dir(aa_client_t *client);
/* After its conductor thread wakes an async waiter it stays awake, yielding the CPU, for an adaptive
 * window of at most max_ns (0: never), so that the next wake-up of a request/response exchange is
 * not slowed by waking a halted CPU. It shrinks to nothing while wake-ups are further apart than
 * max_ns. */
void aa_client_set_wake_spin_ns(aa_client_t *client, int64_t max_ns);
/* Diagnostics: the conductor's current wake-spin window, and whether it sleeps on the doorbells of
 * every log an async waiter may wait on (false past 127 logs or without futex_waitv: then parking
 * wakes it; it sleeps on the parked waiters' doorbells, or checks them every millisecond when
 * those alone are too many). */
int64_t aa_client_wake_spin_window_ns(aa_client_t *client);
bool aa_client_doorbells_watched(aa_client_t *client);

int64_t aa_client_async_add_publication(aa_client_t *client, const char *channel, int32_t stream_id, bool exclusive);
int aa_client_async_add_publication_poll(aa_client_t *client, int64_t correlation_id, aa_publication_t **publication);
int64_t aa_client_async_add_subscription(aa_client_t *client, const char *channel, int32_t stream_id);
int aa_client_async_add_subscription_poll(aa_client_t *client, int64_t correlation_id, aa_subscription_t **subscription);

/* ---- counters a client adds: owned by the client, freed by the driver when the client removes
 * them, closes or times out ----
 * key: at most 112 bytes; label: at most 380 bytes. */
int64_t aa_client_async_add_counter(
    aa_client_t *client, int32_t type_id, const uint8_t *key, size_t key_length, const char *label, size_t label_length);
int aa_client_async_add_counter_poll(aa_client_t *client, int64_t correlation_id, aa_counter_t **counter);
/* A static counter (ADD_STATIC_COUNTER, Aeron's addStaticCounter): keyed by type_id and registration_id
 * (the application's), owned by no client: the driver returns the one it has for them, to any client,
 * or allocates it; closing the counter closes this client's handle only, the driver keeps it. Poll with
 * aa_client_async_add_counter_poll; aa_counter_registration_id is then registration_id. */
int64_t aa_client_async_add_static_counter(
    aa_client_t *client, int32_t type_id, const uint8_t *key, size_t key_length, const char *label, size_t label_length,
    int64_t registration_id);
/* GET_NEXT_AVAILABLE_SESSION_ID (Aeron's nextSessionId): a session id no publication of the stream holds
 * on the driver; consecutive requests get consecutive ids (skipping reserved and used ones). The poll
 * returns 0 while unanswered, 1 with *session_id set, -1 with the error set. */
int64_t aa_client_async_next_session_id(aa_client_t *client, int32_t stream_id);
int aa_client_async_next_session_id_poll(aa_client_t *client, int64_t correlation_id, int32_t *session_id);
int32_t aa_counter_id(aa_counter_t *counter);
int64_t aa_counter_registration_id(aa_counter_t *counter);
/* Closed here, or freed by the driver (ON_UNAVAILABLE_COUNTER) or with a client that lost its driver. */
bool aa_counter_is_closed(aa_counter_t *counter);
int64_t aa_counter_get(aa_counter_t *counter);
/* Writes refuse (-1, error set) once the counter is closed: the driver may reuse its record. */
int aa_counter_set(aa_counter_t *counter, int64_t value);
int aa_counter_get_and_add(aa_counter_t *counter, int64_t delta, int64_t *previous);
int aa_counter_close(aa_counter_t *counter);
/* The value of any counter of the client's driver (0 for an id outside its buffer). */
int64_t aa_client_counter_value(aa_client_t *client, int32_t counter_id);

/* ---- channel parameters: what this driver does with each (driver/aa_channel_support.c, its one table;
 * docs/configuration.md, "Channel parameters", is `aeron-async driver --help-channel-params --markdown`) ----
 * status[] per role, in the order aeron:ipc publication, aeron:ipc subscription, aeron:udp publication,
 * aeron:udp subscription, aeron-spy subscription. */
#define AA_CHANNEL_PARAM_ROLES 5
#define AA_CHANNEL_PARAM_APPLIED 0        /* applied */
#define AA_CHANNEL_PARAM_OTHER_END 1      /* accepted: it is for the other end of the channel, applied there */
#define AA_CHANNEL_PARAM_IGNORED 2        /* accepted and ignored, as Aeron's C driver ignores it */
#define AA_CHANNEL_PARAM_ONLY_VALUES 3    /* refused (why), except the values asking for what is done anyway */
#define AA_CHANNEL_PARAM_REFUSED 4        /* refused when the publication or subscription is added (why) */
#define AA_CHANNEL_PARAM_NOT_OF_MEDIA 5   /* refused when the channel is parsed: not a parameter of the media */
typedef struct aa_channel_param_info_stct
{
    const char *name;
    const char *meaning;
    char why_text[512];         /* why it is refused where it is, what to do instead; empty: nowhere */
    char only_values[64];       /* AA_CHANNEL_PARAM_ONLY_VALUES: "true", "false or infer" */
    int32_t status[5];
}
aa_channel_param_info_t;
size_t aa_channel_params_count(void);
/* 0 with *info for the index-th parameter, or -1 past the last. */
int aa_channel_param_describe(size_t index, aa_channel_param_info_t *info);

/* ---- publications ---- */
int64_t aa_publication_offer(aa_publication_t *pub, const uint8_t *buffer, size_t length, int64_t reserved_value);
int64_t aa_publication_offerv(aa_publication_t *pub, const aa_iovec_t *iov, size_t iovcnt, int64_t reserved_value);
/* Append messages[0..count) in order (each its own message) until one is refused: *accepted says
 * how many went in; returns the position after the last one, or the refusal code when none did. */
int64_t aa_publication_offer_batch(
    aa_publication_t *pub, const aa_iovec_t *messages, size_t count, int64_t reserved_value, size_t *accepted);
/* Exclusive publications: append a block of whole frames laid out for the publication's current
 * term and offset (headers naming its session, stream and term id; not past the term's end), as
 * Aeron's offerBlock. Returns the new position or an AA_PUBLICATION_* code. */
int64_t aa_publication_offer_block(aa_publication_t *pub, const uint8_t *block, size_t length);
int64_t aa_publication_try_claim(aa_publication_t *pub, size_t length, aa_buffer_claim_t *claim);
void aa_buffer_claim_commit(aa_buffer_claim_t *claim);
void aa_buffer_claim_abort(aa_buffer_claim_t *claim);
bool aa_publication_is_connected(aa_publication_t *pub);
bool aa_publication_is_closed(aa_publication_t *pub);
int64_t aa_publication_position(aa_publication_t *pub);
int64_t aa_publication_position_limit(aa_publication_t *pub);
void aa_publication_describe(aa_publication_t *pub, int64_t *registration_id, int32_t *session_id, int32_t *stream_id,
    int32_t *max_message_length, int32_t *max_payload_length, int32_t *term_length, int32_t *initial_term_id,
    int32_t *position_limit_counter_id);
int aa_publication_close(aa_publication_t *pub);
/* Revoke (aeron-wave3.md 4.1), exclusive publications only: closes at once and the driver ends the
 * stream where the publisher is, without draining (subscribers' images go unavailable, what they had
 * not received is lost). set_revoke_on_close makes a later close revoke. -1 for a concurrent one. */
int aa_publication_revoke(aa_publication_t *pub);
int aa_publication_set_revoke_on_close(aa_publication_t *pub, bool revoke);
/* The id of the channel endpoint's status counter (snd-channel), -1 for IPC. */
int32_t aa_publication_channel_status_id(aa_publication_t *pub);

/* ---- multi-destination-cast (reference 7.3) ----
 * A publication on aeron:udp?control-mode=manual sends to the destinations added to it
 * (aeron:udp?endpoint=host:port, a receiver's address); they never time out. Each call returns a
 * correlation id for aa_client_async_destination_poll: 1 once the driver applied it, 0 while it has
 * not answered, -1 with the error set when it refused (e.g. a publication that is not manual MDC, a
 * malformed destination, removing one that was never added) or did not answer in the driver timeout.
 * The subscription calls (multi-destination subscriptions) are answered with an error by this driver. */
int64_t aa_publication_async_add_destination(aa_publication_t *pub, const char *destination);
int64_t aa_publication_async_remove_destination(aa_publication_t *pub, const char *destination);
int64_t aa_subscription_async_add_destination(aa_subscription_t *sub, const char *destination);
int64_t aa_subscription_async_remove_destination(aa_subscription_t *sub, const char *destination);
int aa_client_async_destination_poll(aa_client_t *client, int64_t correlation_id);

/* ---- subscriptions and images ---- */
int32_t aa_subscription_poll_messages(aa_subscription_t *sub, uint8_t *out, size_t out_capacity, aa_message_t *messages,
    int32_t max_messages, int32_t fragment_limit, size_t *required);
int32_t aa_image_poll_messages(aa_image_t *image, uint8_t *out, size_t out_capacity, size_t *out_used,
    aa_message_t *messages, int32_t max_messages, int32_t fragment_limit, size_t *required);
/* Fragment handlers (see aa_poll_handler_t): they return the fragments handed to the handler (an
 * ABORTed one not counted). Bounded polls read no frame that starts at or past limit_position. */
int32_t aa_subscription_controlled_poll(
    aa_subscription_t *sub, aa_poll_handler_t handler, void *clientd, int32_t fragment_limit);
int32_t aa_image_controlled_poll(aa_image_t *image, aa_poll_handler_t handler, void *clientd, int32_t fragment_limit);
int32_t aa_image_bounded_controlled_poll(
    aa_image_t *image, aa_poll_handler_t handler, void *clientd, int64_t limit_position, int32_t fragment_limit);
/* The contiguous whole frames from the subscriber position, at most block_length_limit bytes and not
 * past the term's end, in one call (a padding frame only alone); returns the bytes consumed. A frame
 * longer than the limit is never delivered: give at least the MTU. The subscription form polls every
 * image, each up to the limit, as Aeron does. */
int64_t aa_image_block_poll(aa_image_t *image, aa_block_handler_t handler, void *clientd, int32_t block_length_limit);
int64_t aa_subscription_block_poll(
    aa_subscription_t *sub, aa_block_handler_t handler, void *clientd, int32_t block_length_limit);
/* Move the subscriber position: forward to a frame boundary within the data received in the current
 * term, or back to a frame boundary still held in the log (at most a term behind the furthest
 * position this image reached, not before its join position). -1 with a message naming the range. */
int aa_image_set_position(aa_image_t *image, int64_t position);
int32_t aa_subscription_image_count(aa_subscription_t *sub);
int32_t aa_subscription_images(aa_subscription_t *sub, aa_image_t **out, int32_t max);
bool aa_subscription_is_connected(aa_subscription_t *sub);
bool aa_subscription_is_closed(aa_subscription_t *sub);
int32_t aa_subscription_take_image_events(aa_subscription_t *sub, aa_image_event_t *out, int32_t max);
bool aa_subscription_has_image_events(aa_subscription_t *sub);
int aa_subscription_close(aa_subscription_t *sub);
/* The id of the channel endpoint's status counter (rcv-channel), -1 for IPC and spies. */
int32_t aa_subscription_channel_status_id(aa_subscription_t *sub);
int64_t aa_image_position(aa_image_t *image);
bool aa_image_is_closed(aa_image_t *image);
bool aa_image_is_end_of_stream(aa_image_t *image);
int64_t aa_image_end_of_stream_position(aa_image_t *image);
/* Its publication was revoked (aeron-wave3.md 4.1). */
bool aa_image_is_publication_revoked(aa_image_t *image);
/* Reject the image (aeron-wave3.md 4.2): its publisher is told and the image goes (a network one at
 * its liveness timeout); returns a correlation id for aa_client_async_destination_poll, -1 with the
 * error set (a spy's image: "spies can not reject images"; a reason over 1023 bytes). */
int64_t aa_image_async_reject(aa_image_t *image, const char *reason);
/* The publication errors of this client's publications since the last call, oldest first, at most
 * max (the client keeps the last AA_PUBLICATION_ERRORS_KEPT; older ones are dropped and counted in
 * *dropped when not NULL). */
#define AA_PUBLICATION_ERRORS_KEPT 64
int32_t aa_client_take_publication_errors(
    aa_client_t *client, aa_publication_error_info_t *out, int32_t max, int64_t *dropped);
void aa_image_describe(aa_image_t *image, aa_image_info_t *info);

/* ---- async waiting: park, then wait for notify_fd (an eventfd) to become readable ----
 * Parking asks the client conductor (thread mode) to write to the fd once there is something to
 * do: data on any image, an image event or closure for a subscription; data, end of stream or
 * closure for one image (signalled on its subscription's fd); a publisher limit beyond `position`
 * (or closure) for a publication. A park is one-shot: the conductor unparks as it signals. Re-check
 * after parking: the conductor only signals what it sees after the park. Image events and client
 * closure are signalled whether parked or not. Set the fd to -1 before closing it. */
void aa_subscription_set_notify_fd(aa_subscription_t *sub, int fd);
void aa_subscription_park(aa_subscription_t *sub);
void aa_subscription_unpark(aa_subscription_t *sub);
void aa_image_park(aa_image_t *image);
void aa_image_unpark(aa_image_t *image);
void aa_publication_set_notify_fd(aa_publication_t *pub, int fd);
void aa_publication_park(aa_publication_t *pub, int64_t position);
void aa_publication_unpark(aa_publication_t *pub);

/* ---- the table of message-path functions for the CPython fast path (aeron_async._speedups) ----
 * An aa_fastpath_api_t (src/aa_fastpath.h); Python hands its address to the extension, which
 * calls through it without linking this library a second time. */
const void *aa_fastpath_api(void);

/* ---- monitoring: read a driver's CnC file from any process ---- */
int aa_cnc_reader_open(aa_cnc_reader_t **reader, const char *aeron_dir);
void aa_cnc_reader_close(aa_cnc_reader_t *reader);
void aa_cnc_reader_info(aa_cnc_reader_t *reader, aa_cnc_info_t *info);
/* The next allocated counter with id >= from_id, or -1 when there are no more, or -2 (error set:
 * AA_ERROR_CODE_DRIVER_CORRUPT) when its record holds what no driver writes. */
int32_t aa_cnc_reader_next_counter(aa_cnc_reader_t *reader, int32_t from_id, aa_counter_info_t *info);
/* Counter counter_id: 1 (allocated, info filled), 0 (not allocated), -1 (id out of range, or a record
 * no driver writes: error set). */
int32_t aa_cnc_reader_counter(aa_cnc_reader_t *reader, int32_t counter_id, aa_counter_info_t *info);
int32_t aa_cnc_reader_max_counter_id(aa_cnc_reader_t *reader);
/* The value of counter counter_id (0 when outside 0..max counter id). */
int64_t aa_cnc_reader_counter_value(aa_cnc_reader_t *reader, int32_t counter_id);
/* The error record at *offset (advancing it), 1 if read, 0 at the end. */
int aa_cnc_reader_next_error(aa_cnc_reader_t *reader, size_t *offset, aa_error_record_t *record);

/* ---- driver control (src/driver/aa_driver_control.c; docs/architecture.md, "Operations") ----
 * Asks the reader's driver to stop: writes Aeron's TERMINATE_DRIVER (0x0E) with the token into its
 * to-driver buffer. The driver accepts or refuses it by AERON_DRIVER_TERMINATION_VALIDATOR; a refusal
 * is recorded in its error log ("TERMINATE_DRIVER refused: ..."), an accepted request sets the flag
 * that aa_driver_termination_requested reads, and the driver's owner then closes it. */
#define AA_TERMINATION_TOKEN_MAX_LENGTH 1024
int aa_cnc_reader_request_termination(aa_cnc_reader_t *reader, const uint8_t *token, size_t token_length);
bool aa_driver_termination_requested(aa_driver_t *driver);

/* ---- the archive service (docs/architecture.md, "Archive"): records streams to segment files and replays them, with
 * Aeron Archive's control protocol (local control over IPC, optional UDP control channel) ----
 * A context holds every option (AERON_ARCHIVE_* environment variables, then aa_archive_context_set
 * by environment or property name; aa_archive_option lists them). The archive is a client of the
 * media driver in its AERON_DIR; its threads follow AERON_ARCHIVE_THREADING_MODE (INVOKER: the
 * caller runs aa_archive_do_work). */
typedef struct aa_archive_context_stct aa_archive_context_t;
typedef struct aa_archive_stct aa_archive_t;
aa_archive_context_t *aa_archive_context_new(void);
void aa_archive_context_free(aa_archive_context_t *ctx);
int aa_archive_context_set(aa_archive_context_t *ctx, const char *name, const char *value);
const char *aa_archive_context_archive_dir(aa_archive_context_t *ctx);
int aa_archive_context_get(const aa_archive_context_t *ctx, const char *name, char *value, size_t length);
/* Options table: index from 0 until it returns -1 (aa_option_describe tells more). */
int aa_archive_option(int index, const char **env_name, const char **property_name, const char **default_value,
    const char **description);
/* Refuses (-1) when another archive is active on the directory (archive-mark.dat). Recovers the stop
 * position of every recording that was being recorded when an earlier archive stopped. */
int aa_archive_launch(aa_archive_t **archive, aa_archive_context_t *ctx);
int aa_archive_do_work(aa_archive_t *archive);
int aa_archive_close(aa_archive_t *archive);
int64_t aa_archive_id(aa_archive_t *archive);
const char *aa_archive_dir(aa_archive_t *archive);
/* A Python authenticator's thread (AERON_ARCHIVE_AUTHENTICATOR=python:module:Class; docs/security.md,
 * "The archive"): the next event of a session (1), none within timeout_ms (0), -1 when the archive's
 * authenticator is not a Python one; and its answer (AA_ARCHIVE_AUTH_ACCEPT with the principal and a
 * role, _CHALLENGE with the challenge, _REJECT). The conductor never waits for them. */
/* CDEF INCLUDE archive/aa_archive_auth.h */
int aa_archive_auth_poll(aa_archive_t *archive, aa_archive_auth_event_t *event, int64_t timeout_ms);
int aa_archive_auth_answer(aa_archive_t *archive, int64_t session_id, int32_t decision, const uint8_t *data,
    size_t length, int32_t role);

/* CDEF INCLUDE archive/aa_archive_context.h */
/* An archive's mark file, read from any process (the archive running or not): its header, and its
 * error log one record at a time (offset from 0; 1 while there is one, 0 at the end), as the CnC
 * reader's. */
typedef struct aa_archive_mark_reader_stct aa_archive_mark_reader_t;
int aa_archive_mark_reader_open(aa_archive_mark_reader_t **reader, const char *archive_dir, aa_archive_mark_info_t *info);
int aa_archive_mark_reader_next_error(aa_archive_mark_reader_t *reader, size_t *offset, aa_error_record_t *record);
void aa_archive_mark_reader_close(aa_archive_mark_reader_t *reader);

/* ---- the loss report (docs/architecture.md, "The loss report") ----
 * src/concurrent/aa_loss_reporter.h: <aeron_dir>/<aa_loss_report_file_name()>, Aeron's LossReport
 * layout, written by the driver's receiver; aeron_async/loss.py reads it in place at these offsets. */
#if AA_CDEF
#define AA_LOSS_REPORT_ENTRY_ALIGNMENT ...
#define AA_LOSS_REPORT_OBSERVATION_COUNT_OFFSET ...
#define AA_LOSS_REPORT_TOTAL_BYTES_LOST_OFFSET ...
#define AA_LOSS_REPORT_FIRST_OBSERVATION_OFFSET ...
#define AA_LOSS_REPORT_LAST_OBSERVATION_OFFSET ...
#define AA_LOSS_REPORT_SESSION_ID_OFFSET ...
#define AA_LOSS_REPORT_STREAM_ID_OFFSET ...
#define AA_LOSS_REPORT_CHANNEL_OFFSET ...
#endif
const char *aa_loss_report_file_name(void);

/* ---- the archive: codecs and files (docs/architecture.md, "Archive", "Files and codecs") ----
 * Declared once, in their own headers (build_ffi.py splices their CDEF blocks in here): the SBE
 * codecs of every message of Aeron Archive's schema 101 v14 and the mark file header (schema 100);
 * CRC-32/CRC-32C; segment files (names, positions, I/O with sync levels, frame checksums, the
 * recovery scan); the catalog file (archive.catalog, byte for byte as Aeron's). */
/* CDEF INCLUDE protocols/aa_archive_codecs.h */
/* CDEF INCLUDE archive/aa_archive_checksum.h */
/* CDEF INCLUDE archive/aa_archive_segment.h */
/* retention's plan (docs/architecture.md, "Segments and retention"), shared with `recordings retention --dry-run` */
/* CDEF INCLUDE archive/aa_archive_retention.h */
/* CDEF INCLUDE archive/aa_archive_catalog.h */

/* ---- columnar polling (the Spark source, docs/architecture.md "Spark"; src/client/aa_columns.c) ----
 * Whole messages of one image into caller-owned column buffers: data bytes back to back with
 * Arrow's int32 offsets (offsets[0] = 0, offsets[i + 1] = end of message i), each message's
 * position (its END, as a polled message's: the position after it) and reserved value. Fragmented messages are reassembled in place. Messages starting
 * before from_position are skipped; once the image stands at or past to_position between messages,
 * done is set; when the next message does not fit, full. The subscriber position moves only to message boundaries (position: the last one). */
typedef struct aa_columns_stct
{
    uint8_t *data;
    int32_t *offsets;          /* row_capacity + 1 entries */
    int64_t *positions;        /* row_capacity entries */
    int64_t *reserved_values;  /* row_capacity entries */
    int64_t data_capacity;     /* <= INT32_MAX */
    int64_t data_length;
    int32_t row_capacity;
    int32_t rows;
    int64_t from_position;
    int64_t to_position;
    int64_t position;          /* out: the message boundary the image stands at after the last poll */
    int64_t required;          /* out, with -2: data bytes the next message needs at least */
    int32_t done;              /* out: to_position reached */
    int32_t full;              /* out: the next message does not fit beside the rows there */
}
aa_columns_t;
/* Empties the columns (rows, data_length, offsets[0]); -1 when a buffer or capacity is invalid. */
int aa_columns_reset(aa_columns_t *columns);
/* Appends the whole messages available (up to the capacities); returns the rows added (0: nothing
 * new, or the next message does not fit beside the rows already there), or -2 with `required` set
 * when the next message does not fit even in the empty data buffer. */
int32_t aa_columns_poll(aa_image_t *image, aa_columns_t *columns);
/* ---- driver-name (gossip) resolver (docs/architecture.md, "Driver names"): RES frames ----
 * Declared in their own header (sans-I/O encode / validate / decode, reference 1.10). */
/* CDEF INCLUDE protocols/aa_resolution_frame.h */

/* CDEF END */

#endif
