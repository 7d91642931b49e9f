/* The archive's option table: names, defaults, parsing and cross-option checks. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "archive/aa_archive_context.h"
#include "aeron_async.h"
#include "agent/aa_agent.h"
#include "util/aa_error.h"
#include "util/aa_parse.h"

typedef enum aa_archive_option_kind_enum
{
    AA_AOPT_STRING,
    AA_AOPT_AERON_DIR,
    AA_AOPT_IDLE,
    AA_AOPT_BOOL,
    AA_AOPT_SIZE,
    AA_AOPT_INT32,
    AA_AOPT_INT64,
    AA_AOPT_DURATION_NS,
    AA_AOPT_DURATION_MS,
    AA_AOPT_THREADING_MODE,
    AA_AOPT_SYNC_LEVEL,
    AA_AOPT_CHECKSUM
}
aa_archive_option_kind_t;

typedef struct aa_archive_option_stct
{
    const char *env_name;
    const char *property_name;
    aa_archive_option_kind_t kind;
    size_t offset;
    size_t size;
    const char *default_value;
    const char *description;
}
aa_archive_option_t;

#define AA_AFIELD(f) offsetof(aa_archive_context_t, f), sizeof(((aa_archive_context_t *)0)->f)

static const aa_archive_option_t aa_archive_options[] =
{
    { "AERON_ARCHIVE_DIR", "aeron.archive.dir", AA_AOPT_STRING, AA_AFIELD(archive_dir), "aeron-archive",
        "directory of the catalog, the segment files and the mark file" },
    { "AERON_DIR", "aeron.dir", AA_AOPT_AERON_DIR, AA_AFIELD(aeron_dir), "",
        "the media driver's directory the archive connects to (default /dev/shm/aeron-<user>)" },
    { "AERON_ARCHIVE_DIR_DELETE_ON_START", "aeron.archive.dir.delete.on.start", AA_AOPT_BOOL,
        AA_AFIELD(delete_archive_on_start), "false", "delete the archive directory's contents on start" },
    { "AERON_ARCHIVE_ID", "aeron.archive.id", AA_AOPT_INT64, AA_AFIELD(archive_id), "-1",
        "the archive's id; -1: the id of its client of the media driver (not stable across restarts)" },
    { "AERON_ARCHIVE_CONTROL_CHANNEL", "aeron.archive.control.channel", AA_AOPT_STRING, AA_AFIELD(control_channel), "",
        "UDP channel of control requests (none by default: local control only), e.g. aeron:udp?endpoint=localhost:8010" },
    { "AERON_ARCHIVE_CONTROL_STREAM_ID", "aeron.archive.control.stream.id", AA_AOPT_INT32,
        AA_AFIELD(control_stream_id), "10", "stream id of the control channel" },
    { "AERON_ARCHIVE_LOCAL_CONTROL_CHANNEL", "aeron.archive.local.control.channel", AA_AOPT_STRING,
        AA_AFIELD(local_control_channel), "aeron:ipc?term-length=64k", "IPC channel of control requests from local clients" },
    { "AERON_ARCHIVE_LOCAL_CONTROL_STREAM_ID", "aeron.archive.local.control.stream.id", AA_AOPT_INT32,
        AA_AFIELD(local_control_stream_id), "10", "stream id of the local control channel" },
    { "AERON_ARCHIVE_CONTROL_TERM_BUFFER_LENGTH", "aeron.archive.control.term.buffer.length", AA_AOPT_SIZE,
        AA_AFIELD(control_term_buffer_length), "64k", "term length of the control response publications" },
    { "AERON_ARCHIVE_CONTROL_TERM_BUFFER_SPARSE", "aeron.archive.control.term.buffer.sparse", AA_AOPT_BOOL,
        AA_AFIELD(control_term_buffer_sparse), "true", "create the control response logs sparse" },
    { "AERON_ARCHIVE_THREADING_MODE", "aeron.archive.threading.mode", AA_AOPT_THREADING_MODE,
        AA_AFIELD(threading_mode), "DEDICATED",
        "DEDICATED (conductor, recorder and replayer threads), SHARED (one thread) or INVOKER (the caller's do_work)" },
    { "AERON_ARCHIVE_IDLE_STRATEGY", "aeron.archive.idle.strategy", AA_AOPT_IDLE, AA_AFIELD(idle_strategy), "backoff",
        "idle strategy of the archive's threads" },
    { "AERON_ARCHIVE_SEGMENT_FILE_LENGTH", "aeron.archive.segment.file.length", AA_AOPT_SIZE,
        AA_AFIELD(segment_file_length), "128m",
        "segment file length: a power of 2 from 64k to 1g; a recording uses max(this, its term length)" },
    { "AERON_ARCHIVE_FILE_IO_MAX_LENGTH", "aeron.archive.file.io.max.length", AA_AOPT_SIZE,
        AA_AFIELD(file_io_max_length), "1m", "the most one write or read moves: a power of 2, at least 64k" },
    { "AERON_ARCHIVE_FILE_SYNC_LEVEL", "aeron.archive.file.sync.level", AA_AOPT_SYNC_LEVEL,
        AA_AFIELD(file_sync_level), "0",
        "segment files: 0 page cache only, 1 force the data written (a recorded position is a forced one), 2 also metadata" },
    { "AERON_ARCHIVE_CATALOG_FILE_SYNC_LEVEL", "aeron.archive.catalog.file.sync.level", AA_AOPT_SYNC_LEVEL,
        AA_AFIELD(catalog_file_sync_level), "0", "the catalog: 0, 1 or 2 as file.sync.level, and at least it" },
    { "AERON_ARCHIVE_RECORD_CHECKSUM", "aeron.archive.record.checksum", AA_AOPT_CHECKSUM,
        AA_AFIELD(record_checksum), "",
        "CRC-32C or CRC-32: store each DATA frame's payload checksum in its session id field on disk (empty: none)" },
    { "AERON_ARCHIVE_REPLAY_CHECKSUM", "aeron.archive.replay.checksum", AA_AOPT_CHECKSUM,
        AA_AFIELD(replay_checksum), "", "CRC-32C or CRC-32: verify each DATA frame's checksum on replay (the recording's), failing the replay on a mismatch" },
    { "AERON_ARCHIVE_MAX_CONCURRENT_RECORDINGS", "aeron.archive.max.concurrent.recordings", AA_AOPT_INT32,
        AA_AFIELD(max_concurrent_recordings), "20", "recordings at once; more are refused (MAX_RECORDINGS)" },
    { "AERON_ARCHIVE_MAX_CONCURRENT_REPLAYS", "aeron.archive.max.concurrent.replays", AA_AOPT_INT32,
        AA_AFIELD(max_concurrent_replays), "20", "replays at once; more are refused (MAX_REPLAYS)" },
    { "AERON_ARCHIVE_CATALOG_CAPACITY", "aeron.archive.catalog.capacity", AA_AOPT_SIZE,
        AA_AFIELD(catalog_capacity), "1m", "initial catalog file length (it grows x1.5 when full)" },
    { "AERON_ARCHIVE_CONNECT_TIMEOUT", "aeron.archive.connect.timeout", AA_AOPT_DURATION_NS,
        AA_AFIELD(connect_timeout_ns), "5s",
        "each phase of a control session (connecting its responses, authenticating) and an unsent response time out after this" },
    { "AERON_ARCHIVE_SESSION_LIVENESS_CHECK_INTERVAL", "aeron.archive.session.liveness.check.interval",
        AA_AOPT_DURATION_NS, AA_AFIELD(session_liveness_check_interval_ns), "1s",
        "the archive pings every control session this often" },
    { "AERON_ARCHIVE_REPLAY_LINGER_TIMEOUT", "aeron.archive.replay.linger.timeout", AA_AOPT_DURATION_NS,
        AA_AFIELD(replay_linger_timeout_ns), "5s", "linger of a replay publication after its last frame" },
    { "AERON_ARCHIVE_LOW_STORAGE_SPACE_THRESHOLD", "aeron.archive.low.storage.space.threshold", AA_AOPT_SIZE,
        AA_AFIELD(low_storage_space_threshold), "128m",
        "free space in the archive directory below which new recordings are refused (STORAGE_SPACE)" },
    { "AERON_ARCHIVE_ERROR_BUFFER_LENGTH", "aeron.archive.error.buffer.length", AA_AOPT_SIZE,
        AA_AFIELD(error_buffer_length), "1m", "length of the distinct error log in archive-mark.dat" },
    { "AERON_ARCHIVE_DRIVER_TIMEOUT", "aeron.archive.driver.timeout", AA_AOPT_DURATION_MS,
        AA_AFIELD(driver_timeout_ms), "10s", "how long the archive's client waits for the media driver" },
};

#define AA_ARCHIVE_OPTION_COUNT (sizeof(aa_archive_options) / sizeof(aa_archive_options[0]))

static const aa_archive_option_t *aa_archive_option_find(const char *name)
{
    char normalised[128];
    size_t len = strlen(name);
    if (len >= sizeof(normalised))
    {
        return NULL;
    }
    for (size_t i = 0; i <= len; i++)
    {
        char c = name[i];
        normalised[i] = '.' == c ? '_' : (char)toupper((unsigned char)c);
    }
    for (size_t i = 0; i < AA_ARCHIVE_OPTION_COUNT; i++)
    {
        if (0 == strcmp(aa_archive_options[i].env_name, normalised))
        {
            return &aa_archive_options[i];
        }
    }
    return NULL;
}

static int aa_archive_parse_int64(const aa_archive_option_t *opt, const char *value, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (0 != errno || end == value || '\0' != *end)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s is not an integer", opt->env_name, value);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

static int aa_archive_option_apply(aa_archive_context_t *ctx, const aa_archive_option_t *opt, const char *value)
{
    uint8_t *field = (uint8_t *)ctx + opt->offset;
    switch (opt->kind)
    {
        case AA_AOPT_AERON_DIR:
            if ('\0' == value[0])
            {
                aa_default_aeron_dir((char *)field, opt->size);
                return 0;
            }
            /* fall through */
        case AA_AOPT_STRING:
            if (strlen(value) >= opt->size)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s is too long (%zu characters, at most %zu)",
                    opt->env_name, strlen(value), opt->size - 1);
                return -1;
            }
            snprintf((char *)field, opt->size, "%s", value);
            return 0;

        case AA_AOPT_IDLE:
        {
            aa_idle_strategy_t probe;
            if (aa_idle_strategy_load(&probe, value) < 0)
            {
                AA_APPEND_ERR("invalid %s", opt->env_name);
                return -1;
            }
            aa_idle_strategy_close(&probe);
            if (strlen(value) >= opt->size)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s is too long", opt->env_name);
                return -1;
            }
            snprintf((char *)field, opt->size, "%s", value);
            return 0;
        }

        case AA_AOPT_BOOL:
            if (0 == strcasecmp(value, "true") || 0 == strcmp(value, "1") || 0 == strcasecmp(value, "yes"))
            {
                *(bool *)field = true;
                return 0;
            }
            if (0 == strcasecmp(value, "false") || 0 == strcmp(value, "0") || 0 == strcasecmp(value, "no"))
            {
                *(bool *)field = false;
                return 0;
            }
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s is not a boolean; use true or false", opt->env_name, value);
            return -1;

        case AA_AOPT_SIZE:
        {
            int64_t v = aa_parse_size(value);
            if (v < 0)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                    "%s=%s is not a size; use bytes with an optional k, m or g suffix (e.g. 65536, 64k, 128m)",
                    opt->env_name, value);
                return -1;
            }
            *(int64_t *)field = v;
            return 0;
        }

        case AA_AOPT_INT32:
        {
            int64_t v;
            if (aa_archive_parse_int64(opt, value, &v) < 0)
            {
                return -1;
            }
            if (v < INT32_MIN || v > INT32_MAX)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s is not a 32-bit integer", opt->env_name, value);
                return -1;
            }
            *(int32_t *)field = (int32_t)v;
            return 0;
        }

        case AA_AOPT_INT64:
            return aa_archive_parse_int64(opt, value, (int64_t *)field);

        case AA_AOPT_DURATION_NS:
        case AA_AOPT_DURATION_MS:
        {
            int64_t ns = aa_parse_duration_ns(value);
            if (ns < 0)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                    "%s=%s is not a duration; use a number with ns, us, ms or s (e.g. 500ms, 5s)", opt->env_name, value);
                return -1;
            }
            *(int64_t *)field = AA_AOPT_DURATION_MS == opt->kind ? ns / 1000000 : ns;
            return 0;
        }

        case AA_AOPT_THREADING_MODE:
        {
            static const char *names[] = { "DEDICATED", "SHARED", "INVOKER" };
            for (int i = 0; i < 3; i++)
            {
                if (0 == strcasecmp(value, names[i]))
                {
                    *(int32_t *)field = i;
                    return 0;
                }
            }
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                "%s=%s is not an archive threading mode; use DEDICATED, SHARED or INVOKER", opt->env_name, value);
            return -1;
        }

        case AA_AOPT_SYNC_LEVEL:
            if (('0' == value[0] || '1' == value[0] || '2' == value[0]) && '\0' == value[1])
            {
                *(int32_t *)field = value[0] - '0';
                return 0;
            }
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                "%s=%s is not a sync level; use 0 (page cache), 1 (force data) or 2 (force data and metadata)",
                opt->env_name, value);
            return -1;

        case AA_AOPT_CHECKSUM:
        {
            int32_t type = '\0' == value[0] ? AA_ARCHIVE_CHECKSUM_NONE : aa_archive_checksum_parse(value);
            if (type < 0)
            {
                AA_APPEND_ERR("invalid %s", opt->env_name);
                return -1;
            }
            *(int32_t *)field = type;
            return 0;
        }
    }
    return -1;
}

