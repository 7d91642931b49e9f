#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "media/aa_loss_generator.h"
#include "protocols/aa_udp_protocol.h"
#include "util/aa_error.h"

#define AA_LOSS_SEND_SEED_MIX 0xD1B54A32D192ED03ULL

/* A datagram held back (reorder) or waiting to go out again (dup on send), in its own memory. */
typedef struct aa_loss_copy_stct
{
    aa_udp_datagram_t datagram;
    bool is_ready;          /* send: goes out first in the next call */
    bool is_carried;        /* held since before the current call */
    bool is_placed;         /* send: in the current call's output */
    size_t origin;          /* send: the input it copies, in the current call */
    size_t placed_at;       /* send: its output index in the current call */
    size_t due_after;       /* send: the output index of the datagram it follows, when not carried */
}
aa_loss_copy_t;

#define AA_LOSS_MAX_COPIES (2 * AA_UDP_TRANSPORT_MAX_BATCH + 2)

typedef struct aa_loss_direction_stct
{
    bool is_enabled;
    /* per frame type, cumulative: drop, drop + dup, drop + dup + reorder */
    double thresholds[AA_LOSS_FRAME_TYPE_COUNT][3];
    uint64_t prng_state;
    aa_loss_generator_stats_t stats;
    size_t copies_count;
    aa_loss_copy_t copies[AA_LOSS_MAX_COPIES];
}
aa_loss_direction_t;

typedef struct aa_loss_send_plan_stct
{
    aa_udp_datagram_t out[2 * AA_UDP_TRANSPORT_MAX_BATCH + AA_LOSS_MAX_COPIES];
    size_t out_count;
    size_t input_entry[AA_UDP_TRANSPORT_MAX_BATCH];                   /* output index of the input, SIZE_MAX for none */
}
aa_loss_send_plan_t;

typedef struct aa_loss_generator_stct
{
    aa_udp_transport_bindings_t bindings;
    const aa_udp_transport_bindings_t *inner;
    aa_loss_direction_t receive;
    aa_loss_direction_t send;
    aa_loss_send_plan_t plan;
}
aa_loss_generator_t;

typedef enum aa_loss_decision_enum
{
    AA_LOSS_DECISION_DROP,
    AA_LOSS_DECISION_DUPLICATE,
    AA_LOSS_DECISION_REORDER,
    AA_LOSS_DECISION_PASS
}
aa_loss_decision_t;

static const char *const aa_loss_frame_type_names[] = { "any", "data", "setup", "sm", "nak", "rttm", "err", NULL };

/* splitmix64 (Steele, Lea, Flood 2014): one 64-bit output per step, any seed including 0. */
static uint64_t aa_loss_next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

aa_loss_frame_type_t aa_loss_generator_frame_type(const uint8_t *buffer, size_t length)
{
    if (length < sizeof(aa_frame_header_t))
    {
        return AA_LOSS_FRAME_OTHER;
    }
    aa_frame_header_t header;
    memcpy(&header, buffer, sizeof(header));
    switch (header.type)
    {
        case AA_HDR_TYPE_PAD:
        case AA_HDR_TYPE_DATA:
            return AA_LOSS_FRAME_DATA;
        case AA_HDR_TYPE_SETUP:
            return AA_LOSS_FRAME_SETUP;
        case AA_HDR_TYPE_SM:
            return AA_LOSS_FRAME_SM;
        case AA_HDR_TYPE_NAK:
            return AA_LOSS_FRAME_NAK;
        case AA_HDR_TYPE_RTTM:
            return AA_LOSS_FRAME_RTTM;
        case AA_HDR_TYPE_ERR:
            return AA_LOSS_FRAME_ERR;
        default:
            return AA_LOSS_FRAME_OTHER;
    }
}

