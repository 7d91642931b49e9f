/* The recorder's and replayer's session lists: the conductor hands a session over once (under the
 * worker's lock, seen through an atomic flag so an idle worker takes no lock), the worker runs it
 * until it ends and marks it DONE for the conductor to finish. No I/O here. */
#include <stdlib.h>
#include <string.h>

#include "archive/aa_archive.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_array.h"

int aa_archive_worker_init(aa_archive_worker_t *worker, const char *name, aa_archive_t *archive)
{
    memset(worker, 0, sizeof(*worker));
    worker->name = name;
    worker->archive = archive;
    pthread_mutex_init(&worker->lock, NULL);
    return 0;
}

void aa_archive_worker_close(aa_archive_worker_t *worker)
{
    free(worker->pending);
    free(worker->active);
    worker->pending = NULL;
    worker->active = NULL;
    pthread_mutex_destroy(&worker->lock);
}

int aa_archive_worker_add(aa_archive_worker_t *worker, aa_archive_work_t *work)
{
    pthread_mutex_lock(&worker->lock);
    if (aa_array_ensure_capacity((void **)&worker->pending, &worker->pending_capacity, worker->pending_count,
        sizeof(*worker->pending)) < 0)
    {
        pthread_mutex_unlock(&worker->lock);
        return -1;
    }
    worker->pending[worker->pending_count++] = work;
    aa_put_int32_release(&worker->has_pending, 1);
    pthread_mutex_unlock(&worker->lock);
    return 0;
}

int aa_archive_worker_do_work(void *state)
{
    aa_archive_worker_t *worker = state;
    int work_count = 0;
    if (aa_get_int32_acquire(&worker->has_pending))
    {
        pthread_mutex_lock(&worker->lock);
        for (size_t i = 0; i < worker->pending_count; i++)
        {
            if (aa_array_ensure_capacity((void **)&worker->active, &worker->active_capacity, worker->active_count,
                sizeof(*worker->active)) < 0)
            {
                break;
            }
            worker->active[worker->active_count++] = worker->pending[i];
            work_count++;
        }
        worker->pending_count = 0;
        aa_put_int32_release(&worker->has_pending, 0);
        pthread_mutex_unlock(&worker->lock);
    }
    for (size_t i = 0; i < worker->active_count;)
    {
        aa_archive_work_t *work = worker->active[i];
        int rc = work->do_work(work->session, worker->archive);
        if (rc < 0)
        {
            /* the session has ended: let go of it, the conductor finishes it */
            worker->active[i] = worker->active[--worker->active_count];
            aa_put_int32_release(&work->state, AA_ARCHIVE_SESSION_DONE);
            work_count++;
            continue;
        }
        work_count += rc;
        i++;
    }
    return work_count;
}

