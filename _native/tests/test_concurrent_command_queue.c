/* Command queue between driver agents: order, full queue, and a two-thread stress with wrap-around. */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "aa_test.h"
#include "concurrent/aa_command_queue.h"

typedef struct
{
    int64_t last;
    int64_t count;
    int64_t sum;
    int order_errors;
}
agent_t;

typedef struct
{
    int64_t value;
    int64_t padding[20];
}
args_t;

static void on_value(void *agent, const void *args)
{
    agent_t *a = agent;
    const args_t *v = args;
    if (v->value != a->last + 1)
    {
        a->order_errors++;
    }
    a->last = v->value;
    a->count++;
    a->sum += v->value;
}

static void should_run_commands_in_order(void)
{
    aa_command_queue_t q;
    AA_CHECK_EQ(aa_command_queue_init(&q, 4), 0);
    agent_t agent = { 0 };
    for (int64_t i = 1; i <= 4; i++)
    {
        args_t args = { .value = i };
        AA_CHECK(aa_command_queue_offer(&q, on_value, &args, sizeof(args)));
    }
    args_t extra = { .value = 5 };
    AA_CHECK(!aa_command_queue_offer(&q, on_value, &extra, sizeof(extra)));
    AA_CHECK_EQ(aa_command_queue_size(&q), 4);
    AA_CHECK_EQ(aa_command_queue_drain(&q, &agent, 3), 3);
    AA_CHECK_EQ(agent.last, 3);
    AA_CHECK(aa_command_queue_offer(&q, on_value, &extra, sizeof(extra)));
    AA_CHECK_EQ(aa_command_queue_drain(&q, &agent, 10), 2);
    AA_CHECK_EQ(agent.last, 5);
    AA_CHECK_EQ(agent.order_errors, 0);
    AA_CHECK_EQ(aa_command_queue_drain(&q, &agent, 10), 0);
    uint8_t too_long[AA_COMMAND_ARGS_MAX_LENGTH + 1] = { 0 };
    AA_CHECK(!aa_command_queue_offer(&q, on_value, too_long, sizeof(too_long)));
    aa_command_queue_close(&q);
}

static void should_reject_bad_capacity(void)
{
    aa_command_queue_t q;
    AA_CHECK_EQ(aa_command_queue_init(&q, 3), -1);
}

#define STRESS_COUNT 500000

static void *producer(void *arg)
{
    aa_command_queue_t *q = arg;
    for (int64_t i = 1; i <= STRESS_COUNT; i++)
    {
        args_t args = { .value = i };
        while (!aa_command_queue_offer(q, on_value, &args, sizeof(args)))
        {
            sched_yield();
        }
    }
    return NULL;
}

static void should_pass_commands_between_threads(void)
{
    aa_command_queue_t q;
    AA_CHECK_EQ(aa_command_queue_init(&q, 64), 0);
    agent_t agent = { 0 };
    pthread_t thread;
    AA_CHECK_EQ(pthread_create(&thread, NULL, producer, &q), 0);
    while (agent.count < STRESS_COUNT)
    {
        if (0 == aa_command_queue_drain(&q, &agent, 10))
        {
            sched_yield();
        }
    }
    pthread_join(thread, NULL);
    AA_CHECK_EQ(agent.order_errors, 0);
    AA_CHECK_EQ(agent.sum, (int64_t)STRESS_COUNT * (STRESS_COUNT + 1) / 2);
    aa_command_queue_close(&q);
}

int main(void)
{
    AA_RUN(should_run_commands_in_order);
    AA_RUN(should_reject_bad_capacity);
    AA_RUN(should_pass_commands_between_threads);
    return 0;
}
