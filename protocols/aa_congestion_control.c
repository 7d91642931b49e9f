#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocols/aa_congestion_control.h"
#include "protocols/aa_receiver_window.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"

#define AA_NANOS_PER_SECOND 1000000000.0

/* ---- static ---- */

static int aa_static_congestion_control_initial_window_length(
    const aa_congestion_control_params_t *params, int32_t *window_length)
{
    if (NULL != params->cc_options && '\0' != *params->cc_options)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter cc=static takes no options, got '%s' (its window is rcv-wnd)", params->cc_options);
        return -1;
    }
    *window_length = aa_receiver_window_length(params->initial_window_length, params->term_length);
    return 0;
}

static const aa_congestion_control_strategy_table_t aa_static_congestion_control_table =
{
    .initial_window_length = aa_static_congestion_control_initial_window_length,
};

/* ---- cubic ---- */

static int aa_cubic_parse_bool(const char *key, const char *value, size_t length, bool *out)
{
    if (4 == length && 0 == strncmp(value, "true", 4))
    {
        *out = true;
        return 0;
    }
    if (5 == length && 0 == strncmp(value, "false", 5))
    {
        *out = false;
        return 0;
    }
    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "cc=cubic option %s:%.*s: give %s:true or %s:false",
        key, (int)length, value, key, key);
    return -1;
}

/* "<digits>[ns|us|ms|s]" (no suffix: ns), above 0. */
static int aa_cubic_parse_duration(const char *key, const char *value, size_t length, int64_t *out)
{
    size_t i = 0;
    int64_t number = 0;
    while (i < length && value[i] >= '0' && value[i] <= '9' && number < INT64_MAX / 10 / 1000000000LL)
    {
        number = number * 10 + (value[i] - '0');
        i++;
    }
    static const struct { const char *suffix; int64_t multiplier; } units[] =
    {
        { "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000 * 1000 }, { "s", 1000 * 1000 * 1000 }
    };
    int64_t multiplier = -1;
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]) && i > 0; u++)
    {
        if (length - i == strlen(units[u].suffix) && 0 == strncmp(value + i, units[u].suffix, length - i))
        {
            multiplier = units[u].multiplier;
        }
    }
    if (multiplier < 0 || 0 == number)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "cc=cubic option %s:%.*s: give a duration above 0 such as %s:100us, %s:2ms or %s:1s",
            key, (int)length, value, key, key, key);
        return -1;
    }
    *out = number * multiplier;
    return 0;
}

int aa_cubic_congestion_control_parse_options(const char *options, aa_cubic_congestion_control_config_t *config)
{
    const char *p = options;
    while (NULL != p && '\0' != *p)
    {
        const char *end = strchr(p, ',');
        size_t length = NULL == end ? strlen(p) : (size_t)(end - p);
        const char *colon = memchr(p, ':', length);
        if (NULL == colon)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "cc=cubic option '%.*s' is not key:value; cubic takes measure-rtt:true|false, tcp-mode:true|false "
                "and initial-rtt:<duration>", (int)length, p);
            return -1;
        }
        size_t key_length = (size_t)(colon - p);
        const char *value = colon + 1;
        size_t value_length = length - key_length - 1;
        int rc;
        if (11 == key_length && 0 == strncmp(p, "measure-rtt", 11))
        {
            rc = aa_cubic_parse_bool("measure-rtt", value, value_length, &config->measure_rtt);
        }
        else if (8 == key_length && 0 == strncmp(p, "tcp-mode", 8))
        {
            rc = aa_cubic_parse_bool("tcp-mode", value, value_length, &config->tcp_mode);
        }
        else if (11 == key_length && 0 == strncmp(p, "initial-rtt", 11))
        {
            rc = aa_cubic_parse_duration("initial-rtt", value, value_length, &config->initial_rtt_ns);
        }
        else
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "cc=cubic has no option '%.*s'; it takes measure-rtt:true|false, tcp-mode:true|false and "
                "initial-rtt:<duration>", (int)key_length, p);
            return -1;
        }
        if (rc < 0)
        {
            return -1;
        }
        p = NULL == end ? NULL : end + 1;
    }
    return 0;
}

