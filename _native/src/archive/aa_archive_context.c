/* The archive's option table (util/aa_options.h, docs/configuration.md): the engine parses, sets,
 * formats and lists the options; this file adds the checks between fields
 * (aa_archive_context_validate) and the stripped channel a recording is identified by. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/aa_archive_context.h"
#include "aeron_async.h"
#include "agent/aa_agent.h"
#include "util/aa_error.h"
#include "util/aa_fs.h"
#include "util/aa_options.h"

/* AERON_ARCHIVE_*_CHECKSUM: CRC-32C or CRC-32 (archive/aa_archive_checksum.h), empty for none. */
static int aa_checksum_option_parse(void *ctx, const aa_option_t *opt, const char *value)
{
    int32_t type = '\0' == value[0] ? AA_ARCHIVE_CHECKSUM_NONE : aa_archive_checksum_parse(value);
    if (type < 0)
    {
        AA_APPEND_ERR("invalid %s", opt->env_name);
        return -1;
    }
    *(int32_t *)((uint8_t *)ctx + opt->offset) = type;
    return 0;
}

static int aa_checksum_option_format(const void *ctx, const aa_option_t *opt, char *out, size_t length)
{
    int32_t type = *(const int32_t *)((const uint8_t *)ctx + opt->offset);
    const char *name = AA_ARCHIVE_CHECKSUM_NONE == type ? "" : aa_archive_checksum_name(type);
    return snprintf(out, length, "%s", NULL == name ? "?" : name);
}

/* AERON_ARCHIVE_DIR_GROUP: "" (owner only), a group name or a gid (docs/security.md, "Files"). */
static int aa_archive_dir_group_parse(void *ctx, const aa_option_t *opt, const char *value)
{
    return aa_fs_access_parse(&((aa_archive_context_t *)ctx)->dir_access, value, false, opt->env_name);
}

static int aa_archive_dir_group_format(const void *ctx, const aa_option_t *opt, char *out, size_t length)
{
    (void)opt;
    return aa_fs_access_format(&((const aa_archive_context_t *)ctx)->dir_access, out, length);
}

/* in the order of AA_ARCHIVE_THREADING_* */
static const char *const aa_archive_threading_mode_names[] = { "DEDICATED", "SHARED", "INVOKER" };
static const aa_option_enum_t aa_archive_threading_modes =
{
    aa_archive_threading_mode_names, 3, "is not an archive threading mode; use DEDICATED, SHARED or INVOKER"
};

static const char *const aa_archive_sync_level_names[] = { "0", "1", "2" };
static const aa_option_enum_t aa_archive_sync_levels =
{
    aa_archive_sync_level_names, 3,
    "is not a sync level; use 0 (page cache), 1 (force data) or 2 (force data and metadata)"
};

/* AERON_ARCHIVE_AUTHENTICATOR: a built-in name or python:<module:Class> (archive/aa_archive_auth.h). */
static int aa_authenticator_option_check(const aa_option_t *opt, const char *value)
{
    if (0 == strcmp(value, "allow-all") || 0 == strcmp(value, "credentials") ||
        (0 == strncmp(value, "python:", 7) && NULL != strchr(value + 7, ':')))
    {
        return 0;
    }
    AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
        "%s=%s is not an authenticator; use allow-all, credentials or python:module:Class", opt->env_name, value);
    return -1;
}

#define AA_ARCHIVE_FIELD(f) AA_OPTION_FIELD(aa_archive_context_t, f)