static int aa_loss_rule_error(const char *rule, const char *problem)
{
    AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
        "loss rule '%s': %s; write <action>:<frame type>:<rate>[,...] with action drop, dup or reorder, frame type "
        "data, setup, sm, nak, rttm, err or any, and rate a probability such as 0.05 or 5%% (e.g. drop:data:0.1,dup:any:1%%)",
        rule, problem);
    return -1;
}

static char *aa_loss_trim(char *text)
{
    while (' ' == *text || '\t' == *text)
    {
        text++;
    }
    size_t length = strlen(text);
    while (length > 0 && (' ' == text[length - 1] || '\t' == text[length - 1]))
    {
        text[--length] = '\0';
    }
    return text;
}

static int aa_loss_parse_rule(char *text, aa_loss_rule_t *rule)
{
    char *save = NULL;
    char original[AA_LOSS_GENERATOR_SPEC_MAX_LENGTH];
    snprintf(original, sizeof(original), "%s", text);
    char *action = strtok_r(text, ":", &save);
    char *frame_type = strtok_r(NULL, ":", &save);
    char *rate = strtok_r(NULL, ":", &save);
    if (NULL == action || NULL == frame_type || NULL == rate || NULL != strtok_r(NULL, ":", &save))
    {
        return aa_loss_rule_error(original, "expected three parts separated by ':'");
    }
    action = aa_loss_trim(action);
    frame_type = aa_loss_trim(frame_type);
    rate = aa_loss_trim(rate);

    if (0 == strcmp(action, "drop"))
    {
        rule->action = AA_LOSS_ACTION_DROP;
    }
    else if (0 == strcmp(action, "dup") || 0 == strcmp(action, "duplicate"))
    {
        rule->action = AA_LOSS_ACTION_DUPLICATE;
    }
    else if (0 == strcmp(action, "reorder"))
    {
        rule->action = AA_LOSS_ACTION_REORDER;
    }
    else
    {
        return aa_loss_rule_error(original, "unknown action");
    }

    bool found = false;
    for (int i = 0; NULL != aa_loss_frame_type_names[i]; i++)
    {
        if (0 == strcmp(frame_type, aa_loss_frame_type_names[i]))
        {
            rule->frame_type = (aa_loss_frame_type_t)i;
            found = true;
        }
    }
    if (!found)
    {
        return aa_loss_rule_error(original, "unknown frame type");
    }

    char *end = NULL;
    errno = 0;
    double value = strtod(rate, &end);
    if (end != rate && '%' == *end)
    {
        value /= 100.0;
        end++;
    }
    if (0 != errno || end == rate || '\0' != *end || !isfinite(value) || value < 0.0 || value > 1.0)
    {
        return aa_loss_rule_error(original, "the rate must be a number from 0 to 1, or a percentage from 0% to 100%");
    }
    rule->rate = value;
    return 0;
}

static int aa_loss_compute_thresholds(const aa_loss_generator_params_t *params, double thresholds[][3])
{
    for (int type = AA_LOSS_FRAME_DATA; type < AA_LOSS_FRAME_TYPE_COUNT; type++)
    {
        double sums[3] = { 0.0, 0.0, 0.0 };
        for (size_t i = 0; i < params->rules_count; i++)
        {
            const aa_loss_rule_t *rule = &params->rules[i];
            if (AA_LOSS_FRAME_ANY == rule->frame_type || type == (int)rule->frame_type)
            {
                sums[rule->action] += rule->rate;
            }
        }
        if (sums[0] + sums[1] + sums[2] > 1.0 + 1e-9)
        {
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                "loss rules '%s': the rates that apply to %s frames add up to %g, more than 1",
                params->spec, AA_LOSS_FRAME_OTHER == type ? "other" : aa_loss_frame_type_names[type],
                sums[0] + sums[1] + sums[2]);
            return -1;
        }
        thresholds[type][0] = sums[0];
        thresholds[type][1] = sums[0] + sums[1];
        thresholds[type][2] = sums[0] + sums[1] + sums[2];
    }
    return 0;
}

