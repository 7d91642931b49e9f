/*
 * A recording's syncer (file.sync.level >= 1): a thread of its own that forces a segment's writes to
 * disk while the recorder writes the next blocks, so the recorder never waits on the disk one block
 * after another. Each sync covers everything written before it started (group commit: on a disk
 * whose sync takes longer than a block's write, one sync covers several blocks).
 *
 * The recorded position a client sees (the recording's position and its rec-pos counter) is the
 * synced one: on_synced is called, on the syncer's thread, with each newly durable position, and it
 * is the only writer of that position while the syncer runs. A sync that fails (EIO, ENOSPC) stops
 * the syncer; the recorder learns it from aa_archive_syncer_check or the next request and fails the
 * recording at the last durable position.
 *
 * The recorder owns the segment file descriptors: before it closes one (a new segment, the end of
 * the recording) it calls aa_archive_syncer_drain, so that the syncer never syncs a closed, or
 * reused, descriptor number.
 */
#ifndef AA_ARCHIVE_SYNCER_H
#define AA_ARCHIVE_SYNCER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define AA_ARCHIVE_SYNCER_ERROR_MAX 512

typedef void (*aa_archive_on_synced_t)(void *clientd, int64_t position);

typedef struct aa_archive_syncer_stct
{
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;      /* the syncer waits on it for work, the recorder for a drain */
    bool running;             /* the thread was started and not yet joined */
    bool stopping;            /* lock */
    int fd;                   /* lock: the segment the writes up to `requested` went to */
    int64_t requested;        /* lock: written up to here */
    int64_t synced;           /* lock: durable up to here */
    int32_t sync_level;
    int32_t error_code;       /* lock: the failed sync's aa_errcode(), 0 while all is well */
    char error[AA_ARCHIVE_SYNCER_ERROR_MAX]; /* lock: its message */
    aa_archive_on_synced_t on_synced;
    void *clientd;
}
aa_archive_syncer_t;

/* Starts the thread; the writes so far (up to position) count as durable. -1 with the error set
 * when no thread could be started. */
int aa_archive_syncer_start(aa_archive_syncer_t *syncer, int32_t sync_level, int64_t position,
    aa_archive_on_synced_t on_synced, void *clientd);
/* The recorder wrote up to position into fd: have it synced. Does not wait. -1 with the syncer's
 * error set when an earlier sync failed. */
int aa_archive_syncer_request(aa_archive_syncer_t *syncer, int fd, int64_t position);
/* -1 with the syncer's error set when a sync failed, else 0. Does not wait. */
int aa_archive_syncer_check(aa_archive_syncer_t *syncer);
/* Waits until everything requested is durable: 0, or -1 with the error of the sync that failed. */
int aa_archive_syncer_drain(aa_archive_syncer_t *syncer);
/* Drains, stops and joins the thread (a no-op when it was never started): drain's result. */
int aa_archive_syncer_stop(aa_archive_syncer_t *syncer);

#endif
