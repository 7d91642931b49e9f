/*
 * The archive's settings (reference aeron-archive.md section 5): every option has an environment
 * variable AERON_ARCHIVE_* (AERON_DIR for the media driver's directory), a property name
 * aeron.archive.* and a default, in the archive's option table (aa_archive_context.c, run by the
 * option engine util/aa_options.h); aa_archive_context_set takes either name.
 */
#ifndef AA_ARCHIVE_CONTEXT_H
#define AA_ARCHIVE_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "archive/aa_archive_checksum.h"
#include "util/aa_fs.h"
#include "util/aa_options.h"

#define AA_ARCHIVE_THREADING_DEDICATED 0
#define AA_ARCHIVE_THREADING_SHARED 1
#define AA_ARCHIVE_THREADING_INVOKER 2

#define AA_ARCHIVE_PATH_MAX 1024
#define AA_ARCHIVE_CHANNEL_MAX 512

typedef struct aa_archive_context_stct
{
    char archive_dir[AA_ARCHIVE_PATH_MAX];
    char aeron_dir[AA_ARCHIVE_PATH_MAX];
    bool delete_archive_on_start;
    /* AERON_ARCHIVE_DIR_GROUP: who besides the archive's user may read the archive directory
     * (docs/security.md, "Files"); all zero, the default, is the owner only. */
    aa_fs_access_t dir_access;
    int64_t archive_id;
    char control_channel[AA_ARCHIVE_CHANNEL_MAX];
    int32_t control_stream_id;
    bool control_channel_enabled;
    char local_control_channel[AA_ARCHIVE_CHANNEL_MAX];
    int32_t local_control_stream_id;
    int64_t control_term_buffer_length;
    bool control_term_buffer_sparse;
    int32_t threading_mode;
    char idle_strategy[128];
    int64_t segment_file_length;
    int64_t file_io_max_length;
    int32_t file_sync_level;
    int32_t catalog_file_sync_level;
    int32_t record_checksum;
    int32_t replay_checksum;
    int32_t max_concurrent_recordings;
    int32_t max_concurrent_replays;
    int64_t catalog_capacity;
    int64_t connect_timeout_ns;
    int64_t session_liveness_check_interval_ns;
    int64_t replay_linger_timeout_ns;
    int64_t low_storage_space_threshold;
    int64_t error_buffer_length;
    int64_t driver_timeout_ms;
    char authenticator[AA_ARCHIVE_PATH_MAX];
    char credentials_file[AA_ARCHIVE_PATH_MAX];
    char credentials[4096];
    int32_t max_control_sessions;
    int64_t max_response_term_length;
    int32_t max_replays_per_session;
    char replication_channel[AA_ARCHIVE_CHANNEL_MAX];
    int64_t retention_max_bytes;           /* retention (aa_archive_retention.h): 0 off */
    int64_t retention_max_age_ns;
    int64_t retention_recording_max_age_ns;
    int64_t retention_check_interval_ns;
}
aa_archive_context_t;

/* Defaults, then the environment. */
int aa_archive_context_init(aa_archive_context_t *ctx);
int aa_archive_context_set(aa_archive_context_t *ctx, const char *name, const char *value);
/* The value an option holds, by either name, as it would be set (aa_options_get). */
int aa_archive_context_get(const aa_archive_context_t *ctx, const char *name, char *value, size_t length);
/* The archive's option table (util/aa_options.h). */
const aa_options_table_t *aa_archive_context_options(void);
/* Cross-option checks (segment length against term lengths, sync levels, ...), run by launch. */
int aa_archive_context_validate(aa_archive_context_t *ctx);

/* The channel a recording is identified by (a malloc'd string; NULL when out of memory): the
 * channel without an aeron-spy: prefix, keeping only the parameters that select the stream
 * (endpoint, interface, control, control-mode, session-id, tags, ...), in their order. */
char *aa_archive_strip_channel(const char *channel);

/* CDEF BEGIN */
/* An archive's mark file header, as aa_archive_mark_reader_open reads it (aeron_async.h). */
typedef struct aa_archive_mark_info_stct
{
    int32_t version;
    int32_t control_stream_id;
    int32_t local_control_stream_id;
    int64_t activity_timestamp_ms;
    int64_t start_timestamp_ms;
    int64_t pid;
    int64_t archive_id;
}
aa_archive_mark_info_t;
/* CDEF END */

#endif