int aa_loss_generator_params_parse(aa_loss_generator_params_t *params, const char *spec)
{
    memset(params, 0, sizeof(*params));
    if (NULL == spec)
    {
        return 0;
    }
    if (strlen(spec) >= sizeof(params->spec))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "loss rules are %zu characters long, at most %zu are accepted",
            strlen(spec), sizeof(params->spec) - 1);
        return -1;
    }
    char copy[AA_LOSS_GENERATOR_SPEC_MAX_LENGTH];
    snprintf(copy, sizeof(copy), "%s", spec);
    char *text = aa_loss_trim(copy);
    if ('\0' == *text)
    {
        return 0;
    }
    aa_loss_generator_params_t parsed;
    memset(&parsed, 0, sizeof(parsed));
    snprintf(parsed.spec, sizeof(parsed.spec), "%s", spec);
    char *cursor = text;
    while (NULL != cursor)
    {
        char *comma = strchr(cursor, ',');
        if (NULL != comma)
        {
            *comma = '\0';
        }
        char *rule = aa_loss_trim(cursor);
        if ('\0' == *rule)
        {
            return aa_loss_rule_error(spec, "an empty rule (two commas in a row, or a comma at an end)");
        }
        if (parsed.rules_count >= AA_LOSS_GENERATOR_MAX_RULES)
        {
            return aa_loss_rule_error(spec, "more than 16 rules");
        }
        if (aa_loss_parse_rule(rule, &parsed.rules[parsed.rules_count]) < 0)
        {
            return -1;
        }
        parsed.rules_count++;
        cursor = NULL == comma ? NULL : comma + 1;
    }
    double thresholds[AA_LOSS_FRAME_TYPE_COUNT][3];
    if (aa_loss_compute_thresholds(&parsed, thresholds) < 0)
    {
        return -1;
    }
    *params = parsed;
    return 0;
}

bool aa_loss_generator_params_is_enabled(const aa_loss_generator_params_t *params)
{
    return NULL != params && params->rules_count > 0;
}

static aa_loss_decision_t aa_loss_decide(aa_loss_direction_t *direction, const aa_udp_datagram_t *datagram)
{
    aa_loss_frame_type_t type = aa_loss_generator_frame_type(datagram->buffer, datagram->length);
    double u = (double)(aa_loss_next_random(&direction->prng_state) >> 11) * 0x1.0p-53;
    const double *t = direction->thresholds[type];
    direction->stats.datagrams++;
    if (u < t[0])
    {
        return AA_LOSS_DECISION_DROP;
    }
    if (u < t[1])
    {
        return AA_LOSS_DECISION_DUPLICATE;
    }
    if (u < t[2])
    {
        return AA_LOSS_DECISION_REORDER;
    }
    return AA_LOSS_DECISION_PASS;
}

/* Copies a datagram aside; NULL (the datagram then passes unchanged) when no room can be had. */
static aa_loss_copy_t *aa_loss_copy(aa_loss_direction_t *direction, const aa_udp_datagram_t *datagram)
{
    if (direction->copies_count >= AA_LOSS_MAX_COPIES)
    {
        return NULL;
    }
    uint8_t *buffer = malloc(0 == datagram->length ? 1 : datagram->length);
    if (NULL == buffer)
    {
        return NULL;
    }
    aa_loss_copy_t *copy = &direction->copies[direction->copies_count++];
    memset(copy, 0, sizeof(*copy));
    copy->datagram = *datagram;
    copy->datagram.buffer = buffer;
    copy->datagram.capacity = datagram->length;
    memcpy(buffer, datagram->buffer, datagram->length);
    return copy;
}

static void aa_loss_free_copies(aa_loss_direction_t *direction, const bool *is_freed)
{
    size_t kept = 0;
    for (size_t i = 0; i < direction->copies_count; i++)
    {
        if (NULL != is_freed && !is_freed[i])
        {
            direction->copies[kept++] = direction->copies[i];
        }
        else
        {
            free(direction->copies[i].datagram.buffer);
        }
    }
    direction->copies_count = kept;
}

