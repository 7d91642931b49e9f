/* A recording's syncer: segment syncs on a thread of their own (see aa_archive_syncer.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "archive/aa_archive_syncer.h"
#include "archive/aa_archive_segment.h"
#include "util/aa_error.h"

static void *aa_archive_syncer_main(void *arg)
{
    aa_archive_syncer_t *syncer = arg;
    pthread_setname_np(pthread_self(), "archive-syncer");
    pthread_mutex_lock(&syncer->lock);
    for (;;)
    {
        if (0 == syncer->error_code && syncer->requested > syncer->synced)
        {
            int fd = syncer->fd;
            int64_t target = syncer->requested;
            pthread_mutex_unlock(&syncer->lock);
            int rc = aa_archive_segment_sync(fd, syncer->sync_level);
            if (0 == rc)
            {
                syncer->on_synced(syncer->clientd, target);
            }
            pthread_mutex_lock(&syncer->lock);
            if (0 == rc)
            {
                syncer->synced = target;
            }
            else
            {
                syncer->error_code = 0 != aa_errcode() ? aa_errcode() : AA_ERROR_CODE_GENERIC_ERROR;
                snprintf(syncer->error, sizeof(syncer->error), "%s", aa_errmsg());
            }
            pthread_cond_broadcast(&syncer->cond);
        }
        else if (syncer->stopping)
        {
            break;
        }
        else
        {
            pthread_cond_wait(&syncer->cond, &syncer->lock);
        }
    }
    pthread_mutex_unlock(&syncer->lock);
    return NULL;
}

int aa_archive_syncer_start(aa_archive_syncer_t *syncer, int32_t sync_level, int64_t position,
    aa_archive_on_synced_t on_synced, void *clientd)
{
    memset(syncer, 0, sizeof(*syncer));
    syncer->fd = -1;
    syncer->requested = position;
    syncer->synced = position;
    syncer->sync_level = sync_level;
    syncer->on_synced = on_synced;
    syncer->clientd = clientd;
    pthread_mutex_init(&syncer->lock, NULL);
    pthread_cond_init(&syncer->cond, NULL);
    int rc = pthread_create(&syncer->thread, NULL, aa_archive_syncer_main, syncer);
    if (0 != rc)
    {
        pthread_cond_destroy(&syncer->cond);
        pthread_mutex_destroy(&syncer->lock);
        AA_SET_ERR(rc, "could not start the recording's sync thread: %s", strerror(rc));
        return -1;
    }
    syncer->running = true;
    return 0;
}

/* with the lock held: -1 with the failed sync's error set, else 0 */
static int aa_archive_syncer_failed(aa_archive_syncer_t *syncer)
{
    if (0 != syncer->error_code)
    {
        AA_SET_ERR(syncer->error_code, "%s", syncer->error);
        return -1;
    }
    return 0;
}

int aa_archive_syncer_request(aa_archive_syncer_t *syncer, int fd, int64_t position)
{
    pthread_mutex_lock(&syncer->lock);
    int rc = aa_archive_syncer_failed(syncer);
    if (0 == rc)
    {
        syncer->fd = fd;
        syncer->requested = position;
        pthread_cond_broadcast(&syncer->cond);
    }
    pthread_mutex_unlock(&syncer->lock);
    return rc;
}

int aa_archive_syncer_check(aa_archive_syncer_t *syncer)
{
    pthread_mutex_lock(&syncer->lock);
    int rc = aa_archive_syncer_failed(syncer);
    pthread_mutex_unlock(&syncer->lock);
    return rc;
}

int aa_archive_syncer_drain(aa_archive_syncer_t *syncer)
{
    if (!syncer->running)
    {
        return 0;
    }
    pthread_mutex_lock(&syncer->lock);
    while (0 == syncer->error_code && syncer->synced < syncer->requested)
    {
        pthread_cond_wait(&syncer->cond, &syncer->lock);
    }
    int rc = aa_archive_syncer_failed(syncer);
    pthread_mutex_unlock(&syncer->lock);
    return rc;
}

int aa_archive_syncer_stop(aa_archive_syncer_t *syncer)
{
    if (!syncer->running)
    {
        return 0;
    }
    int rc = aa_archive_syncer_drain(syncer);
    pthread_mutex_lock(&syncer->lock);
    syncer->stopping = true;
    pthread_cond_broadcast(&syncer->cond);
    pthread_mutex_unlock(&syncer->lock);
    pthread_join(syncer->thread, NULL);
    pthread_cond_destroy(&syncer->cond);
    pthread_mutex_destroy(&syncer->lock);
    syncer->running = false;
    return rc;
}
