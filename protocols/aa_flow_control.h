/*
 * Sender flow control (reference section 5), sans I/O: a strategy is a table of functions plus a
 * private state, built by a supplier that is looked up by name in the strategy registry
 * (util/aa_registry.h, kind AA_STRATEGY_KIND_FLOW_CONTROL; the entry's table is an
 * aa_flow_control_strategy_table_t). The sender feeds it status messages (as received bytes),
 * SETUP/ERR events and idle ticks, and it answers with the new sender limit (snd-lmt): the sender
 * never transmits beyond it.
 *
 * Selection: a channel's fc=<name>[,<options>] names the registered strategy its publication uses.
 * Without fc=, unicast channels use "unicast" and multicast/MDC channels the driver's multicast
 * default ("max" in the reference). Aeron ignores fc= on unicast channels; this driver applies it
 * (it ignores no channel parameter), so a name nobody registered is an error on any channel.
 *
 * Built in: "unicast" (alias "aa_unicast_flow_control_strategy_supplier"): on an SM,
 * snd-lmt = max(snd-lmt, SM consumption position + SM receiver window); idle, SETUP and ERR leave it
 * unchanged; it always has its required receivers; retransmit multiple 16; it takes no options.
 * "max" (the multicast default): the same limit rule, the fastest receiver paces the sender; retransmit
 * multiple 4; no options.
 *
 * "min" and "tagged" (reference 5; one implementation, min is tagged with a tag that always matches):
 * receivers are tracked by receiver id (last position, position + window, time of the last SM, EOS);
 * a newcomer is admitted unless its SM has EOS, its tag does not match (tagged: only 44-byte SMs whose
 * tag equals the group tag match; any other extra length counts as no tag), or it is more than one
 * window behind the slowest tracked receiver. On an SM: fewer than the group min size tracked -> the
 * limit stays; none tracked (min size 0) -> max(limit, position + window); else max(limit, min over
 * the tracked of position + window). On idle, receivers whose last SM is older than the receiver
 * timeout, or that said EOS (an SM with EOS, an ERR frame with their receiver id), are dropped, and
 * with at least the group min size (and one) tracked the limit becomes that minimum (it may fall).
 * A SEND_SETUP SM with a matching tag while receivers are tracked makes the next SETUP hold the limit
 * where it is, as a cap, for one receiver timeout or until a receiver is added. Required receivers:
 * tracked >= group min size (this gates is_connected). Retransmit multiple 16.
 * Options: g:<tag>[/<min size>] (min: g:/<min size> only, it does not filter by tag) and t:<receiver
 * timeout> with a unit (t:500ms); without them the driver's defaults apply (params below). They
 * count the receivers they track into receivers_counter (the publication's fc-receivers counter).
 *
 * Strategies allocate in their supplier; min and tagged grow their receiver table only when more
 * receivers join than it holds (8 at first). Every callback takes now_ns and reads no clock.
 */
#ifndef AA_FLOW_CONTROL_H
#define AA_FLOW_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AA_FLOW_CONTROL_RECEIVER_TIMEOUT_DEFAULT_NS (5 * 1000 * 1000 * 1000LL)
#define AA_FLOW_CONTROL_GROUP_MIN_SIZE_DEFAULT 0
#define AA_FLOW_CONTROL_GROUP_TAG_DEFAULT (-1)
#define AA_FLOW_CONTROL_MULTICAST_DEFAULT "max"
#define AA_FLOW_CONTROL_UNICAST_RETRANSMIT_MULTIPLE 16
#define AA_FLOW_CONTROL_MAX_RETRANSMIT_MULTIPLE 4
#define AA_FLOW_CONTROL_MIN_RETRANSMIT_MULTIPLE 16

typedef struct aa_flow_control_strategy_stct aa_flow_control_strategy_t;

/* A (non SEND_SETUP) status message of `length` bytes; returns the new sender limit. */
typedef int64_t (*aa_flow_control_strategy_on_sm_func_t)(
    void *state,
    const uint8_t *sm,
    size_t length,
    int64_t snd_lmt,
    int32_t initial_term_id,
    int32_t position_bits_to_shift,
    int64_t now_ns);

/* Periodic tick of the sender; returns the new sender limit. */
typedef int64_t (*aa_flow_control_strategy_on_idle_func_t)(
    void *state, int64_t now_ns, int64_t snd_lmt, int64_t snd_pos, bool is_end_of_stream);

/* The sender sent SETUP; returns the new sender limit. */
typedef int64_t (*aa_flow_control_strategy_on_setup_func_t)(
    void *state,
    const uint8_t *setup,
    size_t length,
    int64_t now_ns,
    int64_t snd_lmt,
    int32_t position_bits_to_shift,
    int64_t snd_pos);

/* An ERR frame from a receiver (min/tagged mark that receiver as gone). */
typedef void (*aa_flow_control_strategy_on_error_func_t)(void *state, const uint8_t *error, size_t length, int64_t now_ns);

/* An SM with the SEND_SETUP flag elicited a SETUP. */
typedef void (*aa_flow_control_strategy_on_trigger_send_setup_func_t)(
    void *state, const uint8_t *sm, size_t length, int64_t now_ns);

/* Whether enough receivers are tracked for the publication to count as connected. */
typedef bool (*aa_flow_control_strategy_has_required_receivers_func_t)(void *state);