static int aa_loss_init(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, const aa_udp_transport_params_t *params)
{
    const aa_loss_generator_t *generator = self->state;
    return generator->inner->init_func(generator->inner, transport, params);
}

static int aa_loss_close(const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport)
{
    aa_loss_generator_t *generator = self->state;
    aa_loss_free_copies(&generator->receive, NULL);
    aa_loss_free_copies(&generator->send, NULL);
    return generator->inner->close_func(generator->inner, transport);
}

typedef struct aa_loss_recv_context_stct
{
    aa_loss_generator_t *generator;
    aa_udp_transport_recv_handler_t handler;
    void *clientd;
    int delivered;
}
aa_loss_recv_context_t;

static void aa_loss_deliver(aa_loss_recv_context_t *context, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram)
{
    context->handler(context->clientd, transport, datagram);
    context->delivered++;
}

/* Delivers the held copies (only those held before this call when carried_only), oldest first. */
static void aa_loss_release_copies(aa_loss_recv_context_t *context, aa_udp_transport_t *transport, bool carried_only)
{
    aa_loss_direction_t *direction = &context->generator->receive;
    bool is_freed[AA_LOSS_MAX_COPIES] = { false };
    for (size_t i = 0; i < direction->copies_count; i++)
    {
        is_freed[i] = !carried_only || direction->copies[i].is_carried;
        if (is_freed[i])
        {
            aa_loss_deliver(context, transport, &direction->copies[i].datagram);
        }
    }
    aa_loss_free_copies(direction, is_freed);
}

static void aa_loss_on_datagram(void *clientd, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram)
{
    aa_loss_recv_context_t *context = clientd;
    aa_loss_direction_t *direction = &context->generator->receive;
    switch (aa_loss_decide(direction, datagram))
    {
        case AA_LOSS_DECISION_DROP:
            direction->stats.dropped++;
            return;
        case AA_LOSS_DECISION_REORDER:
            if (NULL != aa_loss_copy(direction, datagram))
            {
                direction->stats.reordered++;
                return;
            }
            break;
        case AA_LOSS_DECISION_DUPLICATE:
            direction->stats.duplicated++;
            aa_loss_deliver(context, transport, datagram);
            break;
        case AA_LOSS_DECISION_PASS:
            break;
    }
    aa_loss_deliver(context, transport, datagram);
    aa_loss_release_copies(context, transport, false);
}

static int aa_loss_recv(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count,
    aa_udp_transport_recv_handler_t handler, void *clientd)
{
    aa_loss_generator_t *generator = self->state;
    aa_loss_direction_t *direction = &generator->receive;
    if (!direction->is_enabled)
    {
        return generator->inner->recv_func(generator->inner, transport, datagrams, count, handler, clientd);
    }
    for (size_t i = 0; i < direction->copies_count; i++)
    {
        direction->copies[i].is_carried = true;
    }
    aa_loss_recv_context_t context = { generator, handler, clientd, 0 };
    if (generator->inner->recv_func(generator->inner, transport, datagrams, count, aa_loss_on_datagram, &context) < 0)
    {
        return -1;
    }
    aa_loss_release_copies(&context, transport, true);
    return context.delivered;
}

static size_t aa_loss_plan_append(aa_loss_send_plan_t *plan, const aa_udp_datagram_t *datagram)
{
    plan->out[plan->out_count] = *datagram;
    return plan->out_count++;
}

static void aa_loss_plan_place(aa_loss_send_plan_t *plan, aa_loss_direction_t *direction, size_t index)
{
    aa_loss_copy_t *copy = &direction->copies[index];
    copy->is_placed = true;
    copy->placed_at = aa_loss_plan_append(plan, &copy->datagram);
}