static const aa_option_t aa_archive_options[] =
{
    { "archive_dir", "AERON_ARCHIVE_DIR", "aeron.archive.dir",
        AA_OPTION_STRING, AA_ARCHIVE_FIELD(archive_dir), "aeron-archive",
        "directory of the catalog, the segment files and the mark file" },
    { "aeron_dir", "AERON_DIR", "aeron.dir",
        AA_OPTION_STRING, AA_ARCHIVE_FIELD(aeron_dir), "",
        "the media driver's directory the archive connects to (default /dev/shm/aeron-<user>)",
        .fill_empty = aa_default_aeron_dir },
    { "dir_delete_on_start", "AERON_ARCHIVE_DIR_DELETE_ON_START", "aeron.archive.dir.delete.on.start",
        AA_OPTION_BOOL, AA_ARCHIVE_FIELD(delete_archive_on_start), "false",
        "delete the archive directory's contents on start" },
    { "dir_group", "AERON_ARCHIVE_DIR_GROUP", "aeron.archive.dir.group",
        AA_OPTION_CUSTOM, AA_ARCHIVE_FIELD(dir_access), "",
        "a group (name or gid) whose members may read the archive directory (tools: list, verify): it 2750, its "
        "files 0640 with that group (docs/security.md, Files); empty, the default: the archive's user only (0700 and 0600)",
        .parse = aa_archive_dir_group_parse, .format = aa_archive_dir_group_format },
    { "archive_id", "AERON_ARCHIVE_ID", "aeron.archive.id",
        AA_OPTION_INT64, AA_ARCHIVE_FIELD(archive_id), "-1",
        "the archive's id; -1: the id of its client of the media driver (not stable across restarts)" },
    { "control_channel", "AERON_ARCHIVE_CONTROL_CHANNEL", "aeron.archive.control.channel",
        AA_OPTION_STRING, AA_ARCHIVE_FIELD(control_channel), "",
        "UDP channel of control requests (none by default: local control only), e.g. aeron:udp?endpoint=localhost:8010" },
    { "control_stream_id", "AERON_ARCHIVE_CONTROL_STREAM_ID", "aeron.archive.control.stream.id",
        AA_OPTION_INT32, AA_ARCHIVE_FIELD(control_stream_id), "10",
        "stream id of the control channel" },
    { "replication_channel", "AERON_ARCHIVE_REPLICATION_CHANNEL", "aeron.archive.replication.channel",
        AA_OPTION_STRING, AA_ARCHIVE_FIELD(replication_channel), "",
        "UDP channel this archive receives replications on when a replicate request names none (Aeron's "
        "Archive.Context.replicationChannel), e.g. aeron:udp?endpoint=<this host>:0" },
    { "local_control_channel", "AERON_ARCHIVE_LOCAL_CONTROL_CHANNEL", "aeron.archive.local.control.channel",
        AA_OPTION_STRING, AA_ARCHIVE_FIELD(local_control_channel), "aeron:ipc?term-length=64k",
        "IPC channel of control requests from local clients" },
    { "local_control_stream_id", "AERON_ARCHIVE_LOCAL_CONTROL_STREAM_ID", "aeron.archive.local.control.stream.id",
        AA_OPTION_INT32, AA_ARCHIVE_FIELD(local_control_stream_id), "10",
        "stream id of the local control channel" },
    { "control_term_buffer_length", "AERON_ARCHIVE_CONTROL_TERM_BUFFER_LENGTH",
        "aeron.archive.control.term.buffer.length",
        AA_OPTION_SIZE, AA_ARCHIVE_FIELD(control_term_buffer_length), "64k",
        "term length of the control response publications" },
    { "control_term_buffer_sparse", "AERON_ARCHIVE_CONTROL_TERM_BUFFER_SPARSE",
        "aeron.archive.control.term.buffer.sparse",
        AA_OPTION_BOOL, AA_ARCHIVE_FIELD(control_term_buffer_sparse), "true",
        "sparse= of the control response channels (Aeron's); the driver allocates every log whole all the same" },
    { "threading_mode", "AERON_ARCHIVE_THREADING_MODE", "aeron.archive.threading.mode",
        AA_OPTION_ENUM, AA_ARCHIVE_FIELD(threading_mode), "DEDICATED",
        "DEDICATED (conductor, recorder and replayer threads), SHARED (one thread) or INVOKER (the caller's do_work)",
        .choices = &aa_archive_threading_modes },
    { "idle_strategy", "AERON_ARCHIVE_IDLE_STRATEGY", "aeron.archive.idle.strategy",
        AA_OPTION_STRING, AA_ARCHIVE_FIELD(idle_strategy), "backoff",
        "idle strategy of the archive's threads",
        .check = aa_idle_strategy_option_check },
    { "segment_file_length", "AERON_ARCHIVE_SEGMENT_FILE_LENGTH", "aeron.archive.segment.file.length",
        AA_OPTION_SIZE, AA_ARCHIVE_FIELD(segment_file_length), "128m",
        "segment file length: a power of 2 from 64k to 1g; a recording uses max(this, its term length)" },
    { "file_io_max_length", "AERON_ARCHIVE_FILE_IO_MAX_LENGTH", "aeron.archive.file.io.max.length",
        AA_OPTION_SIZE, AA_ARCHIVE_FIELD(file_io_max_length), "1m",
        "the most one write or read moves: a power of 2, at least 64k" },
    { "file_sync_level", "AERON_ARCHIVE_FILE_SYNC_LEVEL", "aeron.archive.file.sync.level",
        AA_OPTION_ENUM, AA_ARCHIVE_FIELD(file_sync_level), "0",
        "segment files: 0 page cache only, 1 force the data written (a recorded position is a forced one), 2 also metadata",
        .choices = &aa_archive_sync_levels },
    { "catalog_file_sync_level", "AERON_ARCHIVE_CATALOG_FILE_SYNC_LEVEL", "aeron.archive.catalog.file.sync.level",
        AA_OPTION_ENUM, AA_ARCHIVE_FIELD(catalog_file_sync_level), "0",
        "the catalog: 0, 1 or 2 as file.sync.level, and at least it",
        .choices = &aa_archive_sync_levels },
    { "record_checksum", "AERON_ARCHIVE_RECORD_CHECKSUM", "aeron.archive.record.checksum",
        AA_OPTION_CUSTOM, AA_ARCHIVE_FIELD(record_checksum), "",
        "CRC-32C or CRC-32: store each DATA frame's payload checksum in its session id field on disk (empty: none)",
        .parse = aa_checksum_option_parse, .format = aa_checksum_option_format },
    { "replay_checksum", "AERON_ARCHIVE_REPLAY_CHECKSUM", "aeron.archive.replay.checksum",
        AA_OPTION_CUSTOM, AA_ARCHIVE_FIELD(replay_checksum), "",
        "CRC-32C or CRC-32: verify each DATA frame's checksum on replay (the recording's), failing the replay on a mismatch",
        .parse = aa_checksum_option_parse, .format = aa_checksum_option_format },
    { "max_concurrent_recordings", "AERON_ARCHIVE_MAX_CONCURRENT_RECORDINGS",
        "aeron.archive.max.concurrent.recordings",
        AA_OPTION_INT32, AA_ARCHIVE_FIELD(max_concurrent_recordings), "20",
        "recordings at once; more are refused (MAX_RECORDINGS)" },
    { "max_concurrent_replays", "AERON_ARCHIVE_MAX_CONCURRENT_REPLAYS", "aeron.archive.max.concurrent.replays",
        AA_OPTION_INT32, AA_ARCHIVE_FIELD(max_concurrent_replays), "20",
        "replays at once; more are refused (MAX_REPLAYS)" },
    { "catalog_capacity", "AERON_ARCHIVE_CATALOG_CAPACITY", "aeron.archive.catalog.capacity",
        AA_OPTION_SIZE, AA_ARCHIVE_FIELD(catalog_capacity), "1m",
        "initial catalog file length (it grows x1.5 when full)" },
    { "connect_timeout", "AERON_ARCHIVE_CONNECT_TIMEOUT", "aeron.archive.connect.timeout",
        AA_OPTION_DURATION, AA_ARCHIVE_FIELD(connect_timeout_ns), "5s",
        "each phase of a control session (connecting its responses, authenticating) and an unsent response time out after this",
        .unit_ns = 1 },
    { "session_liveness_check_interval", "AERON_ARCHIVE_SESSION_LIVENESS_CHECK_INTERVAL",
        "aeron.archive.session.liveness.check.interval",
        AA_OPTION_DURATION, AA_ARCHIVE_FIELD(session_liveness_check_interval_ns), "1s",
        "the archive pings every control session this often",
        .unit_ns = 1 },
    { "replay_linger_timeout", "AERON_ARCHIVE_REPLAY_LINGER_TIMEOUT", "aeron.archive.replay.linger.timeout",
        AA_OPTION_DURATION, AA_ARCHIVE_FIELD(replay_linger_timeout_ns), "5s",
        "linger of a replay publication after its last frame",
        .unit_ns = 1 },
    { "low_storage_space_threshold", "AERON_ARCHIVE_LOW_STORAGE_SPACE_THRESHOLD",
        "aeron.archive.low.storage.space.threshold",
        AA_OPTION_SIZE, AA_ARCHIVE_FIELD(low_storage_space_threshold), "128m",
        "free space in the archive directory below which new recordings are refused (STORAGE_SPACE)" },
    { "error_buffer_length", "AERON_ARCHIVE_ERROR_BUFFER_LENGTH", "aeron.archive.error.buffer.length",
        AA_OPTION_SIZE, AA_ARCHIVE_FIELD(error_buffer_length), "1m",
        "length of the distinct error log in archive-mark.dat" },
    { "driver_timeout", "AERON_ARCHIVE_DRIVER_TIMEOUT", "aeron.archive.driver.timeout",
        AA_OPTION_DURATION, AA_ARCHIVE_FIELD(driver_timeout_ms), "10s",
        "how long the archive's client waits for the media driver",
        .unit_ns = 1000000 },
    /* who may use the archive (docs/security.md, "The archive") */
    { "authenticator", "AERON_ARCHIVE_AUTHENTICATOR", "aeron.archive.authenticator",
        AA_OPTION_STRING, AA_ARCHIVE_FIELD(authenticator), "allow-all",
        "who may open a control session: allow-all (Aeron's default: everyone, every request), credentials "
        "(principal:secret:role entries of AERON_ARCHIVE_CREDENTIALS_FILE / AERON_ARCHIVE_CREDENTIALS; a client sends "
        "principal:secret) or python:module:Class (an authenticator written in Python, run by the Python archive)",
        .check = aa_authenticator_option_check },
    { "credentials_file", "AERON_ARCHIVE_CREDENTIALS_FILE", "aeron.archive.credentials.file",
        AA_OPTION_STRING, AA_ARCHIVE_FIELD(credentials_file), "",
        "the credentials authenticator's entries, one principal:secret:role line each (roles admin, record, read); "
        "the file must be the archive user's and owner-only (chmod 600)" },
    { "credentials", "AERON_ARCHIVE_CREDENTIALS", "aeron.archive.credentials",
        AA_OPTION_STRING, AA_ARCHIVE_FIELD(credentials), "",
        "the credentials authenticator's entries given in the environment: principal:secret:role, separated by "
        "commas or newlines (never shown)",
        .secret = true },
    { "max_control_sessions", "AERON_ARCHIVE_MAX_CONTROL_SESSIONS", "aeron.archive.max.control.sessions",
        AA_OPTION_INT32, AA_ARCHIVE_FIELD(max_control_sessions), "256",
        "control sessions at once; a connect beyond them is answered with an error and closed" },
    { "max_response_term_length", "AERON_ARCHIVE_MAX_RESPONSE_TERM_LENGTH",
        "aeron.archive.max.response.term.length",
        AA_OPTION_SIZE, AA_ARCHIVE_FIELD(max_response_term_length), "1m",
        "the largest term-length a client's response channel may ask for; a connect asking more is refused (a "
        "client's sparse= is replaced by control.term.buffer.sparse)" },
    { "max_replays_per_session", "AERON_ARCHIVE_MAX_REPLAYS_PER_SESSION", "aeron.archive.max.replays.per.session",
        AA_OPTION_INT32, AA_ARCHIVE_FIELD(max_replays_per_session), "0",
        "replays one control session may run at once (MAX_REPLAYS beyond); 0: only max.concurrent.replays bounds them" },
    /* retention, applied by the archive itself (docs/architecture.md, "Segments and retention") */
    { "retention_max_bytes", "AERON_ARCHIVE_RETENTION_MAX_BYTES", "aeron.archive.retention.max.bytes",
        AA_OPTION_SIZE, AA_ARCHIVE_FIELD(retention_max_bytes), "0",
        "keep each recording's newest N bytes: its whole segments older than them are purged (the segment being "
        "written is always kept); 0: off" },
    { "retention_max_age", "AERON_ARCHIVE_RETENTION_MAX_AGE", "aeron.archive.retention.max.age",
        AA_OPTION_DURATION, AA_ARCHIVE_FIELD(retention_max_age_ns), "0",
        "purge a recording's segments last written longer ago than this, oldest first (the segment being written is "
        "always kept); 0: off",
        .unit_ns = 1 },
    { "retention_recording_max_age", "AERON_ARCHIVE_RETENTION_RECORDING_MAX_AGE",
        "aeron.archive.retention.recording.max.age",
        AA_OPTION_DURATION, AA_ARCHIVE_FIELD(retention_recording_max_age_ns), "0",
        "purge whole stopped recordings (catalog entry and files) that stopped longer ago than this and are not being "
        "replayed; 0: off",
        .unit_ns = 1 },
    { "retention_check_interval", "AERON_ARCHIVE_RETENTION_CHECK_INTERVAL", "aeron.archive.retention.check.interval",
        AA_OPTION_DURATION, AA_ARCHIVE_FIELD(retention_check_interval_ns), "1s",
        "how often retention passes over the catalog (one recording per duty cycle, one file deleted per duty cycle)",
        .unit_ns = 1 },
};

