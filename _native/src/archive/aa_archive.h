/*
 * The archive service (inside the library): a client of a media driver that records streams to
 * segment files and replays them. Three agents with do_work: the conductor (control sessions,
 * the catalog, every lifecycle), the recorder (image block poll -> segment write) and the replayer
 * (segment read -> exclusive publication). DEDICATED runs each on its own thread, SHARED all on
 * one, INVOKER on the caller's aa_archive_do_work.
 *
 * Ownership: the conductor creates recording and replay sessions and hands them to the recorder or
 * replayer through a mutex-guarded queue (a session's start, not the data path); the worker runs
 * the session's I/O until it ends (stop asked, image gone, limit reached, error), takes it out of
 * its own list and marks it DONE with a release store; the conductor then finishes it (catalog,
 * signals, closing client resources) and frees it.
 */
#ifndef AA_ARCHIVE_H
#define AA_ARCHIVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "archive/aa_archive_context.h"
#include "protocols/aa_archive_codecs.h"
#include "client/aa_client.h"
#include "agent/aa_agent.h"
#include "concurrent/aa_error_log.h"
#include "util/aa_clock.h"
#include "util/aa_fs.h"

/* The mark file's layout is the codecs' (protocols/aa_archive_codecs.h: AA_ARCHIVE_MARK_FILE_*);
 * the offsets of the header fields the archive reads back besides those: */
#define AA_ARCHIVE_MARK_CONTROL_STREAM_OFFSET (8 + 32)
#define AA_ARCHIVE_MARK_LOCAL_CONTROL_STREAM_OFFSET (8 + 36)
#define AA_ARCHIVE_MARK_ERROR_BUFFER_LENGTH_OFFSET (8 + 48)

#define AA_ARCHIVE_REC_POS_TYPE_ID 100

#define AA_ARCHIVE_SESSION_ACTIVE 0
#define AA_ARCHIVE_SESSION_DONE 1

typedef struct aa_archive_stct aa_archive_t;
typedef struct aa_archive_worker_stct aa_archive_worker_t;

/* A session a worker (recorder or replayer) runs. */
typedef struct aa_archive_work_stct
{
    int (*do_work)(void *session, aa_archive_t *archive);
    void *session;
    volatile int32_t state;          /* ACTIVE, then DONE (release) once the worker let go */
    volatile int32_t stop_requested; /* set by the conductor */
}
aa_archive_work_t;

struct aa_archive_worker_stct
{
    const char *name;
    aa_archive_t *archive;
    pthread_mutex_t lock;
    aa_archive_work_t **pending;
    size_t pending_count;
    size_t pending_capacity;
    volatile int32_t has_pending;
    aa_archive_work_t **active;
    size_t active_count;
    size_t active_capacity;
};

int aa_archive_worker_init(aa_archive_worker_t *worker, const char *name, aa_archive_t *archive);
void aa_archive_worker_close(aa_archive_worker_t *worker);
int aa_archive_worker_add(aa_archive_worker_t *worker, aa_archive_work_t *work);
int aa_archive_worker_do_work(void *state);

typedef struct aa_archive_conductor_stct aa_archive_conductor_t;

struct aa_archive_stct
{
    aa_archive_context_t ctx;
    aa_clock_t clock;
    aa_client_t *client;
    int64_t archive_id;
    int mark_fd;
    aa_mapped_file_t mark;
    aa_distinct_error_log_t error_log;
    int64_t next_activity_ms;
    aa_archive_conductor_t *conductor;
    aa_archive_worker_t recorder;
    aa_archive_worker_t replayer;
    aa_agent_runner_t runners[3];
    int runner_count;
    volatile int32_t is_closed;
};

/* Record an error in the mark file's distinct error log (thread-safe). */
void aa_archive_log_error(aa_archive_t *archive, int32_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void aa_archive_update_activity(aa_archive_t *archive, int64_t now_ms);

/* aa_archive_conductor.c */
int aa_archive_conductor_create(aa_archive_conductor_t **conductor, aa_archive_t *archive);
int aa_archive_conductor_do_work(void *state);
void aa_archive_conductor_close(aa_archive_conductor_t *conductor);

#endif
