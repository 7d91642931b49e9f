/* The archive's lifecycle: the mark file (and the refusal of a second archive on a directory),
 * the client of the media driver, the agents in their threading mode, and the workers' session
 * hand-over. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/aa_archive.h"
#include "aeron_async.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_array.h"
#include "util/aa_error.h"
#include "util/aa_fs.h"
#include "util/aa_process.h"
#include "util/aa_bytes.h"

/* ---- the mark file ---- */

/* Another archive is active on the directory: it holds the mark file's lock, or (an archive that
 * does not lock, or one of another machine on a shared directory) its activity timestamp is under
 * 10 s old and its process may still run. */
static int aa_archive_mark_file_check(aa_archive_t *archive, const char *path, int fd)
{
    if (flock(fd, LOCK_EX | LOCK_NB) < 0)
    {
        if (EWOULDBLOCK == errno)
        {
            int64_t pid = -1;
            struct stat st;
            if (0 == fstat(fd, &st) && st.st_size >= AA_ARCHIVE_MARK_FILE_HEADER_LENGTH)
            {
                uint8_t header[64];
                if (pread(fd, header, sizeof(header), 0) == (ssize_t)sizeof(header))
                {
                    pid = aa_get_i64(header + AA_ARCHIVE_MARK_FILE_PID_OFFSET);
                }
            }
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                "an archive is already running on %s (pid %" PRId64 " holds %s); close it, or give this archive "
                "another AERON_ARCHIVE_DIR", archive->ctx.archive_dir, pid, path);
            return -1;
        }
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "could not lock %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (0 == fstat(fd, &st) && st.st_size >= AA_ARCHIVE_MARK_FILE_HEADER_LENGTH)
    {
        uint8_t header[128];
        if (pread(fd, header, sizeof(header), 0) == (ssize_t)sizeof(header) &&
            0 != aa_get_i32(header + AA_ARCHIVE_MARK_FILE_VERSION_OFFSET))
        {
            int64_t activity = aa_get_i64(header + AA_ARCHIVE_MARK_FILE_ACTIVITY_TIMESTAMP_OFFSET);
            int64_t pid = aa_get_i64(header + AA_ARCHIVE_MARK_FILE_PID_OFFSET);
            int64_t now = aa_clock_epoch_time(&archive->clock);
            bool recent = activity > 0 && now - activity < AA_ARCHIVE_MARK_FILE_LIVENESS_TIMEOUT_MS;
            bool ours = pid == (int64_t)getpid();
            if (recent && !ours && AA_PROCESS_DEAD != aa_process_liveness(pid, aa_process_pid_namespace()))
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                    "an archive was active on %s %" PRId64 " ms ago (pid %" PRId64 ", mark file %s); close it, wait "
                    "%d s after it stopped, or give this archive another AERON_ARCHIVE_DIR",
                    archive->ctx.archive_dir, now - activity, pid, path, AA_ARCHIVE_MARK_FILE_LIVENESS_TIMEOUT_MS / 1000);
                return -1;
            }
        }
    }
    return 0;
}