static const aa_options_table_t aa_archive_options_table =
{
    "archive", aa_archive_options, sizeof(aa_archive_options) / sizeof(aa_archive_options[0]),
    "65536, 64k, 128m", "500ms, 5s", "an integer", "an integer"
};

const aa_options_table_t *aa_archive_context_options(void)
{
    return &aa_archive_options_table;
}

int aa_archive_context_init(aa_archive_context_t *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    return aa_options_init(&aa_archive_options_table, ctx);
}

int aa_archive_context_set(aa_archive_context_t *ctx, const char *name, const char *value)
{
    return aa_options_set(&aa_archive_options_table, ctx, name, value);
}

int aa_archive_context_get(const aa_archive_context_t *ctx, const char *name, char *value, size_t length)
{
    return aa_options_get(&aa_archive_options_table, ctx, name, value, length);
}

static bool aa_is_power_of_two(int64_t v)
{
    return v > 0 && 0 == (v & (v - 1));
}

int aa_archive_context_validate(aa_archive_context_t *ctx)
{
    if (!aa_is_power_of_two(ctx->segment_file_length) || ctx->segment_file_length < 64 * 1024 ||
        ctx->segment_file_length > 1024 * 1024 * 1024)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_ARCHIVE_SEGMENT_FILE_LENGTH=%" PRId64 " must be a power of 2 from 64k to 1g", ctx->segment_file_length);
        return -1;
    }
    if (!aa_is_power_of_two(ctx->file_io_max_length) || ctx->file_io_max_length < 64 * 1024 ||
        ctx->file_io_max_length > 1024 * 1024 * 1024)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_ARCHIVE_FILE_IO_MAX_LENGTH=%" PRId64 " must be a power of 2 of at least 64k", ctx->file_io_max_length);
        return -1;
    }
    if (ctx->catalog_file_sync_level < ctx->file_sync_level)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_ARCHIVE_CATALOG_FILE_SYNC_LEVEL=%d is below AERON_ARCHIVE_FILE_SYNC_LEVEL=%d; raise the catalog's "
            "(the catalog must be at least as durable as the segments)", ctx->catalog_file_sync_level, ctx->file_sync_level);
        return -1;
    }
    if (ctx->max_concurrent_recordings < 1 || ctx->max_concurrent_replays < 1)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "AERON_ARCHIVE_MAX_CONCURRENT_RECORDINGS and AERON_ARCHIVE_MAX_CONCURRENT_REPLAYS must be at least 1");
        return -1;
    }
    if (ctx->control_term_buffer_length < 64 * 1024 || !aa_is_power_of_two(ctx->control_term_buffer_length))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_ARCHIVE_CONTROL_TERM_BUFFER_LENGTH=%" PRId64 " must be a power of 2 of at least 64k",
            ctx->control_term_buffer_length);
        return -1;
    }
    if (ctx->error_buffer_length < 4096 || ctx->error_buffer_length > INT32_MAX)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "AERON_ARCHIVE_ERROR_BUFFER_LENGTH=%" PRId64 " must be from 4k to 2g",
            ctx->error_buffer_length);
        return -1;
    }
    if (ctx->max_control_sessions < 1 || ctx->max_replays_per_session < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "AERON_ARCHIVE_MAX_CONTROL_SESSIONS must be at least 1 and AERON_ARCHIVE_MAX_REPLAYS_PER_SESSION at least 0");
        return -1;
    }
    if (ctx->max_response_term_length < ctx->control_term_buffer_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_ARCHIVE_MAX_RESPONSE_TERM_LENGTH=%" PRId64 " is below AERON_ARCHIVE_CONTROL_TERM_BUFFER_LENGTH=%" PRId64
            "; raise it to at least the archive's own response term length", ctx->max_response_term_length,
            ctx->control_term_buffer_length);
        return -1;
    }
    if (ctx->retention_check_interval_ns < 1000000)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_ARCHIVE_RETENTION_CHECK_INTERVAL=%" PRId64 "ns must be at least 1ms", ctx->retention_check_interval_ns);
        return -1;
    }
    if ('\0' == ctx->archive_dir[0])
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s", "AERON_ARCHIVE_DIR must not be empty");
        return -1;
    }
    ctx->control_channel_enabled = '\0' != ctx->control_channel[0];
    return 0;
}

