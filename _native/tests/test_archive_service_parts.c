/* The archive service's pure parts: options (defaults, environment, names, validation), the
 * stripped channel a recording is identified by, and the workers' session hand-over. */
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "util/aa_error.h"
#include "archive/aa_archive.h"
#include "archive/aa_archive_context.h"

static void test_context_defaults_and_names(void)
{
    unsetenv("AERON_ARCHIVE_SEGMENT_FILE_LENGTH");
    aa_archive_context_t ctx;
    AA_CHECK_EQ(aa_archive_context_init(&ctx), 0);
    AA_CHECK(0 == strcmp(ctx.archive_dir, "aeron-archive"));
    AA_CHECK_EQ(ctx.segment_file_length, 128 * 1024 * 1024);
    AA_CHECK_EQ(ctx.file_io_max_length, 1024 * 1024);
    AA_CHECK_EQ(ctx.control_stream_id, 10);
    AA_CHECK_EQ(ctx.local_control_stream_id, 10);
    AA_CHECK(0 == strcmp(ctx.local_control_channel, "aeron:ipc?term-length=64k"));
    AA_CHECK_EQ(ctx.max_concurrent_recordings, 20);
    AA_CHECK_EQ(ctx.max_concurrent_replays, 20);
    AA_CHECK_EQ(ctx.connect_timeout_ns, 5000000000LL);
    AA_CHECK_EQ(ctx.low_storage_space_threshold, 128 * 1024 * 1024);
    AA_CHECK_EQ(ctx.archive_id, -1);
    AA_CHECK_EQ(ctx.record_checksum, AA_ARCHIVE_CHECKSUM_NONE);
    AA_CHECK_EQ(ctx.threading_mode, AA_ARCHIVE_THREADING_DEDICATED);
    AA_CHECK_EQ(aa_archive_context_validate(&ctx), 0);
    AA_CHECK(!ctx.control_channel_enabled);

    /* both names of an option */
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "aeron.archive.segment.file.length", "1m"), 0);
    AA_CHECK_EQ(ctx.segment_file_length, 1024 * 1024);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_THREADING_MODE", "shared"), 0);
    AA_CHECK_EQ(ctx.threading_mode, AA_ARCHIVE_THREADING_SHARED);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_RECORD_CHECKSUM", "CRC-32C"), 0);
    AA_CHECK_EQ(ctx.record_checksum, AA_ARCHIVE_CHECKSUM_CRC32C);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_CONTROL_CHANNEL", "aeron:udp?endpoint=localhost:8010"), 0);
    AA_CHECK_EQ(aa_archive_context_validate(&ctx), 0);
    AA_CHECK(ctx.control_channel_enabled);

    /* the environment over the defaults */
    setenv("AERON_ARCHIVE_SEGMENT_FILE_LENGTH", "256k", 1);
    AA_CHECK_EQ(aa_archive_context_init(&ctx), 0);
    AA_CHECK_EQ(ctx.segment_file_length, 256 * 1024);
    setenv("AERON_ARCHIVE_SEGMENT_FILE_LENGTH", "lots", 1);
    AA_CHECK_EQ(aa_archive_context_init(&ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_ARCHIVE_SEGMENT_FILE_LENGTH"));
    unsetenv("AERON_ARCHIVE_SEGMENT_FILE_LENGTH");
}

static void test_context_refuses_bad_values(void)
{
    aa_archive_context_t ctx;
    AA_CHECK_EQ(aa_archive_context_init(&ctx), 0);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_NO_SUCH_THING", "1"), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "unknown archive option"));
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_FILE_SYNC_LEVEL", "3"), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "sync level"));
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_THREADING_MODE", "SHARED_NETWORK"), -1);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_RECORD_CHECKSUM", "md5"), -1);

    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_SEGMENT_FILE_LENGTH", "100k"), 0);
    AA_CHECK_EQ(aa_archive_context_validate(&ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "power of 2"));
    AA_CHECK_EQ(aa_archive_context_init(&ctx), 0);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_FILE_SYNC_LEVEL", "2"), 0);
    AA_CHECK_EQ(aa_archive_context_validate(&ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "CATALOG_FILE_SYNC_LEVEL"));
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_CATALOG_FILE_SYNC_LEVEL", "2"), 0);
    AA_CHECK_EQ(aa_archive_context_validate(&ctx), 0);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_FILE_IO_MAX_LENGTH", "4k"), 0);
    AA_CHECK_EQ(aa_archive_context_validate(&ctx), -1);
}

