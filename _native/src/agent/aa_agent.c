#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "agent/aa_agent.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"
#include "util/aa_parse.h"
#include "util/aa_registry.h"

/* ---- strategies ---- */

typedef struct aa_backoff_state_stct
{
    int64_t max_spins;
    int64_t max_yields;
    int64_t min_park_ns;
    int64_t max_park_ns;
    int64_t spins;
    int64_t yields;
    int64_t park_ns;
    int state; /* 0 not idle, 1 spinning, 2 yielding, 3 parking */
    /* deep idle, with a doorbell only */
    aa_doorbell_t *doorbell;
    const aa_idle_deep_waiter_t *waiter; /* instead of the doorbell, when set */
    int64_t deep_after_ns;
    int64_t deep_park_ns;
    int64_t deep_at_ns;      /* when parking at max_park_ns began + AA_IDLE_DEEP_AFTER_NS; 0 before */
    int32_t deep_sequence;
    bool deep_armed;         /* doorbell armed; one more duty cycle runs before the wait */
    bool precise_parks;      /* the parking thread's timer slack is set to AA_IDLE_TIMER_SLACK_NS */
}
aa_backoff_state_t;

static void aa_sleep_ns(int64_t ns)
{
    struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };
    nanosleep(&ts, NULL);
}

/* Past the longest park for deep_after_ns: arm the doorbell and run one more duty cycle,
 * then wait on it. Returns false while not yet deeply idle. */
static bool aa_idle_backoff_deep(aa_backoff_state_t *s)
{
    if (s->deep_armed)
    {
        if (NULL != s->waiter)
        {
            s->waiter->wait(s->waiter->clientd, s->deep_park_ns);
        }
        else
        {
            aa_doorbell_wait(s->doorbell, s->deep_sequence, s->deep_park_ns);
        }
        s->deep_armed = false;
        return true;
    }
    int64_t now_ns = aa_nano_clock();
    if (0 == s->deep_at_ns)
    {
        s->deep_at_ns = now_ns + s->deep_after_ns;
        return false;
    }
    if (now_ns < s->deep_at_ns)
    {
        return false;
    }
    if (NULL != s->waiter)
    {
        if (!s->waiter->arm(s->waiter->clientd))
        {
            return false;
        }
    }
    else
    {
        s->deep_sequence = aa_doorbell_arm(s->doorbell);
    }
    s->deep_armed = true;
    return true;
}

static void aa_idle_backoff(void *state, int work_count)
{
    aa_backoff_state_t *s = state;
    if (work_count > 0)
    {
        s->state = 0;
        s->spins = 0;
        s->yields = 0;
        s->park_ns = s->min_park_ns;
        s->deep_at_ns = 0;
        s->deep_armed = false; /* a later ring finds the flag set and costs one spare wake */
        return;
    }
    switch (s->state)
    {
        case 0:
            s->state = 1;
            s->spins = 0;
            /* fall through */
        case 1:
            if (++s->spins <= s->max_spins)
            {
                aa_cpu_pause();
                break;
            }
            s->state = 2;
            s->yields = 0;
            /* fall through */
        case 2:
            if (++s->yields <= s->max_yields)
            {
                sched_yield();
                break;
            }
            s->state = 3;
            s->park_ns = s->min_park_ns;
            /* fall through */
        default:
            if ((NULL != s->doorbell || NULL != s->waiter) && s->park_ns >= s->max_park_ns && aa_idle_backoff_deep(s))
            {
                break;
            }
            if (!s->precise_parks)
            {
                /* Linux lets a sleep overrun by the thread's timer slack (50 us by default): a 1 us
                 * park would take 50, and every message waiting on a parked agent would wait that. */
                prctl(PR_SET_TIMERSLACK, AA_IDLE_TIMER_SLACK_NS, 0, 0, 0);
                s->precise_parks = true;
            }
            aa_sleep_ns(s->park_ns);
            s->park_ns = s->park_ns * 2 < s->max_park_ns ? s->park_ns * 2 : s->max_park_ns;
            break;
    }
}

static void aa_idle_backoff_set_doorbell(void *state, aa_doorbell_t *doorbell, int64_t deep_after_ns, int64_t deep_park_ns)
{
    aa_backoff_state_t *s = state;
    s->deep_armed = false;
    s->doorbell = doorbell;
    s->waiter = NULL;
    s->deep_after_ns = deep_after_ns;
    s->deep_park_ns = deep_park_ns;
    s->deep_at_ns = 0;
}

