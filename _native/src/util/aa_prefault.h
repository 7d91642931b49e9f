/* Pre-faulting mapped log buffers in the background.
 *
 * The first touch of each 4 KiB page of a shared mapping is a page fault (several microseconds
 * in a virtual machine). Left to the message path, a publisher's offer or a subscriber's poll takes
 * one every 4 KiB of stream: with 32-byte messages one round trip in 64 pays it, which sets a
 * busy-poll round trip's p99. Populating the whole mapping when it is made costs ~2-6 us a page
 * at once (hundreds of ms for a 64 MiB-term IPC log), so instead a conductor walks each new
 * mapping a chunk per duty cycle with madvise(MADV_POPULATE_WRITE), starting where the stream
 * is and wrapping round the terms, well ahead of any publisher.
 *
 * Single-threaded: the owning conductor adds, steps and removes, under its own lock. Only files
 * whose blocks are all allocated are walked (populating a sparse log would allocate it). */
#ifndef AA_PREFAULT_H
#define AA_PREFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes populated per step: 64 pages, a fraction of a millisecond. */
#define AA_PREFAULT_CHUNK_LENGTH (256 * 1024)

typedef struct aa_prefault_job_stct
{
    uint8_t *base;      /* the mapping */
    size_t length;      /* bytes to walk from base */
    size_t start;       /* where the walk begins (page aligned), then wraps round to it */
    size_t done;        /* bytes walked so far */
}
aa_prefault_job_t;

typedef struct aa_prefault_stct
{
    aa_prefault_job_t *jobs;
    size_t count;
    size_t capacity;
    bool unsupported;   /* the kernel lacks MADV_POPULATE_WRITE (before 5.14): pages fault lazily */
}
aa_prefault_t;

/* Whether the file at fd has all of its blocks allocated (not sparse), so walking it allocates nothing. */
bool aa_prefault_file_is_allocated(int fd);
/* Queue [base, base + length) to be populated, starting at byte `start` and wrapping round. -1 on
 * out of memory (the mapping then faults lazily, which is correct, only slower). */
int aa_prefault_add(aa_prefault_t *prefault, uint8_t *base, size_t length, size_t start);
/* Forget any job on the mapping at `base` (call before unmapping it). */
void aa_prefault_remove(aa_prefault_t *prefault, const uint8_t *base);
/* Populate one chunk of the oldest job; the number of chunks done (0 when there is nothing to do). */
int aa_prefault_do_work(aa_prefault_t *prefault);
void aa_prefault_close(aa_prefault_t *prefault);

#endif