static void aa_cubic_set_counter(volatile int64_t *counter, int64_t value)
{
    if (NULL != counter)
    {
        aa_put_int64_release(counter, value);
    }
}

int aa_cubic_congestion_control_init(
    aa_cubic_congestion_control_t *cubic, const aa_cubic_congestion_control_config_t *config, int32_t mtu,
    int32_t max_window_length, int64_t now_ns, volatile int64_t *rtt_indicator, volatile int64_t *window_indicator)
{
    if (mtu <= 0 || max_window_length < mtu)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "cubic congestion control needs a window of at least one MTU: the window (rcv-wnd, at most term/2) is "
            "%d bytes and the sender's MTU %d; raise rcv-wnd or lower the sender's mtu", max_window_length, mtu);
        return -1;
    }
    memset(cubic, 0, sizeof(*cubic));
    cubic->tcp_mode = config->tcp_mode;
    cubic->measure_rtt = config->measure_rtt;
    cubic->initial_rtt_ns = config->initial_rtt_ns > 0 ?
        config->initial_rtt_ns : AA_CUBIC_CONGESTION_CONTROL_INITIAL_RTT_DEFAULT_NS;
    cubic->mtu = mtu;
    cubic->max_cwnd = max_window_length / mtu;
    cubic->cwnd = cubic->max_cwnd < AA_CUBIC_CONGESTION_CONTROL_INITIAL_CWND ?
        cubic->max_cwnd : AA_CUBIC_CONGESTION_CONTROL_INITIAL_CWND;
    /* w_max starts at max_cwnd: the first growth is in the concave region towards the full window */
    cubic->w_max = cubic->max_cwnd;
    cubic->k = cbrt((double)cubic->w_max * AA_CUBIC_CONGESTION_CONTROL_B / AA_CUBIC_CONGESTION_CONTROL_C);
    cubic->rtt_ns = cubic->initial_rtt_ns;
    cubic->window_update_timeout_ns = cubic->rtt_ns;
    cubic->rtt_timeout_ns = cubic->rtt_ns * AA_CUBIC_CONGESTION_CONTROL_RTT_TIMEOUT_MULTIPLE;
    cubic->last_loss_timestamp_ns = now_ns;
    cubic->last_update_timestamp_ns = now_ns;
    cubic->last_rtt_timestamp_ns = now_ns - cubic->rtt_timeout_ns - 1;   /* the first RTTM is due at once */
    cubic->rtt_indicator = rtt_indicator;
    cubic->window_indicator = window_indicator;
    aa_cubic_set_counter(rtt_indicator, 0);
    aa_cubic_set_counter(window_indicator, (int64_t)cubic->cwnd * mtu);
    return 0;
}

int32_t aa_cubic_congestion_control_window_length(const aa_cubic_congestion_control_t *cubic)
{
    return cubic->cwnd * cubic->mtu;
}

int32_t aa_cubic_congestion_control_on_track_rebuild(
    aa_cubic_congestion_control_t *cubic, const aa_congestion_control_rebuild_t *rebuild, bool *force_sm)
{
    const double b = AA_CUBIC_CONGESTION_CONTROL_B;
    const double c = AA_CUBIC_CONGESTION_CONTROL_C;
    int64_t now_ns = rebuild->now_ns;
    *force_sm = false;
    if (rebuild->loss_occurred)
    {
        *force_sm = true;
        cubic->w_max = cubic->cwnd;
        cubic->k = cbrt((double)cubic->w_max * b / c);
        int32_t cwnd = (int32_t)(cubic->cwnd * (1.0 - b));
        cubic->cwnd = cwnd > 1 ? cwnd : 1;
        cubic->last_loss_timestamp_ns = now_ns;
    }
    else if (cubic->cwnd < cubic->max_cwnd && now_ns - (cubic->last_update_timestamp_ns + cubic->window_update_timeout_ns) > 0)
    {
        /* W_cubic(t) = C (t - K)^3 + w_max */
        double t = (double)(now_ns - cubic->last_loss_timestamp_ns) / AA_NANOS_PER_SECOND;
        double diff_to_k = t - cubic->k;
        double increment = c * diff_to_k * diff_to_k * diff_to_k;
        double cubic_cwnd = (double)cubic->w_max + (double)(int64_t)increment;   /* C: w_max + (int32_t)incr */
        cubic->cwnd = cubic_cwnd < (double)cubic->max_cwnd ? (int32_t)cubic_cwnd : cubic->max_cwnd;
        if (cubic->cwnd < 1)
        {
            cubic->cwnd = 1;
        }
        if (cubic->tcp_mode && cubic->cwnd < cubic->w_max)
        {
            /* W_tcp(t) = w_max (1 - B) + 3B / (2 - B) t / RTT */
            double rtt_s = (double)cubic->rtt_ns / AA_NANOS_PER_SECOND;
            double w_tcp = (double)cubic->w_max * (1.0 - b) + (3.0 * b / (2.0 - b)) * (t / rtt_s);
            if (w_tcp > (double)cubic->max_cwnd)
            {
                w_tcp = (double)cubic->max_cwnd;
            }
            if ((int32_t)w_tcp > cubic->cwnd)
            {
                cubic->cwnd = (int32_t)w_tcp;
            }
        }
        cubic->last_update_timestamp_ns = now_ns;
    }
    else if (1 == cubic->cwnd && rebuild->new_consumption_position > rebuild->last_sm_position)
    {
        /* a one-MTU window must be reopened at every step, not after a quarter of it */
        *force_sm = true;
    }
    int32_t window = cubic->cwnd * cubic->mtu;
    aa_cubic_set_counter(cubic->window_indicator, window);
    return window;
}