static void check_strip(const char *channel, const char *expected)
{
    char *stripped = aa_archive_strip_channel(channel);
    AA_CHECK(NULL != stripped);
    if (0 != strcmp(stripped, expected))
    {
        fprintf(stderr, "strip(%s) = %s, expected %s\n", channel, stripped, expected);
        AA_CHECK(0);
    }
    free(stripped);
}

static void test_strip_channel(void)
{
    check_strip("aeron:ipc", "aeron:ipc");
    check_strip("aeron:ipc?term-length=64k", "aeron:ipc");
    check_strip("aeron:udp?endpoint=localhost:40123|mtu=8k|term-length=1m", "aeron:udp?endpoint=localhost:40123");
    check_strip("aeron-spy:aeron:udp?term-length=64k|endpoint=h:1|session-id=7|tags=1,2",
        "aeron:udp?endpoint=h:1|session-id=7|tags=1,2");
    check_strip("aeron:udp?control=h:2|control-mode=dynamic|linger=0", "aeron:udp?control=h:2|control-mode=dynamic");
}

typedef struct
{
    int calls;
    int end_after;
}
fake_session_t;

static int fake_do_work(void *session, aa_archive_t *archive)
{
    fake_session_t *s = session;
    (void)archive;
    s->calls++;
    return s->calls >= s->end_after ? -1 : 1;
}

static void test_worker_hand_over(void)
{
    aa_archive_worker_t worker;
    AA_CHECK_EQ(aa_archive_worker_init(&worker, "recorder", NULL), 0);
    AA_CHECK_EQ(aa_archive_worker_do_work(&worker), 0);
    fake_session_t a = { 0, 3 }, b = { 0, 1 };
    aa_archive_work_t wa = { fake_do_work, &a, AA_ARCHIVE_SESSION_ACTIVE, 0 };
    aa_archive_work_t wb = { fake_do_work, &b, AA_ARCHIVE_SESSION_ACTIVE, 0 };
    AA_CHECK_EQ(aa_archive_worker_add(&worker, &wa), 0);
    AA_CHECK_EQ(aa_archive_worker_add(&worker, &wb), 0);
    AA_CHECK(aa_archive_worker_do_work(&worker) > 0);
    AA_CHECK_EQ(a.calls, 1);
    AA_CHECK_EQ(b.calls, 1);
    AA_CHECK_EQ(wb.state, AA_ARCHIVE_SESSION_DONE); /* ended on its first cycle: let go */
    AA_CHECK_EQ(wa.state, AA_ARCHIVE_SESSION_ACTIVE);
    aa_archive_worker_do_work(&worker);
    aa_archive_worker_do_work(&worker);
    AA_CHECK_EQ(a.calls, 3);
    AA_CHECK_EQ(b.calls, 1); /* not run again once it ended */
    AA_CHECK_EQ(wa.state, AA_ARCHIVE_SESSION_DONE);
    AA_CHECK_EQ(worker.active_count, 0u);
    AA_CHECK_EQ(aa_archive_worker_do_work(&worker), 0);
    aa_archive_worker_close(&worker);
}

int main(void)
{
    AA_RUN(test_context_defaults_and_names);
    AA_RUN(test_context_refuses_bad_values);
    AA_RUN(test_strip_channel);
    AA_RUN(test_worker_hand_over);
    return 0;
}