/*
 * The caller's datagrams and held copies are laid out in one output batch and sent with one call
 * of the inner bindings. Copies that do not go out stay held (and go first next time when they
 * were due); copies of inputs that the caller must send again are discarded, so that a partial
 * send never loses nor repeats a datagram beyond what the rules asked for.
 */
static int aa_loss_send(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count)
{
    aa_loss_generator_t *generator = self->state;
    aa_loss_direction_t *direction = &generator->send;
    if (!direction->is_enabled)
    {
        return generator->inner->send_func(generator->inner, transport, datagrams, count);
    }
    aa_loss_send_plan_t *plan = &generator->plan;
    size_t n = count < AA_UDP_TRANSPORT_MAX_BATCH ? count : AA_UDP_TRANSPORT_MAX_BATCH;
    plan->out_count = 0;
    for (size_t c = 0; c < direction->copies_count; c++)
    {
        aa_loss_copy_t *copy = &direction->copies[c];
        copy->is_carried = true;
        copy->is_placed = false;
        if (copy->is_ready)
        {
            aa_loss_plan_place(plan, direction, c);
        }
    }

    for (size_t i = 0; i < n; i++)
    {
        aa_loss_copy_t *copy;
        aa_loss_decision_t decision = aa_loss_decide(direction, &datagrams[i]);
        plan->input_entry[i] = SIZE_MAX;
        if (AA_LOSS_DECISION_DROP == decision)
        {
            direction->stats.dropped++;
            continue;
        }
        if (AA_LOSS_DECISION_REORDER == decision && NULL != (copy = aa_loss_copy(direction, &datagrams[i])))
        {
            copy->origin = i;
            direction->stats.reordered++;
            continue;
        }
        size_t entry = aa_loss_plan_append(plan, &datagrams[i]);
        plan->input_entry[i] = entry;
        if (AA_LOSS_DECISION_DUPLICATE == decision)
        {
            direction->stats.duplicated++;
            if (NULL != (copy = aa_loss_copy(direction, &datagrams[i])))
            {
                copy->origin = i;
                copy->is_ready = true;
                aa_loss_plan_place(plan, direction, direction->copies_count - 1);
            }
            else
            {
                plan->input_entry[i] = aa_loss_plan_append(plan, &datagrams[i]);
            }
        }
        for (size_t c = 0; c < direction->copies_count; c++)
        {
            if (!direction->copies[c].is_placed)
            {
                direction->copies[c].due_after = entry;
                aa_loss_plan_place(plan, direction, c);
            }
        }
    }
    for (size_t c = 0; c < direction->copies_count; c++)
    {
        if (direction->copies[c].is_carried && !direction->copies[c].is_placed)
        {
            aa_loss_plan_place(plan, direction, c);
        }
    }
    if (0 == plan->out_count)
    {
        return (int)n;
    }

    int rc = generator->inner->send_func(generator->inner, transport, plan->out, plan->out_count);
    size_t sent = rc < 0 ? 0 : (size_t)rc;
    size_t consumed = 0;
    while (rc >= 0 && consumed < n && (SIZE_MAX == plan->input_entry[consumed] || plan->input_entry[consumed] < sent))
    {
        consumed++;
    }
    bool is_freed[AA_LOSS_MAX_COPIES] = { false };
    for (size_t c = 0; c < direction->copies_count; c++)
    {
        aa_loss_copy_t *copy = &direction->copies[c];
        bool is_sent = copy->is_placed && copy->placed_at < sent;
        bool is_resent_by_caller = !copy->is_carried && copy->origin >= consumed;
        is_freed[c] = is_sent || is_resent_by_caller;
        if (!is_freed[c] && copy->is_placed && !copy->is_ready)
        {
            /* due after a datagram that did go out (or held a whole call already): first next time */
            copy->is_ready = copy->is_carried || copy->due_after < sent;
        }
    }
    aa_loss_free_copies(direction, is_freed);
    return rc < 0 ? -1 : (int)consumed;
}

