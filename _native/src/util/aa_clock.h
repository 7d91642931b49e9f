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

#endif
