/*
 * Receiver congestion control (reference section 6), sans I/O: what window an image advertises in
 * its status messages. A strategy is an entry of the strategy registry (util/aa_registry.h, kind
 * AA_STRATEGY_KIND_CONGESTION_CONTROL) whose table is an aa_congestion_control_strategy_table_t,
 * chosen with cc=<name>[,<options>] on a subscription channel ("static" without cc=).
 *
 * The conductor chooses the strategy when it creates an image (aa_congestion_control_select, then
 * aa_congestion_control_create: options checked, state allocated, the strategy's per-image counters
 * handed over); from then on the receiver asks it, every duty cycle, for the window of the next
 * status message (on_track_rebuild, told whether the loss detector found a new gap), whether to send
 * an RTT measurement frame, and hands it the RTTs measured. No clock reads, no allocation after
 * create, no I/O: the image sends the frames and owns the counters' memory.
 *
 * Built in:
 * - "static": the window is min(rcv-wnd or the driver's initial window, term length / 2), fixed for
 *   the life of the image; no options, no RTT measurement.
 * - "cubic" (C aeron_congestion_control.c): window = cwnd x MTU with max_cwnd = static window / MTU,
 *   initial cwnd min(10, max_cwnd), C = 0.4, B = 0.2. On a new gap: w_max = cwnd,
 *   K = cbrt(w_max B / C), cwnd = max(1, cwnd (1 - B)), an SM is forced. Otherwise at most once per
 *   RTT (the initial RTT until one is measured): cwnd = min(max_cwnd, w_max + C (t - K)^3), t the
 *   seconds since the last loss; in TCP mode at least the TCP-friendly w_max (1 - B) +
 *   3B/(2 - B) t/RTT while below w_max. With RTT measurement on, an RTTM (REPLY flag) is due when
 *   4 x max(rtt, initial RTT) passed since the last one sent or answered. Counters (type 10, per
 *   image): rcv-cc-cubic-rtt (last RTT in ns, 0 until measured) and rcv-cc-cubic-wnd (the window in
 *   bytes). Options (each optional, overriding the driver's AERON_CUBICCONGESTIONCONTROL_* default):
 *   measure-rtt:true|false, tcp-mode:true|false, initial-rtt:<duration> (e.g. 100us, 2ms).
 */
#ifndef AA_CONGESTION_CONTROL_H
#define AA_CONGESTION_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

/* Per-image counters a strategy may ask for (the conductor gives them type AA_COUNTER_TYPE_PER_IMAGE, 10). */
#define AA_CONGESTION_CONTROL_COUNTERS_MAX 2

#define AA_CUBIC_CONGESTION_CONTROL_C 0.4
#define AA_CUBIC_CONGESTION_CONTROL_B 0.2
#define AA_CUBIC_CONGESTION_CONTROL_INITIAL_CWND 10
#define AA_CUBIC_CONGESTION_CONTROL_RTT_TIMEOUT_MULTIPLE 4
#define AA_CUBIC_CONGESTION_CONTROL_INITIAL_RTT_DEFAULT_NS (100 * 1000LL)
#define AA_CUBIC_CONGESTION_CONTROL_RTT_COUNTER_NAME "rcv-cc-cubic-rtt"
#define AA_CUBIC_CONGESTION_CONTROL_WINDOW_COUNTER_NAME "rcv-cc-cubic-wnd"

/* The driver's defaults for cubic (AERON_CUBICCONGESTIONCONTROL_MEASURERTT, _TCPMODE, _INITIALRTT). */
typedef struct aa_cubic_congestion_control_config_stct
{
    bool measure_rtt;
    bool tcp_mode;
    int64_t initial_rtt_ns;
}
aa_cubic_congestion_control_config_t;

/* What a strategy may use to size the window of one image. */
typedef struct aa_congestion_control_params_stct
{
    const char *cc_options;         /* the options after "name," (or an alias's); NULL: none */
    void *clientd;                  /* the registry entry's clientd */
    int32_t session_id;
    int32_t stream_id;
    int32_t term_length;
    int32_t mtu_length;             /* the sender's, from SETUP */
    int32_t initial_window_length;  /* rcv-wnd, or the driver's aeron.rcv.initial.window.length */
    int32_t socket_rcvbuf_length;   /* the receive socket's buffer, 0 when unknown */
    aa_cubic_congestion_control_config_t cubic;   /* the driver's cubic defaults (zero: the built-in ones) */
    /* create only: the strategy's counters (counter_labels order), NULL where none was allocated */
    volatile int64_t *counters[AA_CONGESTION_CONTROL_COUNTERS_MAX];
}
aa_congestion_control_params_t;

/* What the receiver knows after a rebuild scan. */
typedef struct aa_congestion_control_rebuild_stct
{
    int64_t now_ns;
    int64_t new_consumption_position;   /* the minimum subscriber position */
    int64_t last_sm_position;
    int64_t hwm_position;
    int64_t starting_rebuild_position;
    int64_t ending_rebuild_position;
    bool loss_occurred;                 /* the loss detector found a gap it had not seen before */
}
aa_congestion_control_rebuild_t;