static int aa_idle_backoff_init(void **state, const char *args)
{
    aa_backoff_state_t *s = calloc(1, sizeof(aa_backoff_state_t));
    if (NULL == s)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory");
        return -1;
    }
    s->max_spins = AA_IDLE_STRATEGY_BACKOFF_MAX_SPINS;
    s->max_yields = AA_IDLE_STRATEGY_BACKOFF_MAX_YIELDS;
    s->min_park_ns = AA_IDLE_STRATEGY_BACKOFF_MIN_PARK_NS;
    s->max_park_ns = AA_IDLE_STRATEGY_BACKOFF_MAX_PARK_NS;
    if (NULL != args && '\0' != *args)
    {
        char buf[128];
        snprintf(buf, sizeof(buf), "%s", args);
        char *parts[4] = { NULL, NULL, NULL, NULL };
        int n = 0;
        char *save = NULL;
        for (char *tok = strtok_r(buf, "-", &save); NULL != tok && n < 5; tok = strtok_r(NULL, "-", &save))
        {
            if (n < 4)
            {
                parts[n] = tok;
            }
            n++;
        }
        int64_t spins = 4 == n ? aa_parse_size(parts[0]) : -1;
        int64_t yields = 4 == n ? aa_parse_size(parts[1]) : -1;
        int64_t min_park = 4 == n ? aa_parse_duration_ns(parts[2]) : -1;
        int64_t max_park = 4 == n ? aa_parse_duration_ns(parts[3]) : -1;
        if (spins < 0 || yields < 0 || min_park < 1 || max_park < min_park)
        {
            free(s);
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                "backoff arguments '%s' must be spins-yields-minPark-maxPark with minPark <= maxPark, e.g. 10-20-1us-1ms",
                args);
            return -1;
        }
        s->max_spins = spins;
        s->max_yields = yields;
        s->min_park_ns = min_park;
        s->max_park_ns = max_park;
    }
    s->park_ns = s->min_park_ns;
    *state = s;
    return 0;
}

static void aa_idle_spin(void *state, int work_count)
{
    (void)state;
    if (work_count <= 0)
    {
        aa_cpu_pause();
    }
}

static void aa_idle_yield(void *state, int work_count)
{
    (void)state;
    if (work_count <= 0)
    {
        sched_yield();
    }
}

static void aa_idle_noop(void *state, int work_count)
{
    (void)state;
    (void)work_count;
}

static void aa_idle_sleeping(void *state, int work_count)
{
    if (work_count <= 0)
    {
        aa_sleep_ns(*(int64_t *)state);
    }
}

static int aa_idle_sleeping_init(void **state, const char *args)
{
    int64_t ns = 1;
    if (NULL != args && '\0' != *args)
    {
        ns = aa_parse_duration_ns(args);
        if (ns < 1)
        {
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "sleep duration '%s' must be a positive duration such as 1ms", args);
            return -1;
        }
    }
    int64_t *s = malloc(sizeof(int64_t));
    if (NULL == s)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory");
        return -1;
    }
    *s = ns;
    *state = s;
    return 0;
}

static int aa_idle_stateless_init(void **state, const char *args)
{
    if (NULL != args && '\0' != *args)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "this idle strategy takes no arguments, got '%s'", args);
        return -1;
    }
    *state = NULL;
    return 0;
}

/* The built-in idle strategies (reference 10), registered under kind AA_STRATEGY_KIND_IDLE the first
 * time a strategy is loaded; "sleep-ns" and Aeron-style function names are aliases. */
static const aa_idle_strategy_table_t aa_idle_backoff_table =
{
    aa_idle_backoff, aa_idle_backoff_init, aa_idle_backoff_set_doorbell, NULL
};
static const aa_idle_strategy_table_t aa_idle_spin_table = { aa_idle_spin, aa_idle_stateless_init, NULL, NULL };
static const aa_idle_strategy_table_t aa_idle_yield_table = { aa_idle_yield, aa_idle_stateless_init, NULL, NULL };
static const aa_idle_strategy_table_t aa_idle_sleeping_table = { aa_idle_sleeping, aa_idle_sleeping_init, NULL, NULL };
static const aa_idle_strategy_table_t aa_idle_noop_table = { aa_idle_noop, aa_idle_stateless_init, NULL, NULL };

