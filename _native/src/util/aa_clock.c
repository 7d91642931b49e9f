#include <errno.h>
#include <stdlib.h>

#include "util/aa_clock.h"
#include "util/aa_error.h"

static int64_t aa_clock_system_nano_time(void *clientd)
{
    (void)clientd;
    return aa_nano_clock();
}

static int64_t aa_clock_system_epoch_time(void *clientd)
{
    (void)clientd;
    return aa_epoch_clock();
}

aa_clock_t aa_clock_system(void)
{
    aa_clock_t clock = { aa_clock_system_nano_time, aa_clock_system_epoch_time, NULL };
    return clock;
}

int64_t aa_test_clock_nano_time(void *clientd)
{
    return __atomic_load_n(&((aa_test_clock_t *)clientd)->nano_time, __ATOMIC_ACQUIRE);
}

int64_t aa_test_clock_epoch_time(void *clientd)
{
    return __atomic_load_n(&((aa_test_clock_t *)clientd)->epoch_time_ms, __ATOMIC_ACQUIRE);
}

void aa_test_clock_init(aa_test_clock_t *test_clock, int64_t nano_time, int64_t epoch_time_ms)
{
    /* (the util layer sits below concurrent/aa_atomic.h: the same builtins, written out) */
    __atomic_store_n(&test_clock->nano_time, nano_time, __ATOMIC_RELEASE);
    __atomic_store_n(&test_clock->epoch_time_ms, epoch_time_ms, __ATOMIC_RELEASE);
}

void aa_test_clock_advance(aa_test_clock_t *test_clock, int64_t delta_ns)
{
    int64_t before = __atomic_load_n(&test_clock->nano_time, __ATOMIC_RELAXED);
    int64_t after = before + delta_ns;
    /* the epoch clock follows the whole milliseconds crossed, so small steps add up */
    int64_t delta_ms = after / 1000000 - before / 1000000;
    int64_t epoch_ms = __atomic_load_n(&test_clock->epoch_time_ms, __ATOMIC_RELAXED);
    __atomic_store_n(&test_clock->epoch_time_ms, epoch_ms + delta_ms, __ATOMIC_RELEASE);
    __atomic_store_n(&test_clock->nano_time, after, __ATOMIC_RELEASE);
}

aa_clock_t aa_test_clock(aa_test_clock_t *test_clock)
{
    aa_clock_t clock = { aa_test_clock_nano_time, aa_test_clock_epoch_time, test_clock };
    return clock;
}

aa_test_clock_t *aa_test_clock_new(int64_t nano_time, int64_t epoch_time_ms)
{
    aa_test_clock_t *test_clock = malloc(sizeof(aa_test_clock_t));
    if (NULL == test_clock)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating a test clock");
        return NULL;
    }
    aa_test_clock_init(test_clock, nano_time, epoch_time_ms);
    return test_clock;
}

void aa_test_clock_free(aa_test_clock_t *test_clock)
{
    free(test_clock);
}
