#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocols/aa_flow_control.h"
#include "protocols/aa_retransmit_handler.h"
#include "protocols/aa_udp_frames.h"
#include "util/aa_parse.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"

void aa_flow_control_strategy_params_default(aa_flow_control_strategy_params_t *params)
{
    memset(params, 0, sizeof(*params));
    params->receiver_timeout_ns = AA_FLOW_CONTROL_RECEIVER_TIMEOUT_DEFAULT_NS;
    params->group_min_size = AA_FLOW_CONTROL_GROUP_MIN_SIZE_DEFAULT;
    params->group_tag = AA_FLOW_CONTROL_GROUP_TAG_DEFAULT;
}

/* ---- unicast ---- */

static int64_t aa_unicast_flow_control_on_status_message(
    void *state, const uint8_t *sm, size_t length, int64_t snd_lmt, int32_t initial_term_id,
    int32_t position_bits_to_shift, int64_t now_ns)
{
    (void)state;
    (void)now_ns;
    aa_udp_status_message_t message;
    if (aa_udp_frame_decode_status_message(sm, length, &message) < 0)
    {
        return snd_lmt;
    }
    int64_t position = aa_udp_compute_position(
        message.header.consumption_term_id, message.header.consumption_term_offset, position_bits_to_shift,
        initial_term_id);
    int64_t window_limit = position + message.header.receiver_window;
    return window_limit > snd_lmt ? window_limit : snd_lmt;
}

static int64_t aa_unicast_flow_control_on_idle(
    void *state, int64_t now_ns, int64_t snd_lmt, int64_t snd_pos, bool is_end_of_stream)
{
    (void)state;
    (void)now_ns;
    (void)snd_pos;
    (void)is_end_of_stream;
    return snd_lmt;
}

static int64_t aa_unicast_flow_control_on_setup(
    void *state, const uint8_t *setup, size_t length, int64_t now_ns, int64_t snd_lmt, int32_t position_bits_to_shift,
    int64_t snd_pos)
{
    (void)state;
    (void)setup;
    (void)length;
    (void)now_ns;
    (void)position_bits_to_shift;
    (void)snd_pos;
    return snd_lmt;
}

static void aa_unicast_flow_control_on_error(void *state, const uint8_t *error, size_t length, int64_t now_ns)
{
    (void)state;
    (void)error;
    (void)length;
    (void)now_ns;
}

static void aa_unicast_flow_control_on_trigger_send_setup(void *state, const uint8_t *sm, size_t length, int64_t now_ns)
{
    (void)state;
    (void)sm;
    (void)length;
    (void)now_ns;
}

static bool aa_unicast_flow_control_has_required_receivers(void *state)
{
    (void)state;
    return true;
}

static int32_t aa_unicast_flow_control_max_retransmission_length(void *state, int32_t term_length)
{
    (void)state;
    return aa_retransmit_handler_max_retransmission_length(term_length, AA_FLOW_CONTROL_UNICAST_RETRANSMIT_MULTIPLE);
}

static void aa_flow_control_strategy_free(aa_flow_control_strategy_t *strategy)
{
    if (NULL != strategy)
    {
        free(strategy->state);
        free(strategy);
    }
}

/* unicast and max take no options: -1 with an error naming the strategy when the channel gave some. */
static int aa_flow_control_refuse_options(const aa_flow_control_strategy_params_t *params, const char *name)
{
    if (NULL != params->fc_options && '\0' != *params->fc_options)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter fc=%s takes no options, got '%s' (g: and t: belong to min and tagged)",
            name, params->fc_options);
        return -1;
    }
    return 0;
}

int aa_unicast_flow_control_strategy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params)
{
    if (aa_flow_control_refuse_options(params, "unicast") < 0)
    {
        return -1;
    }
    aa_flow_control_strategy_t *s = calloc(1, sizeof(aa_flow_control_strategy_t));
    if (NULL == s)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory for the unicast flow control strategy");
        return -1;
    }
    s->name = "unicast";
    s->on_status_message = aa_unicast_flow_control_on_status_message;
    s->on_idle = aa_unicast_flow_control_on_idle;
    s->on_setup = aa_unicast_flow_control_on_setup;
    s->on_error = aa_unicast_flow_control_on_error;
    s->on_trigger_send_setup = aa_unicast_flow_control_on_trigger_send_setup;
    s->has_required_receivers = aa_unicast_flow_control_has_required_receivers;
    s->max_retransmission_length = aa_unicast_flow_control_max_retransmission_length;
    s->fini = aa_flow_control_strategy_free;
    s->state = NULL;
    *strategy = s;
    return 0;
}

