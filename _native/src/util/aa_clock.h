/*
 * Clocks. aa_nano_clock and aa_epoch_clock read the system; aa_clock_t is the injectable clock the
 * driver (aa_driver_context_t.clock) and the client read every timer through, so that a test moves
 * time instead of sleeping: liveness, linger, flow-control and connection timeouts, and whatever is
 * timed later (re-resolution, gossip).
 */
#ifndef AA_CLOCK_H
#define AA_CLOCK_H

#include <stdint.h>
#include <time.h>


/* Monotonic nanoseconds, for timers and timeouts. */
static inline int64_t aa_nano_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Wall-clock milliseconds since the epoch, for values other processes compare (heartbeats). */
static inline int64_t aa_epoch_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000LL;
}

typedef int64_t (*aa_clock_func_t)(void *clientd);

/* A pair of clocks read through functions: nano_time (monotonic ns, for timers) and epoch_time (ms
 * since the epoch, for what other processes compare: heartbeats, timestamps). Both may be called
 * from any thread. */
typedef struct aa_clock_stct
{
    aa_clock_func_t nano_time;
    aa_clock_func_t epoch_time;
    void *clientd;
}
aa_clock_t;

/* The system's clocks (aa_nano_clock, aa_epoch_clock). */
aa_clock_t aa_clock_system(void);

static inline int64_t aa_clock_nano_time(const aa_clock_t *clock)
{
    return clock->nano_time(clock->clientd);
}

static inline int64_t aa_clock_epoch_time(const aa_clock_t *clock)
{
    return clock->epoch_time(clock->clientd);
}

/* A clock for tests: it stands still until moved. Readable from any thread while one thread moves
 * it. Other processes compare epoch times with their own clocks (a driver's heartbeat, a client's
 * keepalive): start it at the system's epoch time when the other side reads the system clock. */
typedef struct aa_test_clock_stct
{
    volatile int64_t nano_time;
    volatile int64_t epoch_time_ms;
}
aa_test_clock_t;

void aa_test_clock_init(aa_test_clock_t *test_clock, int64_t nano_time, int64_t epoch_time_ms);
/* Moves both clocks forward by delta_ns (the epoch clock by whole milliseconds of the total moved). */
void aa_test_clock_advance(aa_test_clock_t *test_clock, int64_t delta_ns);
/* An aa_clock_t reading test_clock; its two readers, for APIs that take the functions. */
aa_clock_t aa_test_clock(aa_test_clock_t *test_clock);
int64_t aa_test_clock_nano_time(void *test_clock);
int64_t aa_test_clock_epoch_time(void *test_clock);
/* A test clock on the heap (for the public API); NULL on out of memory. */
aa_test_clock_t *aa_test_clock_new(int64_t nano_time, int64_t epoch_time_ms);
void aa_test_clock_free(aa_test_clock_t *test_clock);

#endif
