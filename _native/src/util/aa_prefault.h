/* Pre-faulting mapped log buffers ahead of the stream.
 *
 * The first touch of each 4 KiB page of a shared mapping is a page fault (2-6 us on a virtual
 * machine). Left to the message path, a publisher's offer or a subscriber's poll takes one every
 * 4 KiB of stream: with 32-byte messages one round trip in 64 pays it, which sets a busy-poll round
 * trip's p99. So the conductor that made a mapping keeps it populated a lead ahead of the stream's
 * position, with madvise(MADV_POPULATE_WRITE) a chunk per duty cycle, topping the lead up only once
 * half of it is used (so a slow stream costs one burst per half lead, not a call per page on the
 * conductor that also wakes async waiters), until the whole log has been
 * populated once (after which no page of it faults again). The work follows the traffic: a quiet
 * stream costs its lead and no more, where populating a whole 64 MiB-term log at once would cost
 * ~0.5 s of CPU (and, done in mmap, 0.3-0.6 s on add_publication).
 *
 * Single-threaded: the owning conductor adds, steps and removes, under its own lock. Only files
 * whose blocks are all allocated (aa_mapped_file_t.allocated) are walked: populating a sparse log
 * would allocate it. */
#ifndef AA_PREFAULT_H
#define AA_PREFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes populated per job per duty cycle: 64 pages, a fraction of a millisecond. */
#define AA_PREFAULT_CHUNK_LENGTH (256 * 1024)
/* How far ahead of the position a log is kept populated: a quarter of a term, at least 4 MiB. */
#define AA_PREFAULT_MIN_LEAD (4 * 1024 * 1024)

/* The stream position the mapping's user is at (a producer position, a subscriber position...). */
typedef int64_t (*aa_prefault_position_func_t)(const void *source);

typedef struct aa_prefault_job_stct
{
    uint8_t *base;          /* the terms of the mapping: position p is at base + p % ring_length */
    size_t ring_length;     /* 3 terms */
    int64_t lead;
    int64_t populated;      /* stream position up to which pages are populated */
    int64_t end;            /* populated + ring_length at the start: the whole ring once */
    bool filling;           /* topping the lead up: until populated reaches position + lead */
    aa_prefault_position_func_t position;
    const void *source;
}
aa_prefault_job_t;

typedef struct aa_prefault_stct
{
    aa_prefault_job_t *jobs;
    size_t count;
    size_t capacity;
    bool unsupported;   /* the kernel lacks MADV_POPULATE_WRITE (before 5.14): pages fault lazily */
    size_t page;        /* the page size, read on the first add */
}
aa_prefault_t;

/* Keep the terms at `base` (3 x term_length) populated ahead of position(source), from
 * `start_position` on, until all of them have been. -1 on out of memory (the mapping then faults
 * lazily, which is correct, only slower). */
int aa_prefault_add(aa_prefault_t *prefault, uint8_t *base, int32_t term_length, int64_t start_position,
    aa_prefault_position_func_t position, const void *source);
/* Forget any job on the mapping at `base` (call before unmapping it). */
void aa_prefault_remove(aa_prefault_t *prefault, const uint8_t *base);
/* Populate up to a chunk of each job that is within its lead; the number of chunks done. */
int aa_prefault_do_work(aa_prefault_t *prefault);
void aa_prefault_close(aa_prefault_t *prefault);

#endif
