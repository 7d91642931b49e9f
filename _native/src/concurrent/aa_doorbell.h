/*
 * A doorbell lets a waiter sleep long and still wake at once when another thread or process hands
 * it work: a sequence (a futex word) and an `armed` flag, in shared memory when the parties are in
 * different processes (the CnC header for the driver, a log's metadata for its readers).
 *
 * Waiter: arm (set the flag, read the sequence), look for work once more, then wait on the
 * sequence with a timeout. Ringer, after publishing work: if the flag is set, clear it, advance the
 * sequence and wake every waiter. A waiter that arms after a ring sees the work on its last look;
 * one that armed before is woken (or finds the sequence moved on). Clearing on ring makes a waiter
 * that died while armed cost one extra wake, not a wake per ring.
 *
 * aa_doorbell_ring has a full fence before it reads the flag; aa_doorbell_ring_unfenced (for the
 * message path, after a release store) has none, so a waiter that arms in the same instant may sleep
 * until its timeout: use it only where waiters have a bounded fallback.
 */
#ifndef AA_DOORBELL_H
#define AA_DOORBELL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/futex.h>

typedef struct aa_doorbell_stct
{
    volatile int32_t sequence;
    volatile int32_t armed;
}
aa_doorbell_t;

void aa_doorbell_ring_slow(aa_doorbell_t *doorbell);

static inline void aa_doorbell_ring(aa_doorbell_t *doorbell)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&doorbell->armed, __ATOMIC_RELAXED))
    {
        aa_doorbell_ring_slow(doorbell);
    }
}

static inline void aa_doorbell_ring_unfenced(aa_doorbell_t *doorbell)
{
    if (__atomic_load_n(&doorbell->armed, __ATOMIC_RELAXED))
    {
        aa_doorbell_ring_slow(doorbell);
    }
}

/* Arm the doorbell and return the sequence to wait on; look for work once more before waiting. */
int32_t aa_doorbell_arm(aa_doorbell_t *doorbell);
/* Wait until rung (the sequence moves on from `sequence`) or `timeout_ns` passes. */
void aa_doorbell_wait(aa_doorbell_t *doorbell, int32_t sequence, int64_t timeout_ns);

/* Waiting on several doorbells (and other futex words) at once: futex_waitv, Linux 5.16 and later. */
#define AA_DOORBELL_SET_CAPACITY FUTEX_WAITV_MAX

typedef struct aa_doorbell_set_stct
{
    uint32_t count;
    struct futex_waitv waitv[AA_DOORBELL_SET_CAPACITY];
}
aa_doorbell_set_t;

static inline void aa_doorbell_set_clear(aa_doorbell_set_t *set)
{
    set->count = 0;
}

/* Add a futex word to wait on while it holds `value`; `shared` when other processes wake it. False
 * when the set is full. */
bool aa_doorbell_set_add_word(aa_doorbell_set_t *set, volatile int32_t *word, int32_t value, bool shared);
/* Arm a doorbell (aa_doorbell_arm) and add it; false, leaving it unarmed, when the set is full. */
bool aa_doorbell_set_add(aa_doorbell_set_t *set, aa_doorbell_t *doorbell);
/* Add a doorbell without arming it: the wait ends when someone else's arming leads to a ring. */
bool aa_doorbell_set_watch(aa_doorbell_set_t *set, aa_doorbell_t *doorbell);
/* Wait until any word moves on from its value or `timeout_ns` passes (one word: a plain futex wait).
 * -1 with errno ENOSYS where the kernel has no futex_waitv; otherwise 0. */
int aa_doorbell_set_wait(aa_doorbell_set_t *set, int64_t timeout_ns);

#endif
