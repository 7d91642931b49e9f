/* A recording's syncer: syncs on a thread of their own, one sync for all the writes made while the
 * last one ran (group commit), the durable position published only after its sync, and a failed
 * sync reported to the recorder (a disk error, a full disk). The disk is the linker-wrapped
 * fdatasync/fsync of aa_archive_test_util.h, held or failed through g_fdatasync_hook. */
#include <fcntl.h>
#include <pthread.h>
#include <time.h>

#include "aa_test.h"
#include "aa_archive_test_util.h"
#include "archive/aa_archive_syncer.h"
#include "util/aa_error.h"

/* what the syncer published, in order (written on its thread, read after a drain or a stop) */
static int64_t g_published[16];
static int g_published_count;

static void on_synced(void *clientd, int64_t position)
{
    (void)clientd;
    if (g_published_count < (int)(sizeof(g_published) / sizeof(g_published[0])))
    {
        g_published[g_published_count] = position;
    }
    g_published_count++;
}

/* a disk whose sync is held until the test lets it go */
static pthread_mutex_t g_gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_gate_cond = PTHREAD_COND_INITIALIZER;
static int g_gate_entered;
static int g_gate_open;

static int held_fdatasync(int fd)
{
    (void)fd;
    pthread_mutex_lock(&g_gate_lock);
    g_gate_entered++;
    pthread_cond_broadcast(&g_gate_cond);
    while (!g_gate_open)
    {
        pthread_cond_wait(&g_gate_cond, &g_gate_lock);
    }
    pthread_mutex_unlock(&g_gate_lock);
    return 0;
}

/* waits (5 s at most) until the syncer is inside its first sync */
static int wait_for_sync_to_start(void)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    pthread_mutex_lock(&g_gate_lock);
    int rc = 0;
    while (0 == g_gate_entered && 0 == rc)
    {
        rc = pthread_cond_timedwait(&g_gate_cond, &g_gate_lock, &deadline);
    }
    int entered = g_gate_entered;
    pthread_mutex_unlock(&g_gate_lock);
    return entered;
}

static int g_fail_errno;

static int failing_fdatasync(int fd)
{
    (void)fd;
    errno = g_fail_errno;
    return -1;
}

/* A segment file holding 6 bytes in a new temporary directory, before anything was published. */
static int open_segment(void)
{
    const char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof(path), "%s/segment", dir);
    int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    AA_CHECK(fd >= 0);
    AA_CHECK_EQ(pwrite(fd, "frames", 6, 0), 6);
    g_published_count = 0;
    return fd;
}

static void close_segment(int fd)
{
    close(fd);
    remove_temp_dir();
}

static void should_sync_on_its_thread_and_publish_only_what_is_durable(void)
{
    int fd = open_segment();
    aa_archive_syncer_t syncer;
    reset_sync_counts();
    g_fdatasync_hook = NULL;
    AA_CHECK_EQ(aa_archive_syncer_start(&syncer, 1, 4096, on_synced, NULL), 0);
    AA_CHECK_EQ(aa_archive_syncer_drain(&syncer), 0); /* nothing written yet: nothing to wait for */
    AA_CHECK_EQ(g_published_count, 0);
    AA_CHECK_EQ(aa_archive_syncer_request(&syncer, fd, 8192), 0);
    AA_CHECK_EQ(aa_archive_syncer_drain(&syncer), 0);
    AA_CHECK_EQ(g_published_count, 1);
    AA_CHECK_EQ(g_published[0], 8192);
    AA_CHECK_EQ(g_fdatasync_calls, 1);
    AA_CHECK_EQ(g_fsync_calls, 0);
    AA_CHECK_EQ(aa_archive_syncer_check(&syncer), 0);
    AA_CHECK_EQ(aa_archive_syncer_stop(&syncer), 0);
    AA_CHECK_EQ(aa_archive_syncer_stop(&syncer), 0); /* once stopped, a no-op */

    /* level 2 forces the metadata too */
    reset_sync_counts();
    g_published_count = 0;
    AA_CHECK_EQ(aa_archive_syncer_start(&syncer, 2, 0, on_synced, NULL), 0);
    AA_CHECK_EQ(aa_archive_syncer_request(&syncer, fd, 1024), 0);
    AA_CHECK_EQ(aa_archive_syncer_stop(&syncer), 0); /* stop drains first */
    AA_CHECK_EQ(g_fsync_calls, 1);
    AA_CHECK_EQ(g_fdatasync_calls, 0);
    AA_CHECK_EQ(g_published_count, 1);
    AA_CHECK_EQ(g_published[0], 1024);

    /* a syncer never started stops as a no-op */
    aa_archive_syncer_t never;
    memset(&never, 0, sizeof(never));
    AA_CHECK_EQ(aa_archive_syncer_drain(&never), 0);
    AA_CHECK_EQ(aa_archive_syncer_stop(&never), 0);
    close_segment(fd);
}

