/*
 * Sender flow control (reference section 5), sans I/O: a strategy is a table of functions plus a
 * private state, built by a supplier that is looked up by name in a static table. The sender feeds
 * it status messages (as received bytes), SETUP/ERR events and idle ticks, and it answers with the
 * new sender limit (snd-lmt): the sender never transmits beyond it.
 *
 * Implemented: "unicast" (always used on unicast channels; the fc= parameter is ignored there):
 * on an SM, snd-lmt = max(snd-lmt, SM consumption position + SM receiver window); idle, SETUP and
 * ERR leave it unchanged; it always has its required receivers; retransmit multiple 16.
 * Multicast and MDC channels take fc=max|min|tagged (default max); those strategies are not
 * implemented yet and their names load with AA_ERROR_CODE_NOT_SUPPORTED.
 *
 * Strategies only allocate in their supplier; every callback takes now_ns and reads no clock.
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
};

/* What a supplier may use to build a strategy for one publication. */
typedef struct aa_flow_control_strategy_params_stct
{
    /* The channel's fc= value ("min,g:/3,t:2s"), or NULL. Ignored by unicast. */
    const char *fc_options;
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

void aa_flow_control_strategy_params_default(aa_flow_control_strategy_params_t *params);

/* The unicast strategy's supplier (allocates; release with strategy->fini(strategy)). */
int aa_unicast_flow_control_strategy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params);

/* Looks a supplier up by alias ("unicast") or full function name. NULL with AA_SET_ERR when the
 * name is unknown, or NOT_SUPPORTED for the names reserved for later strategies (max, min, tagged). */
aa_flow_control_strategy_supplier_func_t aa_flow_control_strategy_supplier_load(const char *name);

/* Picks the supplier for a publication (reference 5): unicast channels always get "unicast";
 * multicast/MDC channels (has_group_semantics) take the name in front of the first ',' of the URI's
 * fc_options, which must be max, min or tagged, or, without fc=, the driver's multicast_default
 * supplier name (NULL: "max"). */
aa_flow_control_strategy_supplier_func_t aa_flow_control_strategy_supplier_select(
    bool has_group_semantics, const char *fc_options, const char *multicast_default);

#endif