bool aa_cubic_congestion_control_should_measure_rtt(const aa_cubic_congestion_control_t *cubic, int64_t now_ns)
{
    return cubic->measure_rtt && now_ns - (cubic->last_rtt_timestamp_ns + cubic->rtt_timeout_ns) > 0;
}

void aa_cubic_congestion_control_on_rttm_sent(aa_cubic_congestion_control_t *cubic, int64_t now_ns)
{
    cubic->last_rtt_timestamp_ns = now_ns;
}

void aa_cubic_congestion_control_on_rttm(aa_cubic_congestion_control_t *cubic, int64_t now_ns, int64_t rtt_ns)
{
    if (rtt_ns <= 0)
    {
        return;   /* an echo from before a clock step, or a forged one: not an RTT */
    }
    cubic->last_rtt_timestamp_ns = now_ns;
    cubic->rtt_ns = rtt_ns;
    /* growth at most once per RTT: the measured one from now on */
    cubic->window_update_timeout_ns = rtt_ns;
    int64_t base = rtt_ns > cubic->initial_rtt_ns ? rtt_ns : cubic->initial_rtt_ns;
    cubic->rtt_timeout_ns = base * AA_CUBIC_CONGESTION_CONTROL_RTT_TIMEOUT_MULTIPLE;
    aa_cubic_set_counter(cubic->rtt_indicator, rtt_ns);
}

/* cubic as a registry strategy */

static int aa_cubic_config_of(const aa_congestion_control_params_t *params, aa_cubic_congestion_control_config_t *config)
{
    *config = params->cubic;
    if (config->initial_rtt_ns <= 0)
    {
        config->initial_rtt_ns = AA_CUBIC_CONGESTION_CONTROL_INITIAL_RTT_DEFAULT_NS;
    }
    return aa_cubic_congestion_control_parse_options(params->cc_options, config);
}

static int aa_cubic_congestion_control_strategy_initial_window_length(
    const aa_congestion_control_params_t *params, int32_t *window_length)
{
    aa_cubic_congestion_control_config_t config;
    aa_cubic_congestion_control_t probe;
    if (aa_cubic_config_of(params, &config) < 0 ||
        aa_cubic_congestion_control_init(
            &probe, &config, params->mtu_length,
            aa_receiver_window_length(params->initial_window_length, params->term_length), 0, NULL, NULL) < 0)
    {
        return -1;
    }
    *window_length = aa_cubic_congestion_control_window_length(&probe);
    return 0;
}