/* ---- min and tagged (one implementation; min is tagged with a tag that always matches) ---- */

typedef struct aa_min_flow_control_receiver_stct
{
    int64_t receiver_id;
    int64_t last_position;
    int64_t last_position_plus_window;
    int64_t time_of_last_status_message_ns;
    bool is_eos;
}
aa_min_flow_control_receiver_t;

#define AA_MIN_FLOW_CONTROL_INITIAL_RECEIVERS 8

typedef struct aa_min_flow_control_state_stct
{
    aa_flow_control_strategy_t *strategy;   /* for its receivers counter */
    aa_min_flow_control_receiver_t *receivers;
    size_t receivers_count;
    size_t receivers_capacity;
    bool is_tagged;
    int64_t group_tag;
    int32_t group_min_size;
    int64_t receiver_timeout_ns;
    /* A tagged SEND_SETUP SM arrived while receivers were tracked: the next SETUP sets the cap. */
    bool is_setup_cap_pending;
    bool has_cap;
    int64_t cap;
    int64_t cap_expiry_ns;
}
aa_min_flow_control_state_t;

static bool aa_min_flow_control_matches(const aa_min_flow_control_state_t *state, const aa_udp_status_message_t *sm)
{
    return !state->is_tagged || (sm->has_group_tag && sm->group_tag == state->group_tag);
}

static void aa_min_flow_control_publish_count(aa_min_flow_control_state_t *state)
{
    volatile int64_t *counter = state->strategy->receivers_counter;
    if (NULL != counter)
    {
        aa_put_int64_release(counter, (int64_t)state->receivers_count);
    }
}

static int64_t aa_min_flow_control_capped(aa_min_flow_control_state_t *state, int64_t limit, int64_t now_ns)
{
    if (state->has_cap)
    {
        if (now_ns >= state->cap_expiry_ns)
        {
            state->has_cap = false;
        }
        else if (limit > state->cap)
        {
            return state->cap;
        }
    }
    return limit;
}

static int64_t aa_min_flow_control_on_status_message(
    void *vstate, const uint8_t *buffer, size_t length, int64_t snd_lmt, int32_t initial_term_id,
    int32_t position_bits_to_shift, int64_t now_ns)
{
    aa_min_flow_control_state_t *state = vstate;
    aa_udp_status_message_t sm;
    if (aa_udp_frame_decode_status_message(buffer, length, &sm) < 0)
    {
        return snd_lmt;
    }
    int64_t position = aa_udp_compute_position(
        sm.header.consumption_term_id, sm.header.consumption_term_offset, position_bits_to_shift, initial_term_id);
    int64_t position_plus_window = position + sm.header.receiver_window;
    bool is_eos = 0 != (sm.header.frame_header.flags & AA_STATUS_MESSAGE_HEADER_EOS_FLAG);
    bool matches = aa_min_flow_control_matches(state, &sm);
    bool is_existing = false;
    int64_t min_position = INT64_MAX;

    for (size_t i = 0; i < state->receivers_count; i++)
    {
        aa_min_flow_control_receiver_t *receiver = &state->receivers[i];
        if (matches && receiver->receiver_id == sm.header.receiver_id)
        {
            receiver->last_position = position > receiver->last_position ? position : receiver->last_position;
            receiver->last_position_plus_window = position_plus_window;
            receiver->time_of_last_status_message_ns = now_ns;
            receiver->is_eos = is_eos;
            is_existing = true;
        }
        if (receiver->last_position_plus_window < min_position)
        {
            min_position = receiver->last_position_plus_window;
        }
    }

    /* Admission (PR #1319): a newcomer more than one window behind the slowest is not tracked. */
    if (matches && !is_existing && !is_eos &&
        (0 == state->receivers_count || position_plus_window >= min_position - sm.header.receiver_window))
    {
        if (state->receivers_count == state->receivers_capacity)
        {
            /* beyond the capacity the supplier allocated: grow (a receiver joining, not the steady state) */
            size_t capacity = state->receivers_capacity * 2;
            aa_min_flow_control_receiver_t *grown = realloc(state->receivers, capacity * sizeof(*grown));
            if (NULL == grown)
            {
                return aa_min_flow_control_capped(state, snd_lmt, now_ns);  /* admitted with a later SM */
            }
            state->receivers = grown;
            state->receivers_capacity = capacity;
        }
        aa_min_flow_control_receiver_t *receiver = &state->receivers[state->receivers_count++];
        receiver->receiver_id = sm.header.receiver_id;
        receiver->last_position = position;
        receiver->last_position_plus_window = position_plus_window;
        receiver->time_of_last_status_message_ns = now_ns;
        receiver->is_eos = false;
        min_position = position_plus_window < min_position ? position_plus_window : min_position;
        state->has_cap = false;
        state->is_setup_cap_pending = false;
        aa_min_flow_control_publish_count(state);
    }

    int64_t limit;
    if (state->receivers_count < (size_t)state->group_min_size)
    {
        limit = snd_lmt;
    }
    else if (0 == state->receivers_count)
    {
        limit = position_plus_window > snd_lmt ? position_plus_window : snd_lmt;
    }
    else
    {
        limit = min_position > snd_lmt ? min_position : snd_lmt;
    }
    return aa_min_flow_control_capped(state, limit, now_ns);
}