typedef struct aa_congestion_control_strategy_table_stct
{
    /* Sets *window_length for a new image (its first SM's window); returns 0, or -1 with AA_SET_ERR
     * (options it does not take, a window it cannot give), which rejects the image and logs the error.
     * Also called when a channel is added, on a typical image, to check the options early. */
    int (*initial_window_length)(const aa_congestion_control_params_t *params, int32_t *window_length);

    /* The rest is optional: a strategy without create keeps the initial window for good. */
    const char *const *counter_labels;   /* NULL-terminated, at most AA_CONGESTION_CONTROL_COUNTERS_MAX */
    /* Allocates the per-image state (conductor, image creation); 0 or -1 with AA_SET_ERR. */
    int (*create)(void **state, const aa_congestion_control_params_t *params, int64_t now_ns);
    void (*delete)(void *state);
    /* Receiver, every duty cycle: the window of the next SM; *force_sm asks for an SM now. */
    int32_t (*on_track_rebuild)(void *state, const aa_congestion_control_rebuild_t *rebuild, bool *force_sm);
    bool (*should_measure_rtt)(void *state, int64_t now_ns);
    void (*on_rttm_sent)(void *state, int64_t now_ns);
    void (*on_rttm)(void *state, int64_t now_ns, int64_t rtt_ns);
}
aa_congestion_control_strategy_table_t;

typedef struct aa_congestion_control_choice_stct
{
    const char *name;
    const aa_congestion_control_strategy_table_t *table;
    void *clientd;
    const char *options;
}
aa_congestion_control_choice_t;

/* One image's strategy instance. */
typedef struct aa_congestion_control_stct
{
    const aa_congestion_control_strategy_table_t *table;
    const char *name;
    void *state;                /* NULL for a strategy without create */
    int32_t window_length;      /* the initial window; the fixed one without create */
}
aa_congestion_control_t;

/* Registers the built-in strategies (once). */
int aa_congestion_control_register_builtins(void);

/* Chooses the strategy named by a channel's cc= value (NULL: "static"). Returns 0, or -1 with
 * AA_ERROR_CODE_INVALID_CHANNEL naming the value and every registered name. */
int aa_congestion_control_select(const char *cc, aa_congestion_control_choice_t *choice);

/* The window of a new image under the chosen strategy (params' cc_options and clientd come from it). */
int aa_congestion_control_initial_window_length(
    const aa_congestion_control_choice_t *choice, const aa_congestion_control_params_t *params, int32_t *window_length);

/* How many counters the chosen strategy wants per image, and their labels' prefixes. */
int aa_congestion_control_counters_count(const aa_congestion_control_choice_t *choice);
const char *aa_congestion_control_counter_label(const aa_congestion_control_choice_t *choice, int index);

/* Conductor: the image's instance (initial window checked, state created with params.counters). */
int aa_congestion_control_create(
    aa_congestion_control_t *cc, const aa_congestion_control_choice_t *choice, const aa_congestion_control_params_t *params,
    int64_t now_ns);
/* Conductor: frees the state (the caller frees the counters). Safe on a zeroed instance. */
void aa_congestion_control_delete(aa_congestion_control_t *cc);

/* Receiver. */
int32_t aa_congestion_control_on_track_rebuild(
    aa_congestion_control_t *cc, const aa_congestion_control_rebuild_t *rebuild, bool *force_sm);
bool aa_congestion_control_should_measure_rtt(aa_congestion_control_t *cc, int64_t now_ns);
void aa_congestion_control_on_rttm_sent(aa_congestion_control_t *cc, int64_t now_ns);
void aa_congestion_control_on_rttm(aa_congestion_control_t *cc, int64_t now_ns, int64_t rtt_ns);

/* ---- cubic, usable on its own (tests) ---- */

typedef struct aa_cubic_congestion_control_stct
{
    bool tcp_mode;
    bool measure_rtt;
    int64_t initial_rtt_ns;
    int32_t mtu;
    int32_t max_cwnd;
    int32_t cwnd;
    int32_t w_max;
    double k;
    int64_t rtt_ns;
    int64_t window_update_timeout_ns;
    int64_t rtt_timeout_ns;
    int64_t last_loss_timestamp_ns;
    int64_t last_update_timestamp_ns;
    int64_t last_rtt_timestamp_ns;
    volatile int64_t *rtt_indicator;      /* rcv-cc-cubic-rtt, or NULL */
    volatile int64_t *window_indicator;   /* rcv-cc-cubic-wnd, or NULL */
}
aa_cubic_congestion_control_t;

/* Applies cc=cubic options ("measure-rtt:true,tcp-mode:false,initial-rtt:1ms"; NULL or "": none) over
 * *config. Returns 0, or -1 with AA_ERROR_CODE_INVALID_CHANNEL naming the option and its form. */
int aa_cubic_congestion_control_parse_options(const char *options, aa_cubic_congestion_control_config_t *config);

/* max_window_length: the static window (min(rcv-wnd, term/2)); needs at least one MTU. */
int aa_cubic_congestion_control_init(
    aa_cubic_congestion_control_t *cubic, const aa_cubic_congestion_control_config_t *config, int32_t mtu,
    int32_t max_window_length, int64_t now_ns, volatile int64_t *rtt_indicator, volatile int64_t *window_indicator);
int32_t aa_cubic_congestion_control_window_length(const aa_cubic_congestion_control_t *cubic);
int32_t aa_cubic_congestion_control_on_track_rebuild(
    aa_cubic_congestion_control_t *cubic, const aa_congestion_control_rebuild_t *rebuild, bool *force_sm);
bool aa_cubic_congestion_control_should_measure_rtt(const aa_cubic_congestion_control_t *cubic, int64_t now_ns);
void aa_cubic_congestion_control_on_rttm_sent(aa_cubic_congestion_control_t *cubic, int64_t now_ns);
void aa_cubic_congestion_control_on_rttm(aa_cubic_congestion_control_t *cubic, int64_t now_ns, int64_t rtt_ns);

#endif
