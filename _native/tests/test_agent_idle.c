/* Idle strategies, duration/size parsing and agent runners. */
#include <string.h>
#include <time.h>

#include "aa_test.h"
#include "agent/aa_agent.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"
#include "util/aa_parse.h"

static void should_parse_durations_and_sizes(void)
{
    AA_CHECK_EQ(aa_parse_duration_ns("1ms"), 1000000);
    AA_CHECK_EQ(aa_parse_duration_ns("500us"), 500000);
    AA_CHECK_EQ(aa_parse_duration_ns("2s"), 2000000000LL);
    AA_CHECK_EQ(aa_parse_duration_ns("100"), 100);
    AA_CHECK_EQ(aa_parse_duration_ns("0.5s"), 500000000LL);
    AA_CHECK_EQ(aa_parse_duration_ns("soon"), -1);
    AA_CHECK_EQ(aa_parse_duration_ns("5 minutes"), -1);
    AA_CHECK_EQ(aa_parse_size("64k"), 65536);
    AA_CHECK_EQ(aa_parse_size("16M"), 16 * 1024 * 1024);
    AA_CHECK_EQ(aa_parse_size("1g"), 1024 * 1024 * 1024);
    AA_CHECK_EQ(aa_parse_size("4096"), 4096);
    AA_CHECK_EQ(aa_parse_size("4kb"), -1);
    AA_CHECK_EQ(aa_parse_size("-1"), -1);
}

static void should_load_strategies_by_name(void)
{
    const char *good[] = { "backoff", "backoff:10-20-1us-1ms", "spin", "yield", "sleeping", "sleep-ns:1ms", "noop",
        "aa_idle_strategy_backoff" };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
    {
        aa_idle_strategy_t s;
        AA_CHECK_EQ(aa_idle_strategy_load(&s, good[i]), 0);
        aa_idle_strategy_idle(&s, 0);
        aa_idle_strategy_idle(&s, 1);
        aa_idle_strategy_close(&s);
    }
    aa_idle_strategy_t s;
    AA_CHECK_EQ(aa_idle_strategy_load(&s, "napping"), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "backoff"));
    AA_CHECK_EQ(aa_idle_strategy_load(&s, "backoff:1-2-3"), -1);
    AA_CHECK_EQ(aa_idle_strategy_load(&s, "backoff:1-2-1ms-1us"), -1);
    AA_CHECK_EQ(aa_idle_strategy_load(&s, "spin:5"), -1);
}

/* Spins and yields never park; parks double up to the max. Parks are long (50 ms up) so that a
 * loaded machine's scheduling delays cannot be mistaken for them. */
static void should_back_off_to_max_park(void)
{
    aa_idle_strategy_t s;
    AA_CHECK_EQ(aa_idle_strategy_load(&s, "backoff:2-2-50ms-200ms"), 0);
    int64_t start = aa_nano_clock();
    for (int i = 0; i < 4; i++)
    {
        aa_idle_strategy_idle(&s, 0);
    }
    AA_CHECK(aa_nano_clock() - start < 50000000);
    start = aa_nano_clock();
    aa_idle_strategy_idle(&s, 0);
    aa_idle_strategy_idle(&s, 0);
    aa_idle_strategy_idle(&s, 0);
    AA_CHECK(aa_nano_clock() - start >= 350000000);
    aa_idle_strategy_idle(&s, 1);
    start = aa_nano_clock();
    aa_idle_strategy_idle(&s, 0);
    AA_CHECK(aa_nano_clock() - start < 50000000);
    aa_idle_strategy_close(&s);
}

typedef struct
{
    volatile int work;
    volatile int closed;
}
counting_agent_t;

static int counting_do_work(void *state)
{
    counting_agent_t *a = state;
    __atomic_fetch_add(&a->work, 1, __ATOMIC_RELAXED);
    return 0;
}

static void counting_on_close(void *state)
{
    ((counting_agent_t *)state)->closed = 1;
}

