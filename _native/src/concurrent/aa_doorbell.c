#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "aa_doorbell.h"

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