static int64_t aa_min_flow_control_on_idle(
    void *vstate, int64_t now_ns, int64_t snd_lmt, int64_t snd_pos, bool is_end_of_stream)
{
    (void)snd_pos;
    (void)is_end_of_stream;
    aa_min_flow_control_state_t *state = vstate;
    int64_t min_position = INT64_MAX;
    size_t kept = 0;
    /* Rebuilt in place, order kept: every receiver is looked at once, however many go (reference 12.2). */
    for (size_t i = 0; i < state->receivers_count; i++)
    {
        aa_min_flow_control_receiver_t *receiver = &state->receivers[i];
        if (receiver->is_eos || now_ns > receiver->time_of_last_status_message_ns + state->receiver_timeout_ns)
        {
            continue;
        }
        if (receiver->last_position_plus_window < min_position)
        {
            min_position = receiver->last_position_plus_window;
        }
        if (kept != i)
        {
            state->receivers[kept] = *receiver;
        }
        kept++;
    }
    if (kept != state->receivers_count)
    {
        state->receivers_count = kept;
        aa_min_flow_control_publish_count(state);
    }
    int64_t limit = 0 == kept || kept < (size_t)state->group_min_size ? snd_lmt : min_position;
    return aa_min_flow_control_capped(state, limit, now_ns);
}

static int64_t aa_min_flow_control_on_setup(
    void *vstate, const uint8_t *setup, size_t length, int64_t now_ns, int64_t snd_lmt, int32_t position_bits_to_shift,
    int64_t snd_pos)
{
    (void)setup;
    (void)length;
    (void)position_bits_to_shift;
    (void)snd_pos;
    aa_min_flow_control_state_t *state = vstate;
    if (state->is_setup_cap_pending)
    {
        /* the SETUP a tracked group's newcomer asked for: hold the limit where it is for one receiver
         * timeout, so the newcomer is not overrun before its first SMs are tracked */
        state->is_setup_cap_pending = false;
        state->has_cap = true;
        state->cap = snd_lmt;
        state->cap_expiry_ns = now_ns + state->receiver_timeout_ns;
    }
    return aa_min_flow_control_capped(state, snd_lmt, now_ns);
}

static void aa_min_flow_control_on_error(void *vstate, const uint8_t *buffer, size_t length, int64_t now_ns)
{
    (void)now_ns;
    aa_min_flow_control_state_t *state = vstate;
    aa_udp_error_t error;
    if (aa_udp_frame_decode_error(buffer, length, &error) < 0)
    {
        return;
    }
    for (size_t i = 0; i < state->receivers_count; i++)
    {
        if (state->receivers[i].receiver_id == error.header.receiver_id)
        {
            state->receivers[i].is_eos = true;
        }
    }
}

static void aa_min_flow_control_on_trigger_send_setup(void *vstate, const uint8_t *buffer, size_t length, int64_t now_ns)
{
    (void)now_ns;
    aa_min_flow_control_state_t *state = vstate;
    aa_udp_status_message_t sm;
    if (aa_udp_frame_decode_status_message(buffer, length, &sm) < 0)
    {
        return;
    }
    if (state->receivers_count > 0 && aa_min_flow_control_matches(state, &sm))
    {
        state->is_setup_cap_pending = true;
    }
}

