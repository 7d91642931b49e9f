#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aa_flow_control.h"
#include "aa_retransmit_handler.h"
#include "aa_udp_frames.h"
#include "../_native/src/util/aa_error.h"
#include "../_native/src/util/aa_registry.h"

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

int aa_unicast_flow_control_strategy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params)
{
    if (NULL != params->fc_options && '\0' != *params->fc_options)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter fc=unicast takes no options, got '%s' (g: and t: belong to min and tagged)",
            params->fc_options);
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
    if (NULL != params->fc_options && '\0' != *params->fc_options)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter fc=max takes no options, got '%s' (g: and t: belong to min and tagged)",
            params->fc_options);
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

static pthread_once_t aa_flow_control_builtins_once = PTHREAD_ONCE_INIT;
static int aa_flow_control_builtins_result = 0;

static void aa_flow_control_register_builtins_once(void)
{
    if (aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, "unicast", &aa_unicast_flow_control_strategy_table, NULL,
            "snd-lmt = max(snd-lmt, SM position + receiver window): the fastest receiver paces the sender; no options") < 0 ||
        aa_registry_register_alias(AA_STRATEGY_KIND_FLOW_CONTROL, "aa_unicast_flow_control_strategy_supplier", "unicast",
            NULL, NULL) < 0 ||
        aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, "max", &aa_max_flow_control_strategy_table, NULL,
            "multicast default: snd-lmt = max(snd-lmt, SM position + receiver window), the fastest receiver paces the "
            "sender and slower ones may fall behind; retransmit multiple 4; no options") < 0)
    {
        aa_flow_control_builtins_result = -1;
    }
}

int aa_flow_control_strategy_register_builtins(void)
{
    pthread_once(&aa_flow_control_builtins_once, aa_flow_control_register_builtins_once);
    if (aa_flow_control_builtins_result < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "the built-in flow control strategies could not be registered (a name was taken before they were)");
        return -1;
    }
    return 0;
}

int aa_flow_control_strategy_select(
    bool has_group_semantics, const char *fc, const char *multicast_default, aa_flow_control_strategy_choice_t *choice)
{
    char name[AA_STRATEGY_NAME_MAX_LENGTH];
    const char *options = NULL;
    aa_strategy_t entry;
    const char *spec = NULL != fc ? fc :
        (has_group_semantics ? (NULL != multicast_default ? multicast_default : AA_FLOW_CONTROL_MULTICAST_DEFAULT) : "unicast");
    if (aa_flow_control_strategy_register_builtins() < 0 ||
        aa_registry_split_spec(spec, ',', name, sizeof(name), &options) < 0 ||
        aa_registry_lookup(AA_STRATEGY_KIND_FLOW_CONTROL, name, &entry) < 0)
    {
        char reason[1024];
        snprintf(reason, sizeof(reason), "%s", aa_errmsg());
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "%s%s: %s%s",
            NULL != fc ? "channel parameter fc=" : "the driver's default flow control ", spec, reason,
            0 == strcmp(name, "min") || 0 == strcmp(name, "tagged") ?
            " (min and tagged are not implemented by this driver yet)" : "");
        return -1;
    }
    if (NULL != entry.options && NULL != options)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter fc=%s: '%s' is an alias of %s with options '%s' already; give no options, or name %s",
            spec, name, entry.target, entry.options, entry.target);
        return -1;
    }
    choice->name = entry.name;
    choice->supplier = ((const aa_flow_control_strategy_table_t *)entry.table)->supplier;
    choice->clientd = entry.clientd;
    choice->options = NULL != options ? options : entry.options;
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