static void should_cover_the_writes_made_during_a_sync_with_one_more_sync(void)
{
    int fd = open_segment();
    aa_archive_syncer_t syncer;
    reset_sync_counts();
    g_gate_entered = 0;
    g_gate_open = 0;
    g_fdatasync_hook = held_fdatasync;
    AA_CHECK_EQ(aa_archive_syncer_start(&syncer, 1, 0, on_synced, NULL), 0);
    AA_CHECK_EQ(aa_archive_syncer_request(&syncer, fd, 1000), 0);
    AA_CHECK_EQ(wait_for_sync_to_start(), 1);
    /* the recorder goes on writing while the disk is busy, without waiting */
    AA_CHECK_EQ(aa_archive_syncer_request(&syncer, fd, 2000), 0);
    AA_CHECK_EQ(aa_archive_syncer_request(&syncer, fd, 3000), 0);
    AA_CHECK_EQ(aa_archive_syncer_request(&syncer, fd, 4000), 0);
    AA_CHECK_EQ(g_published_count, 0); /* nothing is durable before its sync returns */
    pthread_mutex_lock(&g_gate_lock);
    g_gate_open = 1;
    pthread_cond_broadcast(&g_gate_cond);
    pthread_mutex_unlock(&g_gate_lock);
    AA_CHECK_EQ(aa_archive_syncer_drain(&syncer), 0);
    AA_CHECK_EQ(g_fdatasync_calls, 2);
    AA_CHECK_EQ(g_published_count, 2);
    AA_CHECK_EQ(g_published[0], 1000);
    AA_CHECK_EQ(g_published[1], 4000);
    AA_CHECK_EQ(aa_archive_syncer_stop(&syncer), 0);
    g_fdatasync_hook = NULL;
    close_segment(fd);
}

static void should_report_a_failed_sync_to_the_recorder(void)
{
    int fd = open_segment();
    aa_archive_syncer_t syncer;
    g_fdatasync_hook = failing_fdatasync;

    g_fail_errno = EIO;
    AA_CHECK_EQ(aa_archive_syncer_start(&syncer, 1, 0, on_synced, NULL), 0);
    AA_CHECK_EQ(aa_archive_syncer_request(&syncer, fd, 512), 0);
    AA_CHECK_EQ(aa_archive_syncer_drain(&syncer), -1);
    AA_CHECK_EQ(aa_errcode(), EIO);
    AA_CHECK(NULL != strstr(aa_errmsg(), "fdatasync failed"));
    AA_CHECK_EQ(aa_archive_syncer_check(&syncer), -1);
    AA_CHECK_EQ(aa_archive_syncer_request(&syncer, fd, 1024), -1); /* no more syncs after a failure */
    AA_CHECK_EQ(aa_archive_syncer_stop(&syncer), -1);
    AA_CHECK_EQ(g_published_count, 0); /* the recorded position stays at the last durable one */

    /* a full disk is a storage space error, which stops the recording with its message */
    g_fail_errno = ENOSPC;
    AA_CHECK_EQ(aa_archive_syncer_start(&syncer, 1, 0, on_synced, NULL), 0);
    AA_CHECK_EQ(aa_archive_syncer_request(&syncer, fd, 512), 0);
    AA_CHECK_EQ(aa_archive_syncer_stop(&syncer), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_STORAGE_SPACE);
    AA_CHECK_EQ(g_published_count, 0);
    g_fdatasync_hook = NULL;
    close_segment(fd);
}

int main(void)
{
    AA_RUN(should_sync_on_its_thread_and_publish_only_what_is_durable);
    AA_RUN(should_cover_the_writes_made_during_a_sync_with_one_more_sync);
    AA_RUN(should_report_a_failed_sync_to_the_recorder);
    return 0;
}
