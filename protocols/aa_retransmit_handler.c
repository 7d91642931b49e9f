#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "protocols/aa_retransmit_handler.h"
#include "protocols/aa_udp_frames.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_error.h"

int32_t aa_retransmit_handler_max_retransmission_length(int32_t term_length, int32_t multiple)
{
    int64_t window = term_length / 2 < AA_RETRANSMIT_ESTIMATE_RECEIVER_WINDOW ?
        term_length / 2 : AA_RETRANSMIT_ESTIMATE_RECEIVER_WINDOW;
    int64_t estimate = window * (multiple < 1 ? 1 : multiple);
    return estimate > INT32_MAX ? INT32_MAX : (int32_t)estimate;
}

void aa_retransmit_handler_params_default(
    aa_retransmit_handler_params_t *params, int32_t term_length, int32_t initial_term_id)
{
    memset(params, 0, sizeof(*params));
    params->term_length = term_length;
    params->initial_term_id = initial_term_id;
    params->has_group_semantics = false;
    params->max_resend = AA_MAX_RESEND_DEFAULT;
    params->delay_ns = AA_RETRANSMIT_UNICAST_DELAY_DEFAULT_NS;
    params->linger_ns = AA_RETRANSMIT_UNICAST_LINGER_DEFAULT_NS;
    params->max_retransmission_length = aa_retransmit_handler_max_retransmission_length(term_length, 16);
}

int aa_retransmit_handler_init(aa_retransmit_handler_t *handler, const aa_retransmit_handler_params_t *params)
{
    memset(handler, 0, sizeof(*handler));
    int32_t term_length = params->term_length;
    if (term_length < AA_LOGBUFFER_TERM_MIN_LENGTH || term_length > AA_LOGBUFFER_TERM_MAX_LENGTH ||
        0 != (term_length & (term_length - 1)))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "retransmit handler term length %d is not a power of two in [%d, %d]",
            term_length, AA_LOGBUFFER_TERM_MIN_LENGTH, AA_LOGBUFFER_TERM_MAX_LENGTH);
        return -1;
    }
    int32_t max_resend = 0 == params->max_resend ? AA_MAX_RESEND_DEFAULT : params->max_resend;
    if (max_resend < 1 || max_resend > AA_MAX_RESEND_MAX)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "max-resend %d is outside 1..%d", params->max_resend, AA_MAX_RESEND_MAX);
        return -1;
    }
    if (params->delay_ns < 0 || params->linger_ns < 0 || params->max_retransmission_length < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "retransmit delay (%" PRId64 " ns), linger (%" PRId64 " ns) and max length (%d) must be >= 0",
            params->delay_ns, params->linger_ns, params->max_retransmission_length);
        return -1;
    }

    size_t count = params->has_group_semantics ? (size_t)max_resend : 1;
    handler->actions = calloc(count, sizeof(aa_retransmit_action_t));
    if (NULL == handler->actions)
    {
        AA_SET_ERR(ENOMEM, "could not allocate %zu retransmit actions", count);
        return -1;
    }
    handler->action_count = count;
    handler->has_group_semantics = params->has_group_semantics;
    handler->delay_ns = params->delay_ns;
    handler->linger_ns = params->linger_ns;
    handler->term_length = term_length;
    handler->position_bits_to_shift = aa_position_bits_to_shift(term_length);
    handler->initial_term_id = params->initial_term_id;
    handler->max_message_length = aa_compute_max_message_length(term_length);
    handler->max_retransmission_length = 0 == params->max_retransmission_length ?
        aa_retransmit_handler_max_retransmission_length(term_length, 16) : params->max_retransmission_length;
    return 0;
}

void aa_retransmit_handler_fini(aa_retransmit_handler_t *handler)
{
    free(handler->actions);
    handler->actions = NULL;
    handler->action_count = 0;
}

/* Calls resend when the range starts inside [snd-pos - term/2 - maxMessage, snd-pos), trimmed to
 * end at snd-pos. Returns true when resend was called. */
static bool aa_retransmit_handler_resend(
    aa_retransmit_handler_t *handler, const aa_retransmit_action_t *action, int64_t sender_position,
    aa_retransmit_resend_func_t resend, void *clientd)
{
    int64_t resend_position = aa_udp_compute_position(
        action->term_id, action->term_offset, handler->position_bits_to_shift, handler->initial_term_id);
    int64_t bottom = sender_position - (handler->term_length / 2) - handler->max_message_length;
    if (resend_position < bottom || resend_position >= sender_position)
    {
        return false;
    }
    int64_t length = action->length;
    if (resend_position + length > sender_position)
    {
        length = sender_position - resend_position;
    }
    resend(clientd, action->term_id, action->term_offset, (size_t)length);
    return true;
}

static bool aa_retransmit_action_is_active(const aa_retransmit_action_t *action)
{
    return AA_RETRANSMIT_ACTION_INACTIVE != action->state;
}

aa_retransmit_nak_result_t aa_retransmit_handler_on_nak(
    aa_retransmit_handler_t *handler, int32_t term_id, int32_t term_offset, int32_t length, int64_t sender_position,
    int64_t now_ns, aa_retransmit_resend_func_t resend, void *clientd)
{
    aa_retransmit_nak_bounds_t bounds = { INT64_MIN, INT64_MAX };
    return aa_retransmit_handler_on_nak_bounded(
        handler, term_id, term_offset, length, sender_position, &bounds, now_ns, resend, clientd, NULL);
}