static void should_run_agent_on_thread_and_stop(void)
{
    counting_agent_t agent = { 0, 0 };
    aa_idle_strategy_t s;
    aa_idle_strategy_load(&s, "backoff");
    aa_agent_runner_t runner;
    AA_CHECK_EQ(aa_agent_runner_init(&runner, "test-agent", &agent, counting_do_work, counting_on_close, &s), 0);
    AA_CHECK_EQ(aa_agent_runner_invoke(&runner), 0);
    AA_CHECK_EQ(agent.work, 1);
    AA_CHECK_EQ(aa_agent_runner_start(&runner), 0);
    int64_t deadline = aa_nano_clock() + 5000000000LL;
    while (__atomic_load_n(&agent.work, __ATOMIC_RELAXED) < 100)
    {
        AA_CHECK(aa_nano_clock() < deadline);
    }
    int64_t start = aa_nano_clock();
    AA_CHECK_EQ(aa_agent_runner_close(&runner), 0);
    AA_CHECK(aa_nano_clock() - start < 100000000LL);
    AA_CHECK_EQ(agent.closed, 1);
}

typedef struct doorbell_agent_stct
{
    volatile int pending;
    volatile int64_t cycles;
    volatile int64_t consumed_at_ns;
}
doorbell_agent_t;

static int doorbell_do_work(void *state)
{
    doorbell_agent_t *agent = state;
    __atomic_fetch_add(&agent->cycles, 1, __ATOMIC_RELAXED);
    if (__atomic_exchange_n(&agent->pending, 0, __ATOMIC_SEQ_CST))
    {
        __atomic_store_n(&agent->consumed_at_ns, aa_nano_clock(), __ATOMIC_RELEASE);
        return 1;
    }
    return 0;
}

static int64_t cycles_over(doorbell_agent_t *agent, int64_t ns)
{
    int64_t before = __atomic_load_n(&agent->cycles, __ATOMIC_RELAXED);
    struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };
    nanosleep(&ts, NULL);
    return __atomic_load_n(&agent->cycles, __ATOMIC_RELAXED) - before;
}

/* A backoff agent with a doorbell sleeps deeply after a quiet spell (few duty cycles), and a ring
 * wakes it long before its deep sleep would end; without an armed sleeper a ring does nothing. */
static void should_sleep_deeply_and_wake_on_ring(void)
{
    doorbell_agent_t agent = { 0, 0, 0 };
    aa_doorbell_t doorbell = { 0, 0 };
    aa_doorbell_ring(&doorbell);
    AA_CHECK_EQ(doorbell.sequence, 0); /* nobody armed it: nothing to do */

    aa_idle_strategy_t s;
    AA_CHECK_EQ(aa_idle_strategy_load(&s, "backoff"), 0);
    const int64_t deep_park_ns = 2000000000LL;
    aa_idle_strategy_set_doorbell(&s, &doorbell, 200000000LL, deep_park_ns);
    aa_agent_runner_t runner;
    AA_CHECK_EQ(aa_agent_runner_init(&runner, "test-deep", &agent, doorbell_do_work, NULL, &s), 0);
    AA_CHECK_EQ(aa_agent_runner_start(&runner), 0);

    int64_t shallow = cycles_over(&agent, 200000000LL);
    int64_t deadline = aa_nano_clock() + 5000000000LL;
    while (0 == __atomic_load_n(&doorbell.armed, __ATOMIC_ACQUIRE))
    {
        AA_CHECK(aa_nano_clock() < deadline);
        cycles_over(&agent, 1000000LL);
    }
    int64_t deep = cycles_over(&agent, 200000000LL);
    fprintf(stdout, "[%" PRId64 " cycles/200ms at max park, %" PRId64 " deeply idle] ", shallow, deep);
    AA_CHECK(deep * 4 < shallow);

    for (int trial = 0; trial < 3; trial++)
    {
        deadline = aa_nano_clock() + 5000000000LL;
        while (0 == __atomic_load_n(&doorbell.armed, __ATOMIC_ACQUIRE))
        {
            AA_CHECK(aa_nano_clock() < deadline);
            cycles_over(&agent, 1000000LL);
        }
        cycles_over(&agent, 50000000LL);
        __atomic_store_n(&agent.consumed_at_ns, 0, __ATOMIC_RELEASE);
        int64_t rung_at = aa_nano_clock();
        __atomic_store_n(&agent.pending, 1, __ATOMIC_SEQ_CST);
        int32_t sequence = doorbell.sequence;
        aa_doorbell_ring(&doorbell);
        AA_CHECK_EQ(doorbell.sequence, sequence + 1);
        AA_CHECK_EQ(doorbell.armed, 0);
        while (0 == __atomic_load_n(&agent.consumed_at_ns, __ATOMIC_ACQUIRE))
        {
            AA_CHECK(aa_nano_clock() < deadline);
        }
        fprintf(stdout, "[woken in %" PRId64 " us] ", (agent.consumed_at_ns - rung_at) / 1000);
        /* a deep sleep here lasts 2 s; being woken well inside it shows the ring did it */
        AA_CHECK(agent.consumed_at_ns - rung_at < deep_park_ns / 4);
    }
    AA_CHECK_EQ(aa_agent_runner_close(&runner), 0);
}

