/*
 * Sender-side NAK handling (reference 4.4), sans I/O.
 *
 * aa_retransmit_handler_on_nak() validates a NAK (term_offset in [0, termLength - 32] and a
 * multiple of the 32-byte frame alignment, length > 0) and clamps its range (docs/security.md,
 * Network: senders): it starts no lower than the bounds' low position (the receiver's last reported
 * consumption position) and ends at the end of its term and at snd-pos. A range whose start then
 * lies outside the resend window [snd-pos - termLength/2 - maxMessageLength, snd-pos) is refused
 * (no action is taken). A range whose start falls inside the range of an action already delayed
 * or lingering is a duplicate (the reference's dedupe); one that runs into the start of such an
 * action is cut there, so no byte is covered by two active actions. The resend is sized as
 * min(what is left, max retransmission length, the bounds' max length: the receiver's retransmit
 * budget). Then it takes an action from the pool: unicast keeps a single action and replaces it;
 * group semantics (multicast, MDC) has max_resend actions (default 16) and drops the NAK when none
 * is free (count "Retransmit Pool Overflow").
 * With a delay of 0 (aeron.retransmit.unicast.delay, the default, for every channel kind) the
 * resend is emitted at once; otherwise aa_retransmit_handler_process_timeouts() emits it when the
 * delay expires. Either way the action then lingers for the linger time (10 ms), suppressing
 * duplicates, and becomes free again.
 *
 * Resends go out through a callback as (term_id, term_offset, length), only while the position lies
 * in the resend window; the length is trimmed so the range ends at snd-pos. The caller rescans the
 * log from there in MTU-sized batches and resends the frames unchanged.
 *
 * No clock reads, no I/O; the action pool is allocated once by init.
 */
#ifndef AA_RETRANSMIT_HANDLER_H
#define AA_RETRANSMIT_HANDLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AA_RETRANSMIT_UNICAST_DELAY_DEFAULT_NS 0
#define AA_RETRANSMIT_UNICAST_LINGER_DEFAULT_NS (10 * 1000 * 1000LL)
#define AA_MAX_RESEND_DEFAULT 16
#define AA_MAX_RESEND_MAX 256
/* The receiver window the size estimate uses: the driver default, not the channel's. */
#define AA_RETRANSMIT_ESTIMATE_RECEIVER_WINDOW (128 * 1024)

typedef enum aa_retransmit_action_state_enum
{
    AA_RETRANSMIT_ACTION_INACTIVE,
    AA_RETRANSMIT_ACTION_DELAYED,
    AA_RETRANSMIT_ACTION_LINGERING
}
aa_retransmit_action_state_t;

typedef struct aa_retransmit_action_stct
{
    int64_t expiry_ns;
    int64_t position;     /* of term_id, term_offset */
    int32_t term_id;
    int32_t term_offset;
    int32_t length;
    aa_retransmit_action_state_t state;
}
aa_retransmit_action_t;

typedef enum aa_retransmit_nak_result_enum
{
    /* Offset outside [0, termLength - 32], not 32-byte aligned, or length <= 0: count as an invalid packet. */
    AA_RETRANSMIT_NAK_INVALID = -1,
    /* The offset is inside an action already delayed or lingering: ignored. */
    AA_RETRANSMIT_NAK_DUPLICATE = 0,
    /* Group semantics with every action busy: dropped, count a retransmit pool overflow. */
    AA_RETRANSMIT_NAK_POOL_OVERFLOW,
    /* Armed; the resend comes from process_timeouts once the delay expires. */
    AA_RETRANSMIT_NAK_DELAYED,
    /* The resend callback was called. */
    AA_RETRANSMIT_NAK_RESENT,
    /* The clamped range is empty or starts outside the resend window: refused, no action taken. */
    AA_RETRANSMIT_NAK_OUTSIDE_WINDOW,
    /* The bounds' max length (the receiver's retransmit budget) is spent: refused, no action taken. */
    AA_RETRANSMIT_NAK_OVER_BUDGET
}
aa_retransmit_nak_result_t;

