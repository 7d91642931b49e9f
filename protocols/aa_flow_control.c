#include <stdlib.h>
#include <string.h>

#include "aa_flow_control.h"
#include "aa_retransmit_handler.h"
#include "aa_udp_frames.h"
#include "../_native/src/util/aa_error.h"

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
    (void)params;
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

/* ---- suppliers by name ---- */

typedef struct aa_flow_control_strategy_supplier_entry_stct
{
    const char *alias;
    const char *name;
    aa_flow_control_strategy_supplier_func_t supplier;
}
aa_flow_control_strategy_supplier_entry_t;

static const aa_flow_control_strategy_supplier_entry_t aa_flow_control_strategy_suppliers[] =
{
    { "unicast", "aa_unicast_flow_control_strategy_supplier", aa_unicast_flow_control_strategy_supplier },
};

/* Names of reference 5 that have no implementation yet. */
static const char *const aa_flow_control_strategy_planned[] = { "max", "min", "tagged" };

aa_flow_control_strategy_supplier_func_t aa_flow_control_strategy_supplier_load(const char *name)
{
    if (NULL == name || '\0' == *name)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s", "flow control strategy name is empty");
        return NULL;
    }
    for (size_t i = 0; i < sizeof(aa_flow_control_strategy_suppliers) / sizeof(aa_flow_control_strategy_suppliers[0]); i++)
    {
        const aa_flow_control_strategy_supplier_entry_t *e = &aa_flow_control_strategy_suppliers[i];
        if (0 == strcmp(name, e->alias) || 0 == strcmp(name, e->name))
        {
            return e->supplier;
        }
    }
    for (size_t i = 0; i < sizeof(aa_flow_control_strategy_planned) / sizeof(aa_flow_control_strategy_planned[0]); i++)
    {
        if (0 == strcmp(name, aa_flow_control_strategy_planned[i]))
        {
            AA_SET_ERR(AA_ERROR_CODE_NOT_SUPPORTED, "flow control strategy '%s' is not implemented yet (only unicast is)", name);
            return NULL;
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "unknown flow control strategy '%s'; known: unicast (max, min, tagged planned)", name);
    return NULL;
}

aa_flow_control_strategy_supplier_func_t aa_flow_control_strategy_supplier_select(
    bool has_group_semantics, const char *fc_options, const char *multicast_default)
{
    if (!has_group_semantics)
    {
        return aa_flow_control_strategy_supplier_load("unicast");
    }

    if (NULL == fc_options)
    {
        return aa_flow_control_strategy_supplier_load(
            NULL != multicast_default ? multicast_default : AA_FLOW_CONTROL_MULTICAST_DEFAULT);
    }

    char name[16];
    const char *comma = strchr(fc_options, ',');
    size_t name_length = NULL == comma ? strlen(fc_options) : (size_t)(comma - fc_options);
    if (name_length >= sizeof(name))
    {
        name_length = sizeof(name) - 1;
    }
    memcpy(name, fc_options, name_length);
    name[name_length] = '\0';
    if (0 != strcmp(name, "max") && 0 != strcmp(name, "min") && 0 != strcmp(name, "tagged"))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "fc=%s: a multicast or MDC channel takes max, min or tagged", fc_options);
        return NULL;
    }
    return aa_flow_control_strategy_supplier_load(name);
}