static int aa_archive_mark_file_open(aa_archive_t *archive)
{
    char path[AA_ARCHIVE_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", archive->ctx.archive_dir, AA_ARCHIVE_MARK_FILE_NAME);
    int fd = aa_fs_open_file(path, O_RDWR | O_CREAT, &archive->ctx.dir_access);
    if (fd < 0)
    {
        AA_APPEND_ERR("opening the archive's mark file %s", path);
        return -1;
    }
    if (aa_archive_mark_file_check(archive, path, fd) < 0)
    {
        close(fd);
        return -1;
    }
    size_t length = AA_ARCHIVE_MARK_FILE_HEADER_LENGTH + (size_t)archive->ctx.error_buffer_length;
    /* every page allocated now: the error log is written through the mapping, and a page the
     * file system cannot back when the disk is full would be a SIGBUS instead of a logged error */
    if (ftruncate(fd, 0) < 0)
    {
        AA_SET_ERR(errno, "could not truncate the archive's mark file %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (aa_fs_allocate_range(fd, path, 0, length, "archive mark file", "lower AERON_ARCHIVE_ERROR_BUFFER_LENGTH") < 0)
    {
        close(fd);
        return -1;
    }
    void *addr = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == addr)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "could not map %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    archive->mark_fd = fd;
    archive->mark.addr = addr;
    archive->mark.length = length;
    return 0;
}

/* Fill the header with the codecs' MarkFileHeader, its version 0 until the rest is there, then
 * the version (release), so a reader sees a whole one. */
static void aa_archive_mark_file_fill(aa_archive_t *archive)
{
    uint8_t *m = archive->mark.addr;
    int64_t now = aa_clock_epoch_time(&archive->clock);
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_MARK_FILE_HEADER;
    aa_archive_mark_file_header_t *h = &msg.mark_file_header;
    h->version = 0;
    h->activity_timestamp = now;
    h->start_timestamp = now;
    h->pid = (int64_t)getpid();
    h->control_stream_id = archive->ctx.control_stream_id;
    h->local_control_stream_id = archive->ctx.local_control_stream_id;
    h->events_stream_id = 30;
    h->header_length = AA_ARCHIVE_MARK_FILE_HEADER_LENGTH;
    h->error_buffer_length = (int32_t)archive->ctx.error_buffer_length;
    h->archive_id = archive->archive_id;
    const char *strings[4] = { archive->ctx.control_channel, archive->ctx.local_control_channel, "",
        archive->ctx.aeron_dir };
    aa_archive_var_t *vars[4] = { &h->control_channel, &h->local_control_channel, &h->events_channel,
        &h->aeron_directory };
    for (int i = 0; i < 4; i++)
    {
        vars[i]->data = (const uint8_t *)strings[i];
        vars[i]->length = (uint32_t)strlen(strings[i]);
    }
    if (aa_archive_encode(m, AA_ARCHIVE_MARK_FILE_HEADER_LENGTH, &msg) < 0)
    {
        /* channels too long for the header area: the header without them */
        for (int i = 0; i < 4; i++)
        {
            vars[i]->length = 0;
        }
        aa_archive_encode(m, AA_ARCHIVE_MARK_FILE_HEADER_LENGTH, &msg);
    }
    aa_put_int32_release((volatile int32_t *)(m + AA_ARCHIVE_MARK_FILE_VERSION_OFFSET), AA_ARCHIVE_MARK_FILE_VERSION);
    archive->next_activity_ms = now + AA_ARCHIVE_MARK_FILE_ACTIVITY_INTERVAL_MS;
}

void aa_archive_update_activity(aa_archive_t *archive, int64_t now_ms)
{
    if (now_ms >= archive->next_activity_ms)
    {
        aa_put_int64_release((volatile int64_t *)(archive->mark.addr + AA_ARCHIVE_MARK_FILE_ACTIVITY_TIMESTAMP_OFFSET), now_ms);
        archive->next_activity_ms = now_ms + AA_ARCHIVE_MARK_FILE_ACTIVITY_INTERVAL_MS;
    }
}

void aa_archive_log_error(aa_archive_t *archive, int32_t code, const char *fmt, ...)
{
    char text[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    aa_distinct_error_log_record(&archive->error_log, aa_clock_epoch_time(&archive->clock), code, text);
}

/* ---- launch and close ---- */

static int aa_archive_shared_do_work(void *state)
{
    aa_archive_t *archive = state;
    int work = aa_archive_conductor_do_work(archive->conductor);
    work += aa_archive_worker_do_work(&archive->recorder);
    work += aa_archive_worker_do_work(&archive->replayer);
    return work;
}

static void aa_archive_free(aa_archive_t *archive)
{
    if (NULL != archive->conductor)
    {
        aa_archive_conductor_close(archive->conductor);
        archive->conductor = NULL;
    }
    if (NULL != archive->client)
    {
        aa_client_close(archive->client);
        archive->client = NULL;
    }
    aa_archive_worker_close(&archive->recorder);
    aa_archive_worker_close(&archive->replayer);
    if (NULL != archive->mark.addr)
    {
        aa_put_int64_release((volatile int64_t *)(archive->mark.addr + AA_ARCHIVE_MARK_FILE_ACTIVITY_TIMESTAMP_OFFSET), 0);
        aa_distinct_error_log_close(&archive->error_log);
        msync(archive->mark.addr, archive->mark.length, MS_SYNC);
        munmap(archive->mark.addr, archive->mark.length);
        archive->mark.addr = NULL;
    }
    if (archive->mark_fd >= 0)
    {
        close(archive->mark_fd); /* releases the lock */
    }
    free(archive);
}

static int aa_archive_start_runners(aa_archive_t *archive)
{
    struct
    {
        const char *name;
        aa_agent_do_work_func_t do_work;
        void *state;
    }
    agents[3] =
    {
        { "archive-conductor", aa_archive_conductor_do_work, archive->conductor },
        { "archive-recorder", aa_archive_worker_do_work, &archive->recorder },
        { "archive-replayer", aa_archive_worker_do_work, &archive->replayer },
    };
    int count = 3;
    if (AA_ARCHIVE_THREADING_SHARED == archive->ctx.threading_mode)
    {
        agents[0].name = "archive";
        agents[0].do_work = aa_archive_shared_do_work;
        agents[0].state = archive;
        count = 1;
    }
    for (int i = 0; i < count; i++)
    {
        aa_idle_strategy_t idle;
        if (aa_idle_strategy_load(&idle, archive->ctx.idle_strategy) < 0 ||
            aa_agent_runner_init(&archive->runners[i], agents[i].name, agents[i].state, agents[i].do_work, NULL, &idle) < 0)
        {
            return -1;
        }
        archive->runner_count = i + 1;
        if (aa_agent_runner_start(&archive->runners[i]) < 0)
        {
            return -1;
        }
    }
    return 0;
}

static void aa_archive_stop_runners(aa_archive_t *archive)
{
    /* the workers first: the conductor then finishes their sessions as it closes */
    for (int i = archive->runner_count - 1; i >= 0; i--)
    {
        aa_agent_runner_close(&archive->runners[i]);
    }
    archive->runner_count = 0;
}

int aa_archive_launch(aa_archive_t **out, aa_archive_context_t *ctx)
{
    *out = NULL;
    aa_archive_t *archive = calloc(1, sizeof(*archive));
    if (NULL == archive)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory");
        return -1;
    }
    archive->ctx = *ctx;
    archive->clock = aa_clock_system();
    archive->mark_fd = -1;
    aa_archive_worker_init(&archive->recorder, "recorder", archive);
    aa_archive_worker_init(&archive->replayer, "replayer", archive);
    if (aa_archive_context_validate(&archive->ctx) < 0)
    {
        aa_archive_free(archive);
        return -1;
    }
    if (aa_fs_prepare_dir(archive->ctx.archive_dir, &archive->ctx.dir_access, "aeron.archive.dir (AERON_ARCHIVE_DIR)") < 0)
    {
        AA_APPEND_ERR("preparing the archive directory %s", archive->ctx.archive_dir);
        aa_archive_free(archive);
        return -1;
    }
    if (aa_archive_mark_file_open(archive) < 0)
    {
        aa_archive_free(archive);
        return -1;
    }
    if (archive->ctx.delete_archive_on_start &&
        aa_delete_dir_contents(archive->ctx.archive_dir, AA_ARCHIVE_MARK_FILE_NAME) < 0)
    {
        AA_APPEND_ERR("could not empty the archive directory %s (AERON_ARCHIVE_DIR_DELETE_ON_START)",
            archive->ctx.archive_dir);
        aa_archive_free(archive);
        return -1;
    }
    aa_distinct_error_log_init(&archive->error_log, archive->mark.addr + AA_ARCHIVE_MARK_FILE_HEADER_LENGTH,
        (size_t)archive->ctx.error_buffer_length);
    if (aa_client_connect(&archive->client, archive->ctx.aeron_dir, archive->ctx.driver_timeout_ms, true, NULL) < 0)
    {
        AA_APPEND_ERR("the archive could not connect to the media driver in %s; start one there (or launch the archive "
            "with an embedded driver)", archive->ctx.aeron_dir);
        aa_archive_free(archive);
        return -1;
    }
    archive->archive_id = archive->ctx.archive_id != -1 ? archive->ctx.archive_id : aa_client_id(archive->client);
    aa_archive_mark_file_fill(archive);
    if (aa_archive_conductor_create(&archive->conductor, archive) < 0)
    {
        aa_archive_free(archive);
        return -1;
    }
    if (AA_ARCHIVE_THREADING_INVOKER != archive->ctx.threading_mode && aa_archive_start_runners(archive) < 0)
    {
        aa_archive_stop_runners(archive);
        aa_archive_free(archive);
        return -1;
    }
    *out = archive;
    return 0;
}

int aa_archive_do_work(aa_archive_t *archive)
{
    if (AA_ARCHIVE_THREADING_INVOKER != archive->ctx.threading_mode)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s",
            "aa_archive_do_work is for the INVOKER threading mode; this archive runs its own threads");
        return -1;
    }
    return aa_archive_shared_do_work(archive);
}