aa_archive_context_t *aa_archive_context_new(void)
{
    aa_archive_context_t *ctx = malloc(sizeof(*ctx));
    if (NULL == ctx)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory");
        return NULL;
    }
    if (aa_archive_context_init(ctx) < 0)
    {
        free(ctx);
        return NULL;
    }
    return ctx;
}

void aa_archive_context_free(aa_archive_context_t *ctx)
{
    free(ctx);
}

const char *aa_archive_context_archive_dir(aa_archive_context_t *ctx)
{
    return ctx->archive_dir;
}

/* The channel a recording is identified by: the prefix and the parameters that select the stream
 * (Aeron's stripped channel: endpoint, interface, control, control-mode, session-id, tags, ...). */
char *aa_archive_strip_channel(const char *channel)
{
    static const char *const keep[] = { "endpoint", "interface", "control", "control-mode", "session-id", "tags",
        "alias", "rejoin", "group", "cc", "fc", "gtag", "ssc", "spies-simulate-connection", NULL };
    const char *spy = "aeron-spy:";
    if (0 == strncmp(channel, spy, strlen(spy)))
    {
        channel += strlen(spy);
    }
    size_t length = strlen(channel);
    char *out = malloc(length + 1);
    if (NULL == out)
    {
        return NULL;
    }
    const char *q = strchr(channel, '?');
    if (NULL == q)
    {
        memcpy(out, channel, length + 1);
        return out;
    }
    size_t n = (size_t)(q - channel);
    memcpy(out, channel, n);
    char sep = '?';
    const char *p = q + 1;
    while (*p)
    {
        const char *end = strchr(p, '|');
        size_t item = NULL == end ? strlen(p) : (size_t)(end - p);
        const char *eq = memchr(p, '=', item);
        size_t key = NULL == eq ? item : (size_t)(eq - p);
        for (int i = 0; keep[i]; i++)
        {
            if (strlen(keep[i]) == key && 0 == strncmp(p, keep[i], key))
            {
                out[n++] = sep;
                memcpy(out + n, p, item);
                n += item;
                sep = '|';
                break;
            }
        }
        p += item;
        if ('|' == *p)
        {
            p++;
        }
    }
    out[n] = '\0';
    return out;
}