static int aa_idle_strategy_register_all(void)
{
    const int32_t kind = AA_STRATEGY_KIND_IDLE;
    return (aa_registry_register(kind, "backoff", &aa_idle_backoff_table, NULL,
            "spin, yield, then park from minPark doubling to maxPark; args SPINS-YIELDS-MINPARK-MAXPARK "
            "(default 10-20-1us-1ms)") < 0 ||
        aa_registry_register(kind, "spin", &aa_idle_spin_table, NULL, "busy spin (a CPU pause per idle pass)") < 0 ||
        aa_registry_register(kind, "yield", &aa_idle_yield_table, NULL, "sched_yield per idle pass") < 0 ||
        aa_registry_register(kind, "sleeping", &aa_idle_sleeping_table, NULL,
            "sleep a fixed duration per idle pass; args DURATION (default 1ns)") < 0 ||
        aa_registry_register(kind, "noop", &aa_idle_noop_table, NULL, "return at once") < 0 ||
        aa_registry_register_alias(kind, "sleep-ns", "sleeping", NULL, "Aeron's name for sleeping") < 0 ||
        aa_registry_register_alias(kind, "aa_idle_strategy_backoff", "backoff", NULL, NULL) < 0 ||
        aa_registry_register_alias(kind, "aa_idle_strategy_busy_spin", "spin", NULL, NULL) < 0 ||
        aa_registry_register_alias(kind, "aa_idle_strategy_yielding", "yield", NULL, NULL) < 0 ||
        aa_registry_register_alias(kind, "aa_idle_strategy_sleeping", "sleeping", NULL, NULL) < 0 ||
        aa_registry_register_alias(kind, "aa_idle_strategy_noop", "noop", NULL, NULL) < 0) ? -1 : 0;
}

int aa_idle_strategy_register_builtins(void)
{
    static aa_registry_builtins_t builtins = AA_REGISTRY_BUILTINS_INIT;
    return aa_registry_register_builtins(&builtins, aa_idle_strategy_register_all, "idle strategies");
}

int aa_idle_strategy_load(aa_idle_strategy_t *strategy, const char *spec)
{
    char name[AA_STRATEGY_NAME_MAX_LENGTH];
    const char *args = NULL;
    aa_strategy_t entry;
    if (NULL == spec || '\0' == *spec)
    {
        spec = "backoff";
    }
    if (aa_idle_strategy_register_builtins() < 0 ||
        aa_registry_split_spec(spec, ':', name, sizeof(name), &args) < 0 ||
        aa_registry_lookup(AA_STRATEGY_KIND_IDLE, name, &entry) < 0)
    {
        AA_APPEND_ERR("idle strategy '%s': use NAME[:ARGS], e.g. backoff:10-20-1us-1ms or sleeping:1ms", spec);
        return -1;
    }
    if (NULL != entry.options)
    {
        if (NULL != args)
        {
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                "idle strategy '%s': '%s' is an alias of %s with arguments '%s' already; give no arguments, or name %s",
                spec, name, entry.target, entry.options, entry.target);
            return -1;
        }
        args = entry.options;
    }
    const aa_idle_strategy_table_t *table = entry.table;
    void *state = NULL;
    if (table->init(&state, args) < 0)
    {
        AA_APPEND_ERR("idle strategy '%s'", spec);
        return -1;
    }
    strategy->name = entry.target;
    strategy->idle = table->idle;
    strategy->init = table->init;
    strategy->set_doorbell = table->set_doorbell;
    strategy->close = table->close;
    strategy->state = state;
    return 0;
}

void aa_idle_strategy_set_doorbell(
    aa_idle_strategy_t *strategy, aa_doorbell_t *doorbell, int64_t deep_after_ns, int64_t deep_park_ns)
{
    if (NULL != strategy->set_doorbell)
    {
        strategy->set_doorbell(strategy->state, doorbell, deep_after_ns, deep_park_ns);
    }
}

void aa_idle_strategy_set_deep_waiter(
    aa_idle_strategy_t *strategy, const aa_idle_deep_waiter_t *waiter, int64_t deep_after_ns, int64_t deep_park_ns)
{
    if (aa_idle_backoff == strategy->idle)
    {
        aa_idle_backoff_set_doorbell(strategy->state, NULL, deep_after_ns, deep_park_ns);
        ((aa_backoff_state_t *)strategy->state)->waiter = waiter;
    }
}

