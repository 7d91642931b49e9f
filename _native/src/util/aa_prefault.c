#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/aa_prefault.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

int aa_prefault_add(aa_prefault_t *prefault, uint8_t *base, int32_t term_length, int64_t start_position,
    aa_prefault_position_func_t position, const void *source)
{
    if (prefault->unsupported || NULL == base || term_length <= 0 || start_position < 0)
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
    if (0 == prefault->page)
    {
        prefault->page = (size_t)sysconf(_SC_PAGESIZE);
    }
    int64_t page = (int64_t)prefault->page;
    int64_t ring_length = 3 * (int64_t)term_length;
    int64_t lead = term_length / 4 > AA_PREFAULT_MIN_LEAD ? term_length / 4 : AA_PREFAULT_MIN_LEAD;
    int64_t populated = start_position - (start_position % page);
    prefault->jobs[prefault->count++] = (aa_prefault_job_t){
        base, (size_t)ring_length, lead, populated, populated + ring_length, true, position, source };
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
    int work_count = 0;
    for (size_t i = 0; i < prefault->count;)
    {
        aa_prefault_job_t *job = &prefault->jobs[i];
        int64_t position = job->position(job->source);
        int64_t target = position + job->lead;
        target = target < job->end ? target : job->end;
        if (!job->filling && job->populated < job->end && job->populated - position < job->lead / 2)
        {
            job->filling = true;  /* half the lead used: top it up */
        }
        if (!job->filling || job->populated >= target)
        {
            job->filling = false;
            i++;
            continue;
        }
        size_t offset = (size_t)(job->populated % (int64_t)job->ring_length);
        size_t chunk = (size_t)(target - job->populated);
        chunk = chunk < AA_PREFAULT_CHUNK_LENGTH ? chunk : AA_PREFAULT_CHUNK_LENGTH;
        chunk = chunk < job->ring_length - offset ? chunk : job->ring_length - offset; /* then on from the base */
        chunk = (chunk + prefault->page - 1) / prefault->page * prefault->page;
        work_count++;
        if (madvise(job->base + offset, chunk, MADV_POPULATE_WRITE) < 0)
        {
            if (EINTR == errno || EAGAIN == errno)  /* again next cycle */
            {
                i++;
                continue;
            }
            if (EINVAL == errno)  /* a kernel without it: leave every mapping to fault lazily */
            {
                prefault->unsupported = true;
                prefault->count = 0;
                return work_count;
            }
            aa_prefault_remove_at(prefault, i);  /* ENOMEM, EFAULT, EHWPOISON: give up on this one */
            continue;
        }
        job->populated += (int64_t)chunk;
        if (job->populated >= job->end)
        {
            aa_prefault_remove_at(prefault, i);
            continue;
        }
        i++;
    }
    return work_count;
}

void aa_prefault_close(aa_prefault_t *prefault)
{
    free(prefault->jobs);
    prefault->jobs = NULL;
    prefault->count = 0;
    prefault->capacity = 0;
}
