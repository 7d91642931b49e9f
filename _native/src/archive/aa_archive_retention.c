/*
 * Retention (docs/architecture.md, "Segments and retention"): the plan (pure, shared with
 * `aeron-async recordings retention --dry-run`) and the conductor's step that applies it. The
 * step never blocks the conductor for long: a pass over the catalog looks at one recording per
 * duty cycle, and what goes is queued on the segment delete queue (one file per duty cycle). Each
 * action is logged to the archive's error log (archive-mark.dat) and each file deleted counted on
 * the "archive retention deleted segments" counter.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive/aa_archive_retention.h"
#include "archive/aa_archive_segments_mgmt.h"
#include "archive/aa_archive_segment.h"
#include "aeron_async.h"
#include "util/aa_error.h"

/* ---- the plan ---- */

int aa_archive_retention_recording_expired(
    const aa_archive_retention_policy_t *policy, int64_t stop_position, int64_t stop_timestamp_ms, int64_t now_ms)
{
    return policy->max_recording_age_ms > 0 && stop_position >= 0 && stop_timestamp_ms >= 0 &&
        now_ms - stop_timestamp_ms > policy->max_recording_age_ms ? 1 : 0;
}

int64_t aa_archive_retention_new_start(
    const aa_archive_retention_policy_t *policy, int64_t start_position, int64_t end_position, int32_t term_length,
    int32_t segment_length, const int64_t *bases, const int64_t *mtimes_ms, int32_t count, int64_t now_ms)
{
    if (term_length <= 0 || segment_length <= 0 || end_position < start_position)
    {
        return start_position;
    }
    int64_t first = aa_archive_segment_base_position(start_position, start_position, term_length, segment_length);
    int64_t upper = aa_archive_segment_base_position(start_position, end_position, term_length, segment_length);
    int64_t candidate = first;
    if (policy->max_bytes > 0 && end_position - policy->max_bytes > first)
    {
        /* segments wholly older than the newest max_bytes bytes */
        int64_t keep_from = end_position - policy->max_bytes;
        candidate = aa_archive_segment_base_position(start_position, keep_from, term_length, segment_length);
    }
    if (policy->max_age_ms > 0)
    {
        /* from the first segment up, while each was last written longer ago than max_age */
        int64_t by_age = first;
        for (int32_t i = 0; i < count; i++)
        {
            if (bases[i] < by_age)
            {
                continue;
            }
            if (bases[i] != by_age || now_ms - mtimes_ms[i] <= policy->max_age_ms)
            {
                break;
            }
            by_age += segment_length;
        }
        candidate = by_age > candidate ? by_age : candidate;
    }
    if (candidate > upper)
    {
        candidate = upper;
    }
    return candidate > first && candidate > start_position ? candidate : start_position;
}

/* ---- the conductor's step ---- */

static void aa_policy(const aa_archive_context_t *ctx, aa_archive_retention_policy_t *policy)
{
    policy->max_bytes = ctx->retention_max_bytes;
    policy->max_age_ms = ctx->retention_max_age_ns / 1000000;
    policy->max_recording_age_ms = ctx->retention_recording_max_age_ns / 1000000;
}

void aa_archive_retention_count_deleted(aa_archive_conductor_t *c)
{
    aa_archive_segments_t *g = c->segments;
    g->retention_deleted++;
    if (NULL != g->retention_counter)
    {
        aa_counter_set(g->retention_counter, g->retention_deleted);
    }
}

/* The counter "archive retention deleted segments: archiveId=N" (type AA_ARCHIVE_RETENTION_COUNTER_TYPE_ID). */
static void aa_retention_counter(aa_archive_conductor_t *c, aa_archive_segments_t *g)
{
    if (NULL != g->retention_counter)
    {
        return;
    }
    if (g->retention_counter_async < 0)
    {
        char label[128];
        int64_t archive_id = c->archive->archive_id;
        int n = snprintf(label, sizeof(label), "archive retention deleted segments: archiveId=%" PRId64, archive_id);
        g->retention_counter_async = aa_client_async_add_counter(c->client, AA_ARCHIVE_RETENTION_COUNTER_TYPE_ID,
            (const uint8_t *)&archive_id, sizeof(archive_id), label, (size_t)n);
        if (g->retention_counter_async < 0)
        {
            aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "retention counter: %s", aa_errmsg());
            g->retention_counter_async = INT64_MAX; /* not asked again */
        }
        return;
    }
    if (INT64_MAX == g->retention_counter_async)
    {
        return;
    }
    int rc = aa_client_async_add_counter_poll(c->client, g->retention_counter_async, &g->retention_counter);
    if (rc < 0)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "retention counter: %s", aa_errmsg());
        g->retention_counter_async = INT64_MAX;
    }
    else if (rc > 0)
    {
        aa_counter_set(g->retention_counter, g->retention_deleted);
    }
}

