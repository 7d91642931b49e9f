#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "concurrent/aa_doorbell.h"

void aa_doorbell_ring_slow(aa_doorbell_t *doorbell)
{
    if (__atomic_exchange_n(&doorbell->armed, 0, __ATOMIC_SEQ_CST))
    {
        __atomic_fetch_add(&doorbell->sequence, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &doorbell->sequence, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
}

int32_t aa_doorbell_arm(aa_doorbell_t *doorbell)
{
    __atomic_store_n(&doorbell->armed, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return __atomic_load_n(&doorbell->sequence, __ATOMIC_SEQ_CST);
}

void aa_doorbell_wait(aa_doorbell_t *doorbell, int32_t sequence, int64_t timeout_ns)
{
    struct timespec timeout = { .tv_sec = timeout_ns / 1000000000LL, .tv_nsec = timeout_ns % 1000000000LL };
    syscall(SYS_futex, &doorbell->sequence, FUTEX_WAIT, sequence, &timeout, NULL, 0);
}

bool aa_doorbell_set_add_word(aa_doorbell_set_t *set, volatile int32_t *word, int32_t value, bool shared)
{
    if (set->count >= AA_DOORBELL_SET_CAPACITY)
    {
        return false;
    }
    struct futex_waitv *w = &set->waitv[set->count++];
    w->val = (uint32_t)value;
    w->uaddr = (uintptr_t)word;
    w->flags = FUTEX_32 | (shared ? 0 : FUTEX_PRIVATE_FLAG);
    w->__reserved = 0;
    return true;
}

bool aa_doorbell_set_add(aa_doorbell_set_t *set, aa_doorbell_t *doorbell)
{
    return set->count < AA_DOORBELL_SET_CAPACITY &&
        aa_doorbell_set_add_word(set, &doorbell->sequence, aa_doorbell_arm(doorbell), true);
}

bool aa_doorbell_set_watch(aa_doorbell_set_t *set, aa_doorbell_t *doorbell)
{
    return aa_doorbell_set_add_word(set, &doorbell->sequence, __atomic_load_n(&doorbell->sequence, __ATOMIC_SEQ_CST), true);
}

int aa_doorbell_set_wait(aa_doorbell_set_t *set, int64_t timeout_ns)
{
    if (1 == set->count)
    {
        const struct futex_waitv *w = &set->waitv[0];
        struct timespec timeout = { .tv_sec = timeout_ns / 1000000000LL, .tv_nsec = timeout_ns % 1000000000LL };
        int op = 0 != (w->flags & FUTEX_PRIVATE_FLAG) ? FUTEX_WAIT_PRIVATE : FUTEX_WAIT;
        syscall(SYS_futex, (void *)(uintptr_t)w->uaddr, op, (int32_t)w->val, &timeout, NULL, 0);
        return 0;
    }
#ifdef SYS_futex_waitv
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ns / 1000000000LL;
    deadline.tv_nsec += timeout_ns % 1000000000LL;
    if (deadline.tv_nsec >= 1000000000L)
    {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    if (syscall(SYS_futex_waitv, set->waitv, set->count, 0, &deadline, CLOCK_MONOTONIC) < 0 && ENOSYS == errno)
    {
        return -1;
    }
    return 0;
#else
    errno = ENOSYS;
    return -1;
#endif
}