/* The most one retransmit may resend on a term of term_length (receiver window x multiple). */
typedef int32_t (*aa_flow_control_strategy_max_retransmission_length_func_t)(void *state, int32_t term_length);

/* Releases the strategy and its state. */
typedef void (*aa_flow_control_strategy_fini_func_t)(aa_flow_control_strategy_t *strategy);

struct aa_flow_control_strategy_stct
{
    const char *name;
    aa_flow_control_strategy_on_sm_func_t on_status_message;
    aa_flow_control_strategy_on_idle_func_t on_idle;
    aa_flow_control_strategy_on_setup_func_t on_setup;
    aa_flow_control_strategy_on_error_func_t on_error;
    aa_flow_control_strategy_on_trigger_send_setup_func_t on_trigger_send_setup;
    aa_flow_control_strategy_has_required_receivers_func_t has_required_receivers;
    aa_flow_control_strategy_max_retransmission_length_func_t max_retransmission_length;
    aa_flow_control_strategy_fini_func_t fini;
    void *state;
    /* Set by the supplier: the strategy tracks receivers and wants a counter of them (fc-receivers). */
    bool tracks_receivers;
    /* Set by the publication's owner before the strategy is used, or NULL: the strategy stores the
     * number of receivers it tracks there (release) whenever it changes. */
    volatile int64_t *receivers_counter;
};

/* What a supplier may use to build a strategy for one publication. */
typedef struct aa_flow_control_strategy_params_stct
{
    /* The options after the name in the channel's fc= value ("g:/3,t:2s" of "min,g:/3,t:2s"), or an
     * alias's options; NULL when none. A strategy fails (AA_SET_ERR) on options it does not apply. */
    const char *fc_options;
    /* The registry entry's clientd. */
    void *clientd;
    int64_t registration_id;
    int32_t stream_id;
    int32_t initial_term_id;
    int32_t term_length;
    int64_t receiver_timeout_ns;
    int32_t group_min_size;
    int64_t group_tag;
}
aa_flow_control_strategy_params_t;

typedef int (*aa_flow_control_strategy_supplier_func_t)(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params);

/* A flow control entry of the strategy registry. */
typedef struct aa_flow_control_strategy_table_stct
{
    aa_flow_control_strategy_supplier_func_t supplier;
}
aa_flow_control_strategy_table_t;

/* A strategy chosen for a channel: its supplier and what to hand it. */
typedef struct aa_flow_control_strategy_choice_stct
{
    const char *name;                   /* the registered name the channel gave (or the default) */
    aa_flow_control_strategy_supplier_func_t supplier;
    void *clientd;
    const char *options;                /* points into the fc= text or the registry; NULL: none */
}
aa_flow_control_strategy_choice_t;

void aa_flow_control_strategy_params_default(aa_flow_control_strategy_params_t *params);

/* The unicast strategy's supplier (allocates; release with strategy->fini(strategy)). */
int aa_unicast_flow_control_strategy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params);

/* min and tagged (see above). */
int aa_min_flow_control_strategy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params);
int aa_tagged_flow_control_strategy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params);

/* The options of the reference's group strategies, fc=<name>,g:<tag>[/<min size>],t:<timeout>. */
typedef struct aa_flow_control_group_options_stct
{
    bool has_group;                 /* a g: option */
    bool has_group_tag;             /* g:<tag>..., not g:/<size> */
    int64_t group_tag;
    bool has_group_min_size;
    int32_t group_min_size;
    bool has_receiver_timeout;
    int64_t receiver_timeout_ns;
}
aa_flow_control_group_options_t;

/* Parses the options (NULL or "": none) of strategy `name`; -1 with AA_ERROR_CODE_INVALID_CHANNEL
 * naming the bad option and the grammar for anything else (unknown, repeated or malformed). */
int aa_flow_control_parse_group_options(
    const char *name, const char *options, aa_flow_control_group_options_t *parsed);

/* The max strategy's supplier (allocates; release with strategy->fini(strategy)). */
int aa_max_flow_control_strategy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params);

/* Registers the built-in strategies (once; later calls return at once). */
int aa_flow_control_strategy_register_builtins(void);

/* Chooses the strategy of a publication (see Selection above): fc is the channel's fc= value or
 * NULL, multicast_default the driver's default for group channels (NULL: "max"). Returns 0, or -1
 * with AA_ERROR_CODE_INVALID_CHANNEL naming the fc= value and every registered name. The options
 * are checked by the supplier, when the publication builds its strategy. */
int aa_flow_control_strategy_select(
    bool has_group_semantics, const char *fc, const char *multicast_default, aa_flow_control_strategy_choice_t *choice);

/* As aa_flow_control_strategy_select, with the driver's default for unicast channels too
 * (AERON_UNICAST_FLOW_CONTROL_STRATEGY; NULL or "": "unicast"). */
int aa_flow_control_strategy_select_with_defaults(
    bool has_group_semantics, const char *fc, const char *unicast_default, const char *multicast_default,
    aa_flow_control_strategy_choice_t *choice);

/* Builds the strategy of a choice for one publication (params->fc_options and clientd are set from
 * the choice). Returns 0, or -1 naming the strategy. */
int aa_flow_control_strategy_create(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_choice_t *choice,
    const aa_flow_control_strategy_params_t *params);

#endif
