/*
 * Memory-ordering helpers over C11 atomics for plain (shared-memory) words.
 *
 * Shared memory is mapped from files that other processes (and Aeron's own tools) read, so the
 * fields are plain int32/int64 at fixed offsets rather than _Atomic objects. These helpers use the
 * GCC/Clang __atomic builtins, which are the C11 memory model applied to plain objects.
 */
#ifndef AA_ATOMIC_H
#define AA_ATOMIC_H

#include <stdint.h>
#include <stdbool.h>

#define AA_GET_ACQUIRE(dst, src) ((dst) = __atomic_load_n(&(src), __ATOMIC_ACQUIRE))
#define AA_SET_RELEASE(dst, val) __atomic_store_n(&(dst), (val), __ATOMIC_RELEASE)

static inline int64_t aa_get_int64_acquire(const volatile int64_t *p)
{
    return __atomic_load_n((const int64_t *)p, __ATOMIC_ACQUIRE);
}

static inline int32_t aa_get_int32_acquire(const volatile int32_t *p)
{
    return __atomic_load_n((const int32_t *)p, __ATOMIC_ACQUIRE);
}

static inline int64_t aa_get_int64_volatile(const volatile int64_t *p)
{
    return __atomic_load_n((const int64_t *)p, __ATOMIC_RELAXED);
}

static inline int32_t aa_get_int32_volatile(const volatile int32_t *p)
{
    return __atomic_load_n((const int32_t *)p, __ATOMIC_RELAXED);
}

static inline void aa_put_int64_release(volatile int64_t *p, int64_t v)
{
    __atomic_store_n((int64_t *)p, v, __ATOMIC_RELEASE);
}

static inline void aa_put_int32_release(volatile int32_t *p, int32_t v)
{
    __atomic_store_n((int32_t *)p, v, __ATOMIC_RELEASE);
}

static inline void aa_put_int64_volatile(volatile int64_t *p, int64_t v)
{
    __atomic_store_n((int64_t *)p, v, __ATOMIC_RELAXED);
}

static inline void aa_put_int32_volatile(volatile int32_t *p, int32_t v)
{
    __atomic_store_n((int32_t *)p, v, __ATOMIC_RELAXED);
}

static inline int64_t aa_get_and_add_int64(volatile int64_t *p, int64_t delta)
{
    return __atomic_fetch_add((int64_t *)p, delta, __ATOMIC_SEQ_CST);
}

static inline int32_t aa_get_and_add_int32(volatile int32_t *p, int32_t delta)
{
    return __atomic_fetch_add((int32_t *)p, delta, __ATOMIC_SEQ_CST);
}

static inline bool aa_cas_int64(volatile int64_t *p, int64_t expected, int64_t desired)
{
    return __atomic_compare_exchange_n(
        (int64_t *)p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static inline bool aa_cas_int32(volatile int32_t *p, int32_t expected, int32_t desired)
{
    return __atomic_compare_exchange_n(
        (int32_t *)p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static inline void aa_acquire_fence(void)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

static inline void aa_release_fence(void)
{
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void aa_full_fence(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void aa_cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}

#define AA_ALIGN(value, alignment) (((value) + ((alignment) - 1)) & ~((alignment) - 1))
#define AA_IS_POWER_OF_TWO(value) ((value) > 0 && (((value) & (~(value) + 1)) == (value)))

#endif