typedef struct fake_waiter_stct
{
    bool can_arm;
    int arms;
    int waits;
    int64_t last_timeout_ns;
}
fake_waiter_t;

static bool fake_waiter_arm(void *clientd)
{
    fake_waiter_t *w = clientd;
    w->arms++;
    return w->can_arm;
}

static void fake_waiter_wait(void *clientd, int64_t timeout_ns)
{
    fake_waiter_t *w = clientd;
    w->waits++;
    w->last_timeout_ns = timeout_ns;
}

/* With a deep waiter, a backoff strategy idle for deep_after at its longest park arms the waiter,
 * lets one more duty cycle run, then waits on it for deep_park; a waiter that cannot arm leaves it
 * parking as usual; work starts the count again. */
static void should_sleep_deeply_on_a_waiter(void)
{
    fake_waiter_t fake = { true, 0, 0, 0 };
    aa_idle_deep_waiter_t waiter = { fake_waiter_arm, fake_waiter_wait, &fake };
    aa_idle_strategy_t s;
    AA_CHECK_EQ(aa_idle_strategy_load(&s, "backoff:1-1-1us-1us"), 0);
    const int64_t deep_after_ns = 200000000LL, deep_park_ns = 3000000000LL;
    aa_idle_strategy_set_deep_waiter(&s, &waiter, deep_after_ns, deep_park_ns);

    int64_t start = aa_nano_clock();
    int64_t deadline = start + 5000000000LL;
    while (0 == fake.arms)
    {
        AA_CHECK(aa_nano_clock() < deadline);
        aa_idle_strategy_idle(&s, 0);
    }
    AA_CHECK(aa_nano_clock() - start >= deep_after_ns);
    AA_CHECK_EQ(fake.waits, 0); /* armed: one more duty cycle before the wait */
    aa_idle_strategy_idle(&s, 0);
    AA_CHECK_EQ(fake.waits, 1);
    AA_CHECK_EQ(fake.last_timeout_ns, deep_park_ns);
    aa_idle_strategy_idle(&s, 0); /* still idle: arms again at once */
    AA_CHECK_EQ(fake.arms, 2);
    aa_idle_strategy_idle(&s, 0);
    AA_CHECK_EQ(fake.waits, 2);

    fake.can_arm = false; /* cannot sleep deeply now: parks, never waits */
    for (int i = 0; i < 10; i++)
    {
        aa_idle_strategy_idle(&s, 0);
    }
    AA_CHECK_EQ(fake.waits, 2);
    AA_CHECK(fake.arms > 2);

    fake.can_arm = true;
    aa_idle_strategy_idle(&s, 1); /* work: deep idle is deep_after away again */
    int arms = fake.arms;
    aa_idle_strategy_idle(&s, 0);
    aa_idle_strategy_idle(&s, 0);
    aa_idle_strategy_idle(&s, 0);
    aa_idle_strategy_idle(&s, 0);
    AA_CHECK_EQ(fake.arms, arms);

    aa_idle_strategy_set_deep_waiter(&s, NULL, 0, 0); /* off */
    aa_idle_strategy_close(&s);
}

int main(void)
{
    AA_RUN(should_parse_durations_and_sizes);
    AA_RUN(should_load_strategies_by_name);
    AA_RUN(should_back_off_to_max_park);
    AA_RUN(should_run_agent_on_thread_and_stop);
    AA_RUN(should_sleep_deeply_and_wake_on_ring);
    AA_RUN(should_sleep_deeply_on_a_waiter);
    return 0;
}