static bool aa_min_flow_control_has_required_receivers(void *vstate)
{
    aa_min_flow_control_state_t *state = vstate;
    return state->receivers_count >= (size_t)state->group_min_size;
}

static int32_t aa_min_flow_control_max_retransmission_length(void *vstate, int32_t term_length)
{
    (void)vstate;
    return aa_retransmit_handler_max_retransmission_length(term_length, AA_FLOW_CONTROL_MIN_RETRANSMIT_MULTIPLE);
}

static void aa_min_flow_control_fini(aa_flow_control_strategy_t *strategy)
{
    if (NULL != strategy)
    {
        aa_min_flow_control_state_t *state = strategy->state;
        if (NULL != state)
        {
            free(state->receivers);
        }
        aa_flow_control_strategy_free(strategy);
    }
}

int aa_flow_control_parse_group_options(
    const char *name, const char *options, aa_flow_control_group_options_t *parsed)
{
    static const char *const grammar =
        "g:<group tag>[/<group min size>] and t:<receiver timeout>, comma separated (e.g. fc=min,g:/2,t:500ms or "
        "fc=tagged,g:1001/2,t:2s)";
    memset(parsed, 0, sizeof(*parsed));
    if (NULL == options || '\0' == *options)
    {
        return 0;
    }
    char copy[256];
    if (strlen(options) >= sizeof(copy))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel parameter fc=%s,%s: the options are too long; %s takes %s",
            name, options, name, grammar);
        return -1;
    }
    snprintf(copy, sizeof(copy), "%s", options);
    char *save = NULL;
    for (char *token = strtok_r(copy, ",", &save); NULL != token; token = strtok_r(NULL, ",", &save))
    {
        if (0 == strncmp(token, "t:", 2))
        {
            int64_t timeout = aa_parse_duration_ns(token + 2);
            if (parsed->has_receiver_timeout || timeout <= 0)
            {
                AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                    "channel parameter fc=%s,%s: %s '%s'; give one receiver timeout above 0 with a unit, e.g. t:500ms "
                    "or t:5s (%s takes %s)", name, options,
                    parsed->has_receiver_timeout ? "a second receiver timeout" : "malformed receiver timeout", token,
                    name, grammar);
                return -1;
            }
            parsed->has_receiver_timeout = true;
            parsed->receiver_timeout_ns = timeout;
        }
        else if (0 == strncmp(token, "g:", 2))
        {
            const char *tag = token + 2;
            char *slash = strchr(token + 2, '/');
            const char *size = NULL;
            if (NULL != slash)
            {
                *slash = '\0';
                size = slash + 1;
            }
            char *end = NULL;
            errno = 0;
            long long tag_value = '\0' != *tag ? strtoll(tag, &end, 10) : 0;
            bool tag_ok = '\0' == *tag || (0 == errno && '\0' == *end);
            errno = 0;
            long long size_value = NULL != size ? strtoll(size, &end, 10) : 0;
            bool size_ok = NULL == size || ('\0' != *size && 0 == errno && '\0' == *end && size_value >= 0 &&
                size_value <= INT32_MAX);
            bool has_tag = '\0' != *tag;
            if (NULL != slash)
            {
                *slash = '/';
            }
            if (parsed->has_group || !tag_ok || !size_ok || (!has_tag && NULL == size))
            {
                AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                    "channel parameter fc=%s,%s: %s '%s'; write g:<group tag> with a 64-bit integer tag, optionally "
                    "followed by /<group min size> (an integer from 0), or g:/<group min size> alone (%s takes %s)",
                    name, options, parsed->has_group ? "a second group option" : "malformed group option", token,
                    name, grammar);
                return -1;
            }
            parsed->has_group = true;
            parsed->has_group_tag = has_tag;
            parsed->group_tag = (int64_t)tag_value;
            parsed->has_group_min_size = NULL != size;
            parsed->group_min_size = (int32_t)size_value;
        }
        else
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel parameter fc=%s,%s: unknown option '%s'; %s takes %s", name, options, token, name, grammar);
            return -1;
        }
    }
    return 0;
}