/* What a publication allows one NAK (docs/security.md, Network: senders). */
typedef struct aa_retransmit_nak_bounds_stct
{
    /* Nothing below it is resent: the NAKing receiver's last reported consumption position. */
    int64_t low_position;
    /* The most this NAK may resend: what the receiver's retransmit budget has left. */
    int64_t max_length;
}
aa_retransmit_nak_bounds_t;

/* What on_nak armed (DELAYED or RESENT): the range and whether the budget cut it. */
typedef struct aa_retransmit_nak_armed_stct
{
    int64_t position;
    int32_t length;
    bool is_budget_limited;
}
aa_retransmit_nak_armed_t;

typedef void (*aa_retransmit_resend_func_t)(void *clientd, int32_t term_id, int32_t term_offset, size_t length);

typedef struct aa_retransmit_handler_params_stct
{
    int32_t term_length;
    int32_t initial_term_id;
    /* Multicast or MDC: a pool of max_resend actions; otherwise one action that is replaced. */
    bool has_group_semantics;
    /* Pool size for group semantics, 1..256 (0 means AA_MAX_RESEND_DEFAULT). */
    int32_t max_resend;
    int64_t delay_ns;
    int64_t linger_ns;
    /* Upper bound on one resend, from flow control (0 means the unicast estimate). */
    int32_t max_retransmission_length;
}
aa_retransmit_handler_params_t;

typedef struct aa_retransmit_handler_stct
{
    aa_retransmit_action_t *actions;
    size_t action_count;
    bool has_group_semantics;
    int64_t delay_ns;
    int64_t linger_ns;
    int32_t term_length;
    int32_t position_bits_to_shift;
    int32_t initial_term_id;
    int32_t max_message_length;
    int32_t max_retransmission_length;
}
aa_retransmit_handler_t;

/* receiverWindow x multiple with receiverWindow = min(128 KiB, termLength / 2): the multiple is 16
 * for unicast, min and tagged flow control, 4 for max (2 MiB for unicast on a 16 MiB term). */
int32_t aa_retransmit_handler_max_retransmission_length(int32_t term_length, int32_t multiple);

/* Fills params with the defaults for a unicast publication on a term of term_length. */
void aa_retransmit_handler_params_default(
    aa_retransmit_handler_params_t *params, int32_t term_length, int32_t initial_term_id);

int aa_retransmit_handler_init(aa_retransmit_handler_t *handler, const aa_retransmit_handler_params_t *params);
void aa_retransmit_handler_fini(aa_retransmit_handler_t *handler);

/* A NAK from a receiver, with no bounds but the resend window; sender_position is snd-pos now. */
aa_retransmit_nak_result_t aa_retransmit_handler_on_nak(
    aa_retransmit_handler_t *handler,
    int32_t term_id,
    int32_t term_offset,
    int32_t length,
    int64_t sender_position,
    int64_t now_ns,
    aa_retransmit_resend_func_t resend,
    void *clientd);

/* A NAK from a receiver within bounds (see above); armed (may be NULL) says what was armed. */
aa_retransmit_nak_result_t aa_retransmit_handler_on_nak_bounded(
    aa_retransmit_handler_t *handler,
    int32_t term_id,
    int32_t term_offset,
    int32_t length,
    int64_t sender_position,
    const aa_retransmit_nak_bounds_t *bounds,
    int64_t now_ns,
    aa_retransmit_resend_func_t resend,
    void *clientd,
    aa_retransmit_nak_armed_t *armed);

/* Emits delayed resends that are due and frees actions whose linger expired. Returns the number of
 * resend callbacks made. */
int aa_retransmit_handler_process_timeouts(
    aa_retransmit_handler_t *handler,
    int64_t now_ns,
    int64_t sender_position,
    aa_retransmit_resend_func_t resend,
    void *clientd);

/* Actions currently delayed or lingering. */
size_t aa_retransmit_handler_active_count(const aa_retransmit_handler_t *handler);

#endif