/* The recording's segment files: bases (ascending) and last-write times (malloc'd, both). */
static int32_t aa_segment_files(const char *dir, int64_t recording_id, int64_t **bases, int64_t **mtimes)
{
    int32_t count = aa_archive_segment_list(dir, recording_id, NULL, 0);
    if (count < 0)
    {
        return -1;
    }
    *bases = malloc(sizeof(int64_t) * (size_t)(count + 1));
    *mtimes = malloc(sizeof(int64_t) * (size_t)(count + 1));
    if (NULL == *bases || NULL == *mtimes)
    {
        free(*bases);
        free(*mtimes);
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory");
        return -1;
    }
    count = aa_archive_segment_list(dir, recording_id, *bases, count);
    for (int32_t i = 0; i < count; i++)
    {
        char name[64], path[PATH_MAX];
        struct stat st;
        aa_archive_segment_file_name(name, sizeof(name), recording_id, (*bases)[i]);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        (*mtimes)[i] = 0 == stat(path, &st) ? (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000 :
            INT64_MAX;
    }
    return count;
}

/* Applies retention to one recording (a VALID catalog entry): 1 when something was queued. */
static int aa_retain(aa_archive_conductor_t *c, const aa_archive_recording_descriptor_t *d, int64_t now_ms)
{
    const aa_archive_context_t *ctx = &c->archive->ctx;
    aa_archive_retention_policy_t policy;
    aa_policy(ctx, &policy);
    bool active = NULL != aa_archive_find_active_recording(c, d->recording_id);
    int64_t replay_base = aa_archive_segments_lowest_replay_base(c, d->recording_id);
    if (aa_archive_segments_delete_pending(c, d->recording_id))
    {
        return 0;
    }
    int64_t *bases = NULL, *mtimes = NULL;
    int32_t count = aa_segment_files(ctx->archive_dir, d->recording_id, &bases, &mtimes);
    if (count < 0)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "retention of recording %" PRId64 ": %s",
            d->recording_id, aa_errmsg());
        return 0;
    }
    int queued = 0;
    if (!active && INT64_MAX == replay_base &&
        aa_archive_retention_recording_expired(&policy, d->stop_position, d->stop_timestamp, now_ms))
    {
        if (aa_archive_catalog_change_state(c->catalog, d->recording_id, AA_ARCHIVE_RECORDING_DELETED) == 0 &&
            aa_archive_segments_queue_delete(c, d->recording_id, -1, -1, bases, count, true) == 0)
        {
            aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "retention: purged recording %" PRId64
                " (stopped longer ago than AERON_ARCHIVE_RETENTION_RECORDING_MAX_AGE=%" PRId64 "ms)",
                d->recording_id, policy.max_recording_age_ms);
            queued = 1;
        }
    }
    else
    {
        int64_t end = aa_archive_recorded_position(c, d);
        int64_t new_start = aa_archive_retention_new_start(&policy, d->start_position, end, d->term_buffer_length,
            d->segment_file_length, bases, mtimes, count, now_ms);
        if (new_start > replay_base)
        {
            new_start = replay_base; /* a replay reads there: retention waits (it is a segment base) */
        }
        int64_t first = aa_archive_segment_base_position(d->start_position, d->start_position, d->term_buffer_length,
            d->segment_file_length);
        if (new_start > first && new_start > d->start_position)
        {
            int32_t n = 0;
            for (int32_t i = 0; i < count; i++)
            {
                if (bases[i] < new_start)
                {
                    bases[n++] = bases[i];
                }
            }
            if (aa_archive_catalog_update_start_position(c->catalog, d->recording_id, new_start) == 0 &&
                aa_archive_segments_queue_delete(c, d->recording_id, -1, -1, bases, n, true) == 0)
            {
                aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "retention: recording %" PRId64
                    " now starts at a later segment boundary (AERON_ARCHIVE_RETENTION_MAX_BYTES=%" PRId64
                    ", AERON_ARCHIVE_RETENTION_MAX_AGE=%" PRId64 "ms); its older segment files are deleted",
                    d->recording_id, policy.max_bytes, policy.max_age_ms);
                queued = 1;
            }
        }
    }
    free(bases);
    free(mtimes);
    return queued;
}

int aa_archive_retention_do_work(aa_archive_conductor_t *c, int64_t now_ns)
{
    const aa_archive_context_t *ctx = &c->archive->ctx;
    if (ctx->retention_max_bytes <= 0 && ctx->retention_max_age_ns <= 0 && ctx->retention_recording_max_age_ns <= 0)
    {
        return 0;
    }
    aa_archive_segments_t *g = aa_archive_segments_state(c);
    if (NULL == g)
    {
        return 0;
    }
    aa_retention_counter(c, g);
    if (g->retention_cursor < 0)
    {
        if (now_ns < g->retention_next_check_ns)
        {
            return 0;
        }
        g->retention_cursor = 0;
        g->retention_next_check_ns = now_ns + ctx->retention_check_interval_ns;
    }
    aa_archive_catalog_entry_t entry;
    if (1 != aa_archive_catalog_entry(c->catalog, g->retention_cursor, &entry))
    {
        g->retention_cursor = -1; /* the pass is over */
        return 0;
    }
    g->retention_cursor++;
    if (AA_ARCHIVE_RECORDING_VALID != entry.state)
    {
        return 1;
    }
    return 1 + aa_retain(c, &entry.fields, aa_archive_now_ms(c));
}