static int aa_min_flow_control_supplier_common(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params, bool is_tagged)
{
    const char *name = is_tagged ? "tagged" : "min";
    aa_flow_control_group_options_t options;
    if (aa_flow_control_parse_group_options(name, params->fc_options, &options) < 0)
    {
        return -1;
    }
    if (!is_tagged && options.has_group_tag)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter fc=min,%s: min tracks every receiver and does not filter by group tag, so the tag %" PRId64
            " would not be applied; give only the group min size (g:/<size>), or use fc=tagged,g:%" PRId64 " to track "
            "the receivers with that tag", params->fc_options, options.group_tag, options.group_tag);
        return -1;
    }
    aa_flow_control_strategy_t *s = calloc(1, sizeof(aa_flow_control_strategy_t));
    aa_min_flow_control_state_t *state = calloc(1, sizeof(aa_min_flow_control_state_t));
    aa_min_flow_control_receiver_t *receivers = calloc(AA_MIN_FLOW_CONTROL_INITIAL_RECEIVERS, sizeof(*receivers));
    if (NULL == s || NULL == state || NULL == receivers)
    {
        free(s);
        free(state);
        free(receivers);
        AA_SET_ERR(ENOMEM, "out of memory for the %s flow control strategy", name);
        return -1;
    }
    state->strategy = s;
    state->receivers = receivers;
    state->receivers_capacity = AA_MIN_FLOW_CONTROL_INITIAL_RECEIVERS;
    state->is_tagged = is_tagged;
    state->group_tag = options.has_group_tag ? options.group_tag : params->group_tag;
    state->group_min_size = options.has_group_min_size ? options.group_min_size : params->group_min_size;
    state->receiver_timeout_ns = options.has_receiver_timeout ? options.receiver_timeout_ns : params->receiver_timeout_ns;
    if (state->group_min_size < 0 || state->receiver_timeout_ns <= 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "%s flow control: the group min size (%" PRId32 ") must be at least 0 and the receiver timeout (%" PRId64
            " ns) above 0; check AERON_FLOW_CONTROL_GROUP_MIN_SIZE and AERON_FLOW_CONTROL_RECEIVER_TIMEOUT", name,
            state->group_min_size, state->receiver_timeout_ns);
        free(receivers);
        free(state);
        free(s);
        return -1;
    }
    s->name = name;
    s->on_status_message = aa_min_flow_control_on_status_message;
    s->on_idle = aa_min_flow_control_on_idle;
    s->on_setup = aa_min_flow_control_on_setup;
    s->on_error = aa_min_flow_control_on_error;
    s->on_trigger_send_setup = aa_min_flow_control_on_trigger_send_setup;
    s->has_required_receivers = aa_min_flow_control_has_required_receivers;
    s->max_retransmission_length = aa_min_flow_control_max_retransmission_length;
    s->fini = aa_min_flow_control_fini;
    s->tracks_receivers = true;
    s->receivers_counter = NULL;
    s->state = state;
    *strategy = s;
    return 0;
}

int aa_min_flow_control_strategy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params)
{
    return aa_min_flow_control_supplier_common(strategy, params, false);
}

int aa_tagged_flow_control_strategy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params)
{
    return aa_min_flow_control_supplier_common(strategy, params, true);
}

/* ---- max (reference 5): the unicast rule on every callback, the fastest receiver paces the sender; a
 * smaller retransmit multiple (4), as one resend reaches every receiver of the group ---- */

static int32_t aa_max_flow_control_max_retransmission_length(void *state, int32_t term_length)
{
    (void)state;
    return aa_retransmit_handler_max_retransmission_length(term_length, AA_FLOW_CONTROL_MAX_RETRANSMIT_MULTIPLE);
}

int aa_max_flow_control_strategy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params)
{
    if (aa_flow_control_refuse_options(params, "max") < 0)
    {
        return -1;
    }
    aa_flow_control_strategy_params_t unicast = *params;
    unicast.fc_options = NULL;
    if (aa_unicast_flow_control_strategy_supplier(strategy, &unicast) < 0)
    {
        return -1;
    }
    (*strategy)->name = "max";
    (*strategy)->max_retransmission_length = aa_max_flow_control_max_retransmission_length;
    return 0;
}

static const aa_flow_control_strategy_table_t aa_max_flow_control_strategy_table =
{
    aa_max_flow_control_strategy_supplier
};

/* ---- the registry ---- */