aa_retransmit_nak_result_t aa_retransmit_handler_on_nak_bounded(
    aa_retransmit_handler_t *handler, int32_t term_id, int32_t term_offset, int32_t length, int64_t sender_position,
    const aa_retransmit_nak_bounds_t *bounds, int64_t now_ns, aa_retransmit_resend_func_t resend, void *clientd,
    aa_retransmit_nak_armed_t *armed)
{
    if (term_offset < 0 || term_offset > handler->term_length - AA_DATA_HEADER_LENGTH || length <= 0 ||
        0 != (term_offset & (AA_LOGBUFFER_FRAME_ALIGNMENT - 1)))
    {
        return AA_RETRANSMIT_NAK_INVALID;
    }

    /* The range in positions, clamped to [low position, end of its term) and to snd-pos. */
    int64_t nak_position = aa_udp_compute_position(
        term_id, term_offset, handler->position_bits_to_shift, handler->initial_term_id);
    int64_t low = nak_position > bounds->low_position ? nak_position : bounds->low_position;
    int64_t high = nak_position + length;
    int64_t term_end = nak_position - term_offset + handler->term_length;
    high = high < term_end ? high : term_end;
    high = high < sender_position ? high : sender_position;
    int64_t bottom = sender_position - (handler->term_length / 2) - handler->max_message_length;
    if (low >= high || low < bottom)
    {
        return AA_RETRANSMIT_NAK_OUTSIDE_WINDOW;
    }

    /* Dedupe: a start inside an active range is a duplicate; a range running into one ends there. */
    aa_retransmit_action_t *free_action = NULL;
    for (size_t i = 0; i < handler->action_count; i++)
    {
        aa_retransmit_action_t *action = &handler->actions[i];
        if (aa_retransmit_action_is_active(action))
        {
            if (action->position <= low && low < action->position + action->length)
            {
                return AA_RETRANSMIT_NAK_DUPLICATE;
            }
            if (low < action->position && action->position < high)
            {
                high = action->position;
            }
        }
        else if (NULL == free_action)
        {
            free_action = action;
        }
    }

    int64_t retransmit_length = high - low;
    retransmit_length = retransmit_length < handler->max_retransmission_length ?
        retransmit_length : handler->max_retransmission_length;
    bool is_budget_limited = bounds->max_length < retransmit_length;
    if (is_budget_limited)
    {
        if (bounds->max_length <= 0)
        {
            return AA_RETRANSMIT_NAK_OVER_BUDGET;
        }
        retransmit_length = bounds->max_length;
    }

    aa_retransmit_action_t *action = free_action;
    if (NULL == action)
    {
        if (handler->has_group_semantics)
        {
            return AA_RETRANSMIT_NAK_POOL_OVERFLOW;
        }
        action = &handler->actions[0];
    }

    action->position = low;
    action->term_id = term_id;
    action->term_offset = term_offset + (int32_t)(low - nak_position);
    action->length = (int32_t)retransmit_length;
    if (NULL != armed)
    {
        armed->position = low;
        armed->length = action->length;
        armed->is_budget_limited = is_budget_limited;
    }
    if (handler->delay_ns > 0)
    {
        action->state = AA_RETRANSMIT_ACTION_DELAYED;
        action->expiry_ns = now_ns + handler->delay_ns;
        return AA_RETRANSMIT_NAK_DELAYED;
    }

    action->state = AA_RETRANSMIT_ACTION_LINGERING;
    action->expiry_ns = now_ns + handler->linger_ns;
    aa_retransmit_handler_resend(handler, action, sender_position, resend, clientd);
    return AA_RETRANSMIT_NAK_RESENT;
}

int aa_retransmit_handler_process_timeouts(
    aa_retransmit_handler_t *handler, int64_t now_ns, int64_t sender_position, aa_retransmit_resend_func_t resend,
    void *clientd)
{
    int resends = 0;
    for (size_t i = 0; i < handler->action_count; i++)
    {
        aa_retransmit_action_t *action = &handler->actions[i];
        if (AA_RETRANSMIT_ACTION_DELAYED == action->state)
        {
            if (now_ns >= action->expiry_ns)
            {
                action->state = AA_RETRANSMIT_ACTION_LINGERING;
                action->expiry_ns = now_ns + handler->linger_ns;
                if (aa_retransmit_handler_resend(handler, action, sender_position, resend, clientd))
                {
                    resends++;
                }
            }
        }
        else if (AA_RETRANSMIT_ACTION_LINGERING == action->state)
        {
            if (now_ns >= action->expiry_ns)
            {
                action->state = AA_RETRANSMIT_ACTION_INACTIVE;
            }
        }
    }
    return resends;
}

size_t aa_retransmit_handler_active_count(const aa_retransmit_handler_t *handler)
{
    size_t count = 0;
    for (size_t i = 0; i < handler->action_count; i++)
    {
        count += aa_retransmit_action_is_active(&handler->actions[i]) ? 1 : 0;
    }
    return count;
}