void aa_idle_strategy_close(aa_idle_strategy_t *strategy)
{
    if (NULL != strategy->set_doorbell)
    {
        strategy->set_doorbell(strategy->state, NULL, 0, 0);
    }
    if (NULL != strategy->close)
    {
        strategy->close(strategy->state);
    }
    else
    {
        free(strategy->state);
    }
    strategy->state = NULL;
}

int aa_idle_strategy_option_check(const aa_option_t *opt, const char *value)
{
    aa_idle_strategy_t probe;
    if (aa_idle_strategy_load(&probe, value) < 0)
    {
        AA_APPEND_ERR("invalid %s", opt->env_name);
        return -1;
    }
    aa_idle_strategy_close(&probe);
    return 0;
}

/* ---- runner ---- */

static void *aa_agent_runner_main(void *arg)
{
    aa_agent_runner_t *runner = arg;
    char name[16];
    size_t n = strnlen(runner->role_name, sizeof(name) - 1);
    memcpy(name, runner->role_name, n);
    name[n] = '\0';
    pthread_setname_np(pthread_self(), name);
    while (__atomic_load_n(&runner->running, __ATOMIC_ACQUIRE))
    {
        int work_count = runner->do_work(runner->agent_state);
        aa_idle_strategy_idle(&runner->idle_strategy, work_count);
    }
    return NULL;
}

int aa_agent_runner_init(
    aa_agent_runner_t *runner, const char *role_name, void *agent_state, aa_agent_do_work_func_t do_work,
    aa_agent_on_close_func_t on_close, aa_idle_strategy_t *idle_strategy)
{
    memset(runner, 0, sizeof(*runner));
    snprintf(runner->role_name, sizeof(runner->role_name), "%s", role_name);
    runner->agent_state = agent_state;
    runner->do_work = do_work;
    runner->on_close = on_close;
    runner->idle_strategy = *idle_strategy;
    runner->state = AA_AGENT_STATE_INITED;
    return 0;
}

int aa_agent_runner_start(aa_agent_runner_t *runner)
{
    __atomic_store_n(&runner->running, true, __ATOMIC_RELEASE);
    int rc = pthread_create(&runner->thread, NULL, aa_agent_runner_main, runner);
    if (0 != rc)
    {
        __atomic_store_n(&runner->running, false, __ATOMIC_RELEASE);
        AA_SET_ERR(rc, "could not start the %s thread: %s", runner->role_name, strerror(rc));
        return -1;
    }
    runner->state = AA_AGENT_STATE_STARTED;
    return 0;
}

int aa_agent_runner_invoke(aa_agent_runner_t *runner)
{
    return runner->do_work(runner->agent_state);
}

void aa_agent_runner_signal_stop(aa_agent_runner_t *runner)
{
    if (AA_AGENT_STATE_STARTED == runner->state)
    {
        __atomic_store_n(&runner->running, false, __ATOMIC_RELEASE);
    }
}

int aa_agent_runner_close(aa_agent_runner_t *runner)
{
    if (AA_AGENT_STATE_STARTED == runner->state)
    {
        aa_agent_runner_signal_stop(runner);
        runner->state = AA_AGENT_STATE_STOPPING;
        pthread_join(runner->thread, NULL);
        runner->state = AA_AGENT_STATE_STOPPED;
    }
    if (AA_AGENT_STATE_CLOSED != runner->state && AA_AGENT_STATE_UNUSED != runner->state)
    {
        if (NULL != runner->on_close)
        {
            runner->on_close(runner->agent_state);
        }
        aa_idle_strategy_close(&runner->idle_strategy);
        runner->state = AA_AGENT_STATE_CLOSED;
    }
    return 0;
}

/* ---- idle strategies for application loops (the public API) ---- */

aa_idle_strategy_t *aa_idle_strategy_new(const char *spec)
{
    aa_idle_strategy_t *strategy = calloc(1, sizeof(aa_idle_strategy_t));
    if (NULL == strategy)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory allocating an idle strategy");
        return NULL;
    }
    if (aa_idle_strategy_load(strategy, spec) < 0)
    {
        free(strategy);
        return NULL;
    }
    return strategy;
}

void aa_idle_strategy_apply(aa_idle_strategy_t *strategy, int work_count)
{
    strategy->idle(strategy->state, work_count);
}

const char *aa_idle_strategy_name(const aa_idle_strategy_t *strategy)
{
    return strategy->name;
}

void aa_idle_strategy_free(aa_idle_strategy_t *strategy)
{
    if (NULL != strategy)
    {
        aa_idle_strategy_close(strategy);
        free(strategy);
    }
}