static const aa_flow_control_strategy_table_t aa_unicast_flow_control_strategy_table =
{
    aa_unicast_flow_control_strategy_supplier
};
static const aa_flow_control_strategy_table_t aa_min_flow_control_strategy_table = { aa_min_flow_control_strategy_supplier };
static const aa_flow_control_strategy_table_t aa_tagged_flow_control_strategy_table =
{
    aa_tagged_flow_control_strategy_supplier
};

static int aa_flow_control_register_min_and_tagged(void)
{
    return aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, "min", &aa_min_flow_control_strategy_table, NULL,
            "snd-lmt = min over tracked receivers of SM position + window: the slowest receiver paces the sender; "
            "options g:/<group min size> and t:<receiver timeout>") < 0 ||
        aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, "tagged", &aa_tagged_flow_control_strategy_table, NULL,
            "as min, over the receivers whose SMs carry the group tag; options g:<tag>[/<group min size>] and "
            "t:<receiver timeout>") < 0 ? -1 : 0;
}

static int aa_flow_control_register_all(void)
{
    return (aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, "unicast", &aa_unicast_flow_control_strategy_table, NULL,
            "snd-lmt = max(snd-lmt, SM position + receiver window): the fastest receiver paces the sender; no options") < 0 ||
        aa_registry_register_alias(AA_STRATEGY_KIND_FLOW_CONTROL, "aa_unicast_flow_control_strategy_supplier", "unicast",
            NULL, NULL) < 0 ||
        aa_flow_control_register_min_and_tagged() < 0 ||
        aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, "max", &aa_max_flow_control_strategy_table, NULL,
            "multicast default: snd-lmt = max(snd-lmt, SM position + receiver window), the fastest receiver paces the "
            "sender and slower ones may fall behind; retransmit multiple 4; no options") < 0) ? -1 : 0;
}

int aa_flow_control_strategy_register_builtins(void)
{
    static aa_registry_builtins_t builtins = AA_REGISTRY_BUILTINS_INIT;
    return aa_registry_register_builtins(&builtins, aa_flow_control_register_all, "flow control strategies");
}

int aa_flow_control_strategy_select(
    bool has_group_semantics, const char *fc, const char *multicast_default, aa_flow_control_strategy_choice_t *choice)
{
    return aa_flow_control_strategy_select_with_defaults(has_group_semantics, fc, NULL, multicast_default, choice);
}

int aa_flow_control_strategy_select_with_defaults(
    bool has_group_semantics, const char *fc, const char *unicast_default, const char *multicast_default,
    aa_flow_control_strategy_choice_t *choice)
{
    char name[AA_STRATEGY_NAME_MAX_LENGTH];
    const char *options = NULL;
    aa_strategy_t entry;
    const char *spec = NULL != fc ? fc :
        (has_group_semantics ? (NULL != multicast_default ? multicast_default : AA_FLOW_CONTROL_MULTICAST_DEFAULT) :
        (NULL != unicast_default && '\0' != *unicast_default ? unicast_default : "unicast"));
    if (aa_flow_control_strategy_register_builtins() < 0 ||
        aa_registry_split_spec(spec, ',', name, sizeof(name), &options) < 0 ||
        aa_registry_lookup(AA_STRATEGY_KIND_FLOW_CONTROL, name, &entry) < 0)
    {
        char reason[1024];
        snprintf(reason, sizeof(reason), "%s", aa_errmsg());
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "%s%s: %s",
            NULL != fc ? "channel parameter fc=" : "the driver's default flow control ", spec, reason);
        return -1;
    }
    if (aa_registry_alias_options(&entry, "fc", spec, name, options, &choice->options) < 0)
    {
        return -1;
    }
    choice->name = entry.name;
    choice->supplier = ((const aa_flow_control_strategy_table_t *)entry.table)->supplier;
    choice->clientd = entry.clientd;
    return 0;
}

int aa_flow_control_strategy_create(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_choice_t *choice,
    const aa_flow_control_strategy_params_t *params)
{
    aa_flow_control_strategy_params_t p = *params;
    p.fc_options = choice->options;
    p.clientd = choice->clientd;
    *strategy = NULL;
    if (choice->supplier(strategy, &p) < 0)
    {
        AA_APPEND_ERR("flow control '%s'", choice->name);
        *strategy = NULL;
        return -1;
    }
    return 0;
}