int aa_archive_context_init(aa_archive_context_t *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    for (size_t i = 0; i < AA_ARCHIVE_OPTION_COUNT; i++)
    {
        if (aa_archive_option_apply(ctx, &aa_archive_options[i], aa_archive_options[i].default_value) < 0)
        {
            return -1;
        }
    }
    for (size_t i = 0; i < AA_ARCHIVE_OPTION_COUNT; i++)
    {
        const char *env = getenv(aa_archive_options[i].env_name);
        if (NULL != env && aa_archive_option_apply(ctx, &aa_archive_options[i], env) < 0)
        {
            AA_APPEND_ERR("%s", "from the environment");
            return -1;
        }
    }
    return 0;
}

int aa_archive_context_set(aa_archive_context_t *ctx, const char *name, const char *value)
{
    const aa_archive_option_t *opt = aa_archive_option_find(name);
    if (NULL == opt)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "unknown archive option %s; see `aeron-async archive --help-options`", name);
        return -1;
    }
    return aa_archive_option_apply(ctx, opt, value);
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
    if ('\0' == ctx->archive_dir[0])
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s", "AERON_ARCHIVE_DIR must not be empty");
        return -1;
    }
    ctx->control_channel_enabled = '\0' != ctx->control_channel[0];
    return 0;
}

int aa_archive_option(int index, const char **env_name, const char **property_name, const char **default_value,
    const char **description)
{
    if (index < 0 || (size_t)index >= AA_ARCHIVE_OPTION_COUNT)
    {
        return -1;
    }
    *env_name = aa_archive_options[index].env_name;
    *property_name = aa_archive_options[index].property_name;
    *default_value = aa_archive_options[index].default_value;
    *description = aa_archive_options[index].description;
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