int aa_archive_close(aa_archive_t *archive)
{
    if (NULL == archive)
    {
        return 0;
    }
    aa_put_int32_release(&archive->is_closed, 1);
    aa_archive_stop_runners(archive);
    aa_archive_free(archive);
    return 0;
}

int64_t aa_archive_id(aa_archive_t *archive)
{
    return archive->archive_id;
}

const char *aa_archive_dir(aa_archive_t *archive)
{
    return archive->ctx.archive_dir;
}

/* ---- reading a mark file from any process ---- */

struct aa_archive_mark_reader_stct
{
    uint8_t *addr;
    size_t length;
    size_t error_buffer_length;
};

int aa_archive_mark_reader_open(aa_archive_mark_reader_t **out, const char *archive_dir, aa_archive_mark_info_t *info)
{
    *out = NULL;
    char path[AA_ARCHIVE_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", archive_dir, AA_ARCHIVE_MARK_FILE_NAME);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "no archive mark file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < AA_ARCHIVE_MARK_FILE_HEADER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s is not an archive mark file (too short)", path);
        close(fd);
        return -1;
    }
    void *addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    aa_archive_mark_reader_t *reader = calloc(1, sizeof(*reader));
    if (MAP_FAILED == addr || NULL == reader)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "could not map %s: %s", path, strerror(errno));
        if (MAP_FAILED != addr)
        {
            munmap(addr, (size_t)st.st_size);
        }
        free(reader);
        return -1;
    }
    const uint8_t *m = addr;
    memset(info, 0, sizeof(*info));
    info->version = aa_get_i32(m + AA_ARCHIVE_MARK_FILE_VERSION_OFFSET);
    info->activity_timestamp_ms = aa_get_i64(m + AA_ARCHIVE_MARK_FILE_ACTIVITY_TIMESTAMP_OFFSET);
    info->start_timestamp_ms = aa_get_i64(m + AA_ARCHIVE_MARK_FILE_START_TIMESTAMP_OFFSET);
    info->pid = aa_get_i64(m + AA_ARCHIVE_MARK_FILE_PID_OFFSET);
    info->archive_id = aa_get_i64(m + AA_ARCHIVE_MARK_FILE_ARCHIVE_ID_OFFSET);
    info->control_stream_id = aa_get_i32(m + AA_ARCHIVE_MARK_CONTROL_STREAM_OFFSET);
    info->local_control_stream_id = aa_get_i32(m + AA_ARCHIVE_MARK_LOCAL_CONTROL_STREAM_OFFSET);
    int32_t error_length = aa_get_i32(m + AA_ARCHIVE_MARK_ERROR_BUFFER_LENGTH_OFFSET);
    reader->addr = addr;
    reader->length = (size_t)st.st_size;
    reader->error_buffer_length = error_length > 0 &&
        (int64_t)AA_ARCHIVE_MARK_FILE_HEADER_LENGTH + error_length <= st.st_size ? (size_t)error_length : 0;
    *out = reader;
    return 0;
}

int aa_archive_mark_reader_next_error(aa_archive_mark_reader_t *reader, size_t *offset, aa_error_record_t *record)
{
    return aa_error_log_next_record(
        reader->addr + AA_ARCHIVE_MARK_FILE_HEADER_LENGTH, reader->error_buffer_length, offset, record);
}

void aa_archive_mark_reader_close(aa_archive_mark_reader_t *reader)
{
    if (NULL != reader)
    {
        munmap(reader->addr, reader->length);
        free(reader);
    }
}
