#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aa_prefault.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

bool aa_prefault_file_is_allocated(int fd)
{
    struct stat st;
    return 0 == fstat(fd, &st) && st.st_size > 0 && (uint64_t)st.st_blocks * 512 >= (uint64_t)st.st_size;
}

int aa_prefault_add(aa_prefault_t *prefault, uint8_t *base, size_t length, size_t start)
{
    if (prefault->unsupported || NULL == base || 0 == length)
    {
        return 0;
    }
    if (prefault->count == prefault->capacity)
    {
        size_t capacity = 0 == prefault->capacity ? 8 : prefault->capacity * 2;
        aa_prefault_job_t *jobs = realloc(prefault->jobs, capacity * sizeof(aa_prefault_job_t));
        if (NULL == jobs)
        {
            return -1;
        }
        prefault->jobs = jobs;
        prefault->capacity = capacity;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    start = start < length ? start - (start % page) : 0;
    prefault->jobs[prefault->count++] = (aa_prefault_job_t){ base, length, start, 0 };
    return 0;
}

static void aa_prefault_remove_at(aa_prefault_t *prefault, size_t i)
{
    memmove(&prefault->jobs[i], &prefault->jobs[i + 1], (prefault->count - i - 1) * sizeof(aa_prefault_job_t));
    prefault->count--;
}

void aa_prefault_remove(aa_prefault_t *prefault, const uint8_t *base)
{
    for (size_t i = 0; i < prefault->count; i++)
    {
        if (prefault->jobs[i].base == base)
        {
            aa_prefault_remove_at(prefault, i);
            return;
        }
    }
}

int aa_prefault_do_work(aa_prefault_t *prefault)
{
    if (0 == prefault->count)
    {
        return 0;
    }
    aa_prefault_job_t *job = &prefault->jobs[0];
    size_t offset = (job->start + job->done) % job->length;
    size_t chunk = job->length - job->done;
    if (chunk > AA_PREFAULT_CHUNK_LENGTH)
    {
        chunk = AA_PREFAULT_CHUNK_LENGTH;
    }
    if (chunk > job->length - offset)
    {
        chunk = job->length - offset;  /* up to the end, then on from the base */
    }
    if (madvise(job->base + offset, chunk, MADV_POPULATE_WRITE) < 0)
    {
        if (EINVAL == errno)  /* a kernel without it: leave every mapping to fault lazily */
        {
            prefault->unsupported = true;
            prefault->count = 0;
            return 0;
        }
        if (EINTR != errno && EAGAIN != errno)  /* ENOMEM, EFAULT, EHWPOISON: give up on this one */
        {
            aa_prefault_remove_at(prefault, 0);
            return 1;
        }
        return 1;
    }
    job->done += chunk;
    if (job->done >= job->length)
    {
        aa_prefault_remove_at(prefault, 0);
    }
    return 1;
}

void aa_prefault_close(aa_prefault_t *prefault)
{
    free(prefault->jobs);
    prefault->jobs = NULL;
    prefault->count = 0;
    prefault->capacity = 0;
}