static void aa_loss_direction_init(aa_loss_direction_t *direction, const aa_loss_generator_params_t *params, uint64_t seed)
{
    memset(direction, 0, sizeof(*direction));
    direction->prng_state = seed;
    direction->is_enabled = aa_loss_generator_params_is_enabled(params);
    if (direction->is_enabled)
    {
        aa_loss_compute_thresholds(params, direction->thresholds);
    }
}

int aa_loss_generator_bindings_create(
    aa_udp_transport_bindings_t **bindings, const aa_udp_transport_bindings_t *inner,
    const aa_loss_generator_params_t *receive, const aa_loss_generator_params_t *send, uint64_t seed)
{
    double check[AA_LOSS_FRAME_TYPE_COUNT][3];
    *bindings = NULL;
    if ((aa_loss_generator_params_is_enabled(receive) && aa_loss_compute_thresholds(receive, check) < 0) ||
        (aa_loss_generator_params_is_enabled(send) && aa_loss_compute_thresholds(send, check) < 0))
    {
        return -1;
    }
    aa_loss_generator_t *generator = calloc(1, sizeof(aa_loss_generator_t));
    if (NULL == generator)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating a loss generator");
        return -1;
    }
    generator->inner = NULL == inner ? aa_udp_transport_socket_bindings() : inner;
    aa_loss_direction_init(&generator->receive, receive, seed);
    aa_loss_direction_init(&generator->send, send, seed ^ AA_LOSS_SEND_SEED_MIX);
    generator->bindings = (aa_udp_transport_bindings_t)
    {
        "loss", aa_loss_init, aa_loss_close, aa_loss_send, aa_loss_recv, generator
    };
    *bindings = &generator->bindings;
    return 0;
}

void aa_loss_generator_bindings_delete(aa_udp_transport_bindings_t *bindings)
{
    if (NULL == bindings || aa_loss_init != bindings->init_func)
    {
        return;
    }
    aa_loss_generator_t *generator = bindings->state;
    aa_loss_free_copies(&generator->receive, NULL);
    aa_loss_free_copies(&generator->send, NULL);
    free(generator);
}

const aa_loss_generator_stats_t *aa_loss_generator_receive_stats(const aa_udp_transport_bindings_t *bindings)
{
    return NULL != bindings && aa_loss_init == bindings->init_func ?
        &((const aa_loss_generator_t *)bindings->state)->receive.stats : NULL;
}

const aa_loss_generator_stats_t *aa_loss_generator_send_stats(const aa_udp_transport_bindings_t *bindings)
{
    return NULL != bindings && aa_loss_init == bindings->init_func ?
        &((const aa_loss_generator_t *)bindings->state)->send.stats : NULL;
}

int aa_loss_generator_transport_open(
    aa_udp_transport_t *transport, aa_udp_transport_bindings_t **bindings, const aa_udp_channel_t *channel,
    aa_udp_transport_role_t role, const aa_loss_generator_settings_t *settings)
{
    aa_udp_transport_params_t params;
    aa_udp_transport_params_from_channel(&params, channel, role);
    *bindings = NULL;
    const aa_udp_transport_bindings_t *inner = NULL != settings ? settings->inner : NULL;
    if (NULL != settings &&
        (aa_loss_generator_params_is_enabled(settings->receive) || aa_loss_generator_params_is_enabled(settings->send)))
    {
        if (aa_loss_generator_bindings_create(bindings, inner, settings->receive, settings->send, settings->seed) < 0)
        {
            return -1;
        }
    }
    if (aa_udp_transport_init(transport, NULL != *bindings ? *bindings : inner, &params) < 0)
    {
        aa_loss_generator_bindings_delete(*bindings);
        *bindings = NULL;
        return -1;
    }
    return 0;
}

void aa_loss_generator_transport_close(aa_udp_transport_t *transport, aa_udp_transport_bindings_t *bindings)
{
    aa_udp_transport_close(transport);
    aa_loss_generator_bindings_delete(bindings);
}