static int aa_cubic_congestion_control_strategy_create(
    void **state, const aa_congestion_control_params_t *params, int64_t now_ns)
{
    aa_cubic_congestion_control_config_t config;
    aa_cubic_congestion_control_t *cubic = calloc(1, sizeof(*cubic));
    if (NULL == cubic)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating cubic congestion control");
        return -1;
    }
    if (aa_cubic_config_of(params, &config) < 0 ||
        aa_cubic_congestion_control_init(
            cubic, &config, params->mtu_length,
            aa_receiver_window_length(params->initial_window_length, params->term_length), now_ns,
            params->counters[0], params->counters[1]) < 0)
    {
        free(cubic);
        return -1;
    }
    *state = cubic;
    return 0;
}

static void aa_cubic_congestion_control_strategy_delete(void *state)
{
    free(state);
}

static int32_t aa_cubic_congestion_control_strategy_on_track_rebuild(
    void *state, const aa_congestion_control_rebuild_t *rebuild, bool *force_sm)
{
    return aa_cubic_congestion_control_on_track_rebuild(state, rebuild, force_sm);
}

static bool aa_cubic_congestion_control_strategy_should_measure_rtt(void *state, int64_t now_ns)
{
    return aa_cubic_congestion_control_should_measure_rtt(state, now_ns);
}

static void aa_cubic_congestion_control_strategy_on_rttm_sent(void *state, int64_t now_ns)
{
    aa_cubic_congestion_control_on_rttm_sent(state, now_ns);
}

static void aa_cubic_congestion_control_strategy_on_rttm(void *state, int64_t now_ns, int64_t rtt_ns)
{
    aa_cubic_congestion_control_on_rttm(state, now_ns, rtt_ns);
}

static const char *const aa_cubic_congestion_control_counter_labels[] =
{
    AA_CUBIC_CONGESTION_CONTROL_RTT_COUNTER_NAME, AA_CUBIC_CONGESTION_CONTROL_WINDOW_COUNTER_NAME, NULL
};

static const aa_congestion_control_strategy_table_t aa_cubic_congestion_control_table =
{
    .initial_window_length = aa_cubic_congestion_control_strategy_initial_window_length,
    .counter_labels = aa_cubic_congestion_control_counter_labels,
    .create = aa_cubic_congestion_control_strategy_create,
    .delete = aa_cubic_congestion_control_strategy_delete,
    .on_track_rebuild = aa_cubic_congestion_control_strategy_on_track_rebuild,
    .should_measure_rtt = aa_cubic_congestion_control_strategy_should_measure_rtt,
    .on_rttm_sent = aa_cubic_congestion_control_strategy_on_rttm_sent,
    .on_rttm = aa_cubic_congestion_control_strategy_on_rttm,
};

/* ---- registry ---- */

static int aa_congestion_control_register_all(void)
{
    return (aa_registry_register(AA_STRATEGY_KIND_CONGESTION_CONTROL, "static", &aa_static_congestion_control_table, NULL,
            "a fixed window of min(rcv-wnd or the driver's initial window, term length / 2); no options") < 0 ||
        aa_registry_register(AA_STRATEGY_KIND_CONGESTION_CONTROL, "cubic", &aa_cubic_congestion_control_table, NULL,
            "CUBIC: window = cwnd x MTU up to the static window, cut by 20% on loss, regrown per RTT; options "
            "measure-rtt:true|false, tcp-mode:true|false, initial-rtt:<duration> "
            "(defaults AERON_CUBICCONGESTIONCONTROL_MEASURERTT, _TCPMODE, _INITIALRTT)") < 0) ? -1 : 0;
}

int aa_congestion_control_register_builtins(void)
{
    static aa_registry_builtins_t builtins = AA_REGISTRY_BUILTINS_INIT;
    return aa_registry_register_builtins(&builtins, aa_congestion_control_register_all, "congestion control strategies");
}

int aa_congestion_control_select(const char *cc, aa_congestion_control_choice_t *choice)
{
    char name[AA_STRATEGY_NAME_MAX_LENGTH];
    const char *options = NULL;
    aa_strategy_t entry;
    const char *spec = NULL != cc ? cc : "static";
    if (aa_congestion_control_register_builtins() < 0 ||
        aa_registry_split_spec(spec, ',', name, sizeof(name), &options) < 0 ||
        aa_registry_lookup(AA_STRATEGY_KIND_CONGESTION_CONTROL, name, &entry) < 0)
    {
        char reason[1024];
        snprintf(reason, sizeof(reason), "%s", aa_errmsg());
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter cc=%s: %s; name one of those (or register the strategy first: "
            "aeron_async.strategies.register)", spec, reason);
        return -1;
    }
    if (aa_registry_alias_options(&entry, "cc", spec, name, options, &choice->options) < 0)
    {
        return -1;
    }
    choice->name = entry.name;
    choice->table = entry.table;
    choice->clientd = entry.clientd;
    return 0;
}

