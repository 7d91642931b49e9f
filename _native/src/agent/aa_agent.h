/*
 * Agents and their runners. An agent is a do_work function returning a work count, an on_close
 * function and a state pointer. A runner calls do_work on its own thread and hands the work count
 * to an idle strategy, which backs off only when the count is 0.
 */
#ifndef AA_AGENT_H
#define AA_AGENT_H

#include <stdint.h>
#include <stdbool.h>
#include <pthread.h>

#include "concurrent/aa_doorbell.h"
#include "util/aa_options.h"

typedef int (*aa_agent_do_work_func_t)(void *state);
typedef void (*aa_agent_on_close_func_t)(void *state);
typedef void (*aa_idle_strategy_func_t)(void *state, int work_count);
typedef int (*aa_idle_strategy_init_func_t)(void **state, const char *args);
typedef void (*aa_idle_strategy_set_doorbell_func_t)(
    void *state, aa_doorbell_t *doorbell, int64_t deep_after_ns, int64_t deep_park_ns);
typedef void (*aa_idle_strategy_close_func_t)(void *state);

/* The function table of an idle strategy in the strategy registry (kind AA_STRATEGY_KIND_IDLE,
 * util/aa_registry.h): init builds the state from the text after "name:" (NULL when none; fail with
 * AA_SET_ERR on arguments it does not take), idle is called after every duty cycle with its work
 * count, set_doorbell (may be NULL) lets it sleep deeply, close (NULL: free()) releases the state. */
typedef struct aa_idle_strategy_table_stct
{
    aa_idle_strategy_func_t idle;
    aa_idle_strategy_init_func_t init;
    aa_idle_strategy_set_doorbell_func_t set_doorbell;
    aa_idle_strategy_close_func_t close;
}
aa_idle_strategy_table_t;

/* Backoff (spins-yields-minPark-maxPark) per reference 10; defaults 10-20-1us-1ms. */
#define AA_IDLE_STRATEGY_BACKOFF_MAX_SPINS 10
#define AA_IDLE_STRATEGY_BACKOFF_MAX_YIELDS 20
#define AA_IDLE_STRATEGY_BACKOFF_MIN_PARK_NS 1000
#define AA_IDLE_STRATEGY_BACKOFF_MAX_PARK_NS 1000000
/* Timer slack a parking backoff strategy sets on its thread, so short parks are short. */
#define AA_IDLE_TIMER_SLACK_NS 1000UL
/* Deep idle (our addition, only for agents given a doorbell, such as the driver's): after this long
 * without work at the longest park, sleep on the doorbell for up to AA_IDLE_DEEP_PARK_NS at a time.
 * A ring (a client command, a back-pressured offer) ends the sleep at once. */
#define AA_IDLE_DEEP_AFTER_NS (1000 * 1000 * 1000LL)
#define AA_IDLE_DEEP_PARK_NS (16 * 1000 * 1000LL)

typedef struct aa_idle_strategy_stct
{
    const char *name;
    aa_idle_strategy_func_t idle;
    aa_idle_strategy_init_func_t init;
    aa_idle_strategy_set_doorbell_func_t set_doorbell; /* NULL when the strategy never sleeps long */
    aa_idle_strategy_close_func_t close;               /* NULL: free(state) */
    void *state;
}
aa_idle_strategy_t;

/* Registers the built-in idle strategies in the strategy registry (once; later calls return at once). */
int aa_idle_strategy_register_builtins(void);
/* Loads an idle strategy by "name[:args]" from the strategy registry: built in are "backoff"
 * (optionally "backoff:10-20-1us-1ms"), "spin", "yield", "sleeping" / "sleep-ns" (optionally
 * ":<duration>", default 1ns, e.g. 1ms), "noop". An alias registered with arguments takes none of
 * its own. Returns -1 with an error naming the registered names on failure. */
int aa_idle_strategy_load(aa_idle_strategy_t *strategy, const char *spec);
void aa_idle_strategy_close(aa_idle_strategy_t *strategy);
/* An option's check (util/aa_options.h): the value loads as an idle strategy (*_IDLE_STRATEGY). */
int aa_idle_strategy_option_check(const aa_option_t *opt, const char *value);
/* Lets a strategy that parks (backoff) sleep deeply, up to deep_park_ns at a time, once idle for
 * deep_after_ns at its longest park, woken at once by the doorbell (NULL turns deep idle off). */
void aa_idle_strategy_set_doorbell(
    aa_idle_strategy_t *strategy, aa_doorbell_t *doorbell, int64_t deep_after_ns, int64_t deep_park_ns);
static inline void aa_idle_strategy_idle(aa_idle_strategy_t *strategy, int work_count)
{
    strategy->idle(strategy->state, work_count);
}

/* What a deeply idle backoff strategy sleeps on instead of one doorbell, for an agent woken by several
 * sources (the driver's single thread: clients, logs and sockets). arm makes every source able to
 * wake the sleeper and returns false when it cannot now (the strategy then parks as usual); after one
 * more duty cycle, wait sleeps until a source fires or timeout_ns passes. */
typedef struct aa_idle_deep_waiter_stct
{
    bool (*arm)(void *clientd);
    void (*wait)(void *clientd, int64_t timeout_ns);
    void *clientd;
}
aa_idle_deep_waiter_t;

/* Like aa_idle_strategy_set_doorbell, with a waiter (kept by pointer; NULL turns deep idle off). Only
 * the backoff strategy sleeps deeply; others ignore it. */
void aa_idle_strategy_set_deep_waiter(
    aa_idle_strategy_t *strategy, const aa_idle_deep_waiter_t *waiter, int64_t deep_after_ns, int64_t deep_park_ns);

typedef enum aa_agent_runner_state_enum
{
    AA_AGENT_STATE_UNUSED = 0,
    AA_AGENT_STATE_INITED,
    AA_AGENT_STATE_STARTED,
    AA_AGENT_STATE_STOPPING,
    AA_AGENT_STATE_STOPPED,
    AA_AGENT_STATE_CLOSED
}
aa_agent_runner_state_t;

typedef struct aa_agent_runner_stct
{
    char role_name[64];
    void *agent_state;
    aa_agent_do_work_func_t do_work;
    aa_agent_on_close_func_t on_close;
    aa_idle_strategy_t idle_strategy;
    pthread_t thread;
    volatile bool running;
    volatile int state;
}
aa_agent_runner_t;

/* Takes ownership of idle_strategy. */
int aa_agent_runner_init(
    aa_agent_runner_t *runner, const char *role_name, void *agent_state, aa_agent_do_work_func_t do_work,
    aa_agent_on_close_func_t on_close, aa_idle_strategy_t *idle_strategy);
int aa_agent_runner_start(aa_agent_runner_t *runner);
/* Invoker use: one duty cycle on the caller's thread (no idling); returns the work count. */
int aa_agent_runner_invoke(aa_agent_runner_t *runner);
/* Tells a started thread to stop after its current duty cycle, without waiting: an agent whose
 * idle strategy sleeps long wakes it after this, then closes (which waits). */
void aa_agent_runner_signal_stop(aa_agent_runner_t *runner);
/* Stops the thread (joins it), then calls on_close and frees the idle strategy state. */
int aa_agent_runner_close(aa_agent_runner_t *runner);

#endif
