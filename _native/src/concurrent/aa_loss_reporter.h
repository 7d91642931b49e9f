/*
 * The loss report: every loss a driver's receiver detects, per image, in a memory-mapped file
 * (<aeron_dir>/loss-report.dat) that other processes read while the driver runs and after it stopped
 * (`aeron-async loss`, aeron_async.loss, and Aeron's own LossStat: the layout is Aeron's LossReport).
 *
 * Entries one after another from offset 0, each starting at a multiple of 64 (a cache line):
 *
 *   0   observation count          int64   0 = no entry here (and none after it)
 *   8   total bytes lost           int64
 *   16  first observation time     int64   ms since the epoch
 *   24  last observation time      int64   ms since the epoch
 *   32  session id                 int32
 *   36  stream id                  int32
 *   40  channel                    int32 length + that many US-ASCII bytes, padded to a multiple of 4
 *   ..  source                     int32 length (at 44 + align(channel length, 4)) + that many US-ASCII
 *                                  bytes (the publisher's address:port)
 *
 * The source's length is 4-byte aligned after the channel, as Aeron's LossReport and C loss reporter
 * write it and its LossReportReader and LossStat read it. Files written by aeron_async before it
 * aligned it (the length right after the channel's bytes) are read too: aa_loss_report_read tries the
 * aligned place first, and the unaligned one when the aligned one holds no length that fits (the two
 * only differ when the channel's length is not a multiple of 4, and then the aligned read of an
 * unaligned entry takes source characters as the high bytes of the length, far beyond any report).
 *
 * Integers are in the machine's byte order (little-endian, as Aeron's buffers are). Aeron's C driver
 * declares the two timestamps the other way round in its entry struct; its Java LossReport, which
 * LossStat reads, and this file put the first observation at 16.
 *
 * One writer (the receiver thread: it alone detects gaps), any number of readers. An entry is written
 * whole before its observation count is stored with release semantics, so a reader that sees a count
 * above 0 sees the entry's channel and source; an observation stores the last time, the bytes and
 * then the count, each with a release store (one writer, so no atomic read-modify-write is needed).
 * A reader may see the count of one observation with the bytes of the next: it reads a live report.
 */
#ifndef AA_LOSS_REPORTER_H
#define AA_LOSS_REPORTER_H

#include <stddef.h>
#include <stdint.h>

#include "concurrent/aa_atomic.h"

#define AA_LOSS_REPORT_FILE "loss-report.dat"
#define AA_LOSS_REPORT_ENTRY_ALIGNMENT 64
#define AA_LOSS_REPORT_OBSERVATION_COUNT_OFFSET 0
#define AA_LOSS_REPORT_TOTAL_BYTES_LOST_OFFSET 8
#define AA_LOSS_REPORT_FIRST_OBSERVATION_OFFSET 16
#define AA_LOSS_REPORT_LAST_OBSERVATION_OFFSET 24
#define AA_LOSS_REPORT_SESSION_ID_OFFSET 32
#define AA_LOSS_REPORT_STREAM_ID_OFFSET 36
#define AA_LOSS_REPORT_CHANNEL_OFFSET 40

/* An image's entry before its first loss; AA_LOSS_REPORT_FULL once the report had no room for it. */
#define AA_LOSS_REPORT_NO_ENTRY (-1)
#define AA_LOSS_REPORT_FULL (-2)

typedef struct aa_loss_reporter_stct
{
    uint8_t *buffer;            /* 64-byte aligned (a mapping is page aligned) */
    size_t capacity;
    size_t next_record_offset;  /* the writer's */
}
aa_loss_reporter_t;

/* AA_LOSS_REPORT_FILE, for readers in other languages. */
const char *aa_loss_report_file_name(void);

/* Wraps a zeroed buffer (a new file's mapping). -1 when it is not 64-byte aligned. */
int aa_loss_reporter_init(aa_loss_reporter_t *reporter, uint8_t *buffer, size_t capacity);

/* The first loss of an image: a new entry with one observation. Returns its offset, or -1 with the
 * error set (ENOMEM) when the report has no room left for it. */
int64_t aa_loss_reporter_create_entry(
    aa_loss_reporter_t *reporter, int64_t bytes_lost, int64_t timestamp_ms, int32_t session_id, int32_t stream_id,
    const char *channel, size_t channel_length, const char *source, size_t source_length);

/* A later loss of the image whose entry is at offset (the writer only). */
static inline void aa_loss_reporter_record_observation(
    aa_loss_reporter_t *reporter, int64_t offset, int64_t bytes_lost, int64_t timestamp_ms)
{
    uint8_t *entry = reporter->buffer + offset;
    volatile int64_t *total = (volatile int64_t *)(entry + AA_LOSS_REPORT_TOTAL_BYTES_LOST_OFFSET);
    volatile int64_t *count = (volatile int64_t *)(entry + AA_LOSS_REPORT_OBSERVATION_COUNT_OFFSET);
    aa_put_int64_release((volatile int64_t *)(entry + AA_LOSS_REPORT_LAST_OBSERVATION_OFFSET), timestamp_ms);
    aa_put_int64_release(total, aa_get_int64_volatile(total) + bytes_lost);
    aa_put_int64_release(count, aa_get_int64_volatile(count) + 1);
}

typedef struct aa_loss_report_entry_stct
{
    int64_t observation_count;
    int64_t total_bytes_lost;
    int64_t first_observation_timestamp;
    int64_t last_observation_timestamp;
    int32_t session_id;
    int32_t stream_id;
    const char *channel;        /* in the buffer, not NUL-terminated */
    int32_t channel_length;
    const char *source;
    int32_t source_length;
}
aa_loss_report_entry_t;

typedef void (*aa_loss_report_entry_func_t)(void *clientd, const aa_loss_report_entry_t *entry);

/* Calls func for every entry of a report (any process), in order; returns how many. An entry whose
 * lengths run past the buffer ends the walk (a file cut short, or not a loss report). */
size_t aa_loss_report_read(const uint8_t *buffer, size_t capacity, aa_loss_report_entry_func_t func, void *clientd);

#endif