int aa_congestion_control_initial_window_length(
    const aa_congestion_control_choice_t *choice, const aa_congestion_control_params_t *params, int32_t *window_length)
{
    aa_congestion_control_params_t p = *params;
    p.cc_options = choice->options;
    p.clientd = choice->clientd;
    if (choice->table->initial_window_length(&p, window_length) < 0)
    {
        AA_APPEND_ERR("congestion control '%s'", choice->name);
        return -1;
    }
    if (*window_length <= 0 || *window_length > params->term_length / 2)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR,
            "congestion control '%s' gave a window of %d bytes; a window is above 0 and at most half the term (%d)",
            choice->name, (int)*window_length, (int)(params->term_length / 2));
        return -1;
    }
    return 0;
}

int aa_congestion_control_counters_count(const aa_congestion_control_choice_t *choice)
{
    int count = 0;
    if (NULL != choice->table->create && NULL != choice->table->counter_labels)
    {
        while (count < AA_CONGESTION_CONTROL_COUNTERS_MAX && NULL != choice->table->counter_labels[count])
        {
            count++;
        }
    }
    return count;
}

const char *aa_congestion_control_counter_label(const aa_congestion_control_choice_t *choice, int index)
{
    return index < aa_congestion_control_counters_count(choice) ? choice->table->counter_labels[index] : NULL;
}

int aa_congestion_control_create(
    aa_congestion_control_t *cc, const aa_congestion_control_choice_t *choice, const aa_congestion_control_params_t *params,
    int64_t now_ns)
{
    memset(cc, 0, sizeof(*cc));
    int32_t window_length = 0;
    if (aa_congestion_control_initial_window_length(choice, params, &window_length) < 0)
    {
        return -1;
    }
    cc->table = choice->table;
    cc->name = choice->name;
    cc->window_length = window_length;
    if (NULL != choice->table->create)
    {
        if (NULL == choice->table->on_track_rebuild)
        {
            AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR,
                "congestion control '%s' has create but no on_track_rebuild; a strategy with state needs both",
                choice->name);
            return -1;
        }
        aa_congestion_control_params_t p = *params;
        p.cc_options = choice->options;
        p.clientd = choice->clientd;
        if (choice->table->create(&cc->state, &p, now_ns) < 0)
        {
            AA_APPEND_ERR("congestion control '%s'", choice->name);
            cc->state = NULL;
            return -1;
        }
    }
    return 0;
}

void aa_congestion_control_delete(aa_congestion_control_t *cc)
{
    if (NULL != cc->table && NULL != cc->state && NULL != cc->table->delete)
    {
        cc->table->delete(cc->state);
    }
    cc->state = NULL;
}

int32_t aa_congestion_control_on_track_rebuild(
    aa_congestion_control_t *cc, const aa_congestion_control_rebuild_t *rebuild, bool *force_sm)
{
    if (NULL == cc->state)
    {
        *force_sm = false;
        return cc->window_length;
    }
    return cc->table->on_track_rebuild(cc->state, rebuild, force_sm);
}

bool aa_congestion_control_should_measure_rtt(aa_congestion_control_t *cc, int64_t now_ns)
{
    return NULL != cc->state && NULL != cc->table->should_measure_rtt && cc->table->should_measure_rtt(cc->state, now_ns);
}

void aa_congestion_control_on_rttm_sent(aa_congestion_control_t *cc, int64_t now_ns)
{
    if (NULL != cc->state && NULL != cc->table->on_rttm_sent)
    {
        cc->table->on_rttm_sent(cc->state, now_ns);
    }
}

void aa_congestion_control_on_rttm(aa_congestion_control_t *cc, int64_t now_ns, int64_t rtt_ns)
{
    if (NULL != cc->state && NULL != cc->table->on_rttm)
    {
        cc->table->on_rttm(cc->state, now_ns, rtt_ns);
    }
}
