/* The loss report writer and reader: Aeron's LossReport layout byte for byte, entries on 64-byte
 * boundaries, observations adding up, a full report refusing an entry, and a reader that stops at the
 * first empty entry or at lengths running past the buffer (while a writer thread adds entries). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "concurrent/aa_loss_reporter.h"
#include "util/aa_error.h"

#define CAPACITY 4096

typedef struct collected_stct
{
    aa_loss_report_entry_t entries[64];
    char channels[64][128];
    char sources[64][64];
    size_t count;
}
collected_t;

static void collect(void *clientd, const aa_loss_report_entry_t *entry)
{
    collected_t *c = clientd;
    AA_CHECK(c->count < 64);
    AA_CHECK(entry->channel_length < 128 && entry->source_length < 64);
    c->entries[c->count] = *entry;
    memcpy(c->channels[c->count], entry->channel, (size_t)entry->channel_length);
    c->channels[c->count][entry->channel_length] = '\0';
    memcpy(c->sources[c->count], entry->source, (size_t)entry->source_length);
    c->sources[c->count][entry->source_length] = '\0';
    c->count++;
}

static int64_t i64_at(const uint8_t *p)
{
    int64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static int32_t i32_at(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static uint8_t *new_buffer(size_t capacity)
{
    uint8_t *buffer = aligned_alloc(64, AA_ALIGN(capacity, (size_t)64));
    AA_CHECK(NULL != buffer);
    memset(buffer, 0, capacity);
    return buffer;
}

static void should_lay_out_an_entry_as_aerons_loss_report(void)
{
    uint8_t *buffer = new_buffer(CAPACITY);
    aa_loss_reporter_t reporter;
    AA_CHECK_EQ(aa_loss_reporter_init(&reporter, buffer, CAPACITY), 0);
    const char *channel = "aeron:udp?endpoint=127.0.0.1:40123";
    const char *source = "127.0.0.1:51000";
    int64_t offset = aa_loss_reporter_create_entry(
        &reporter, 1408, 1700000000123LL, -7, 1001, channel, strlen(channel), source, strlen(source));
    AA_CHECK_EQ(offset, 0);
    AA_CHECK_EQ(i64_at(buffer + 0), 1);               /* observation count */
    AA_CHECK_EQ(i64_at(buffer + 8), 1408);            /* total bytes lost */
    AA_CHECK_EQ(i64_at(buffer + 16), 1700000000123LL); /* first observation */
    AA_CHECK_EQ(i64_at(buffer + 24), 1700000000123LL); /* last observation */
    AA_CHECK_EQ(i32_at(buffer + 32), -7);             /* session id */
    AA_CHECK_EQ(i32_at(buffer + 36), 1001);           /* stream id */
    AA_CHECK_EQ(i32_at(buffer + 40), (int32_t)strlen(channel));
    AA_CHECK(0 == memcmp(buffer + 44, channel, strlen(channel)));
    /* the channel (34 bytes) padded to 36: the source's length 4-byte aligned, as Aeron's LossReport */
    AA_CHECK_EQ(strlen(channel), 34);
    AA_CHECK_EQ(buffer[78], 0);
    AA_CHECK_EQ(buffer[79], 0);
    const uint8_t *s = buffer + 44 + 36;
    AA_CHECK_EQ(i32_at(s), (int32_t)strlen(source));
    AA_CHECK(0 == memcmp(s + 4, source, strlen(source)));
    size_t length = 48 + 36 + strlen(source);   /* 99: the next entry on the next 64 */
    AA_CHECK_EQ(reporter.next_record_offset, 128);
    AA_CHECK(length > 64 && length <= 128);

    aa_loss_reporter_record_observation(&reporter, offset, 32, 1700000000999LL);
    aa_loss_reporter_record_observation(&reporter, offset, 96, 1700000001000LL);
    AA_CHECK_EQ(i64_at(buffer + 0), 3);
    AA_CHECK_EQ(i64_at(buffer + 8), 1408 + 32 + 96);
    AA_CHECK_EQ(i64_at(buffer + 16), 1700000000123LL);
    AA_CHECK_EQ(i64_at(buffer + 24), 1700000001000LL);

    int64_t second = aa_loss_reporter_create_entry(&reporter, 64, 5, 1, 2, "aeron:ipc", 9, "", 0);
    AA_CHECK_EQ(second, 128);
    collected_t c = { .count = 0 };
    AA_CHECK_EQ(aa_loss_report_read(buffer, CAPACITY, collect, &c), 2);
    AA_CHECK_EQ(c.entries[0].observation_count, 3);
    AA_CHECK_EQ(c.entries[0].total_bytes_lost, 1536);
    AA_CHECK_EQ(c.entries[0].first_observation_timestamp, 1700000000123LL);
    AA_CHECK_EQ(c.entries[0].last_observation_timestamp, 1700000001000LL);
    AA_CHECK_EQ(c.entries[0].session_id, -7);
    AA_CHECK_EQ(c.entries[0].stream_id, 1001);
    AA_CHECK(0 == strcmp(c.channels[0], channel));
    AA_CHECK(0 == strcmp(c.sources[0], source));
    AA_CHECK_EQ(c.entries[1].observation_count, 1);
    AA_CHECK(0 == strcmp(c.channels[1], "aeron:ipc"));
    AA_CHECK(0 == strcmp(c.sources[1], ""));
    free(buffer);
}

/* Entries as aeron_async wrote them before aligning the source's length: read too, one after the other
 * (an aligned entry between them), each at its own length. */
static void should_read_entries_with_the_source_length_unaligned(void)
{
    uint8_t *buffer = new_buffer(CAPACITY);
    const char *channel = "aeron:udp?endpoint=127.0.0.1:40123";   /* 34: not a multiple of 4 */
    const char *source = "127.0.0.1:51000";
    size_t offset = 0;
    for (int i = 0; i < 2; i++)
    {
        uint8_t *e = buffer + offset;
        int64_t one = 1, bytes = 100 + i;
        int32_t session = i, stream = 7, channel_length = 34, source_length = 15;
        memcpy(e + 8, &bytes, 8);
        memcpy(e + 32, &session, 4);
        memcpy(e + 36, &stream, 4);
        memcpy(e + 40, &channel_length, 4);
        memcpy(e + 44, channel, 34);
        memcpy(e + 78, &source_length, 4);     /* right after the channel */
        memcpy(e + 82, source, 15);
        memcpy(e, &one, 8);
        offset += 128;                          /* 97 bytes, on the next 64 */
        if (0 == i)
        {
            aa_loss_reporter_t reporter;
            AA_CHECK_EQ(aa_loss_reporter_init(&reporter, buffer, CAPACITY), 0);
            reporter.next_record_offset = offset;
            AA_CHECK_EQ(aa_loss_reporter_create_entry(&reporter, 5, 6, 9, 7, "aeron:ipc?alias=x", 17, "src", 3), 128);
            offset = reporter.next_record_offset;
        }
    }
    collected_t c = { .count = 0 };
    AA_CHECK_EQ(aa_loss_report_read(buffer, CAPACITY, collect, &c), 3);
    AA_CHECK(0 == strcmp(c.sources[0], source));
    AA_CHECK(0 == strcmp(c.channels[1], "aeron:ipc?alias=x"));
    AA_CHECK(0 == strcmp(c.sources[1], "src"));
    AA_CHECK(0 == strcmp(c.channels[2], channel));
    AA_CHECK(0 == strcmp(c.sources[2], source));
    AA_CHECK_EQ(c.entries[2].total_bytes_lost, 101);
    free(buffer);
}

static void should_refuse_an_entry_when_full_and_keep_the_others(void)
{
    uint8_t *buffer = new_buffer(256);
    aa_loss_reporter_t reporter;
    AA_CHECK_EQ(aa_loss_reporter_init(&reporter, buffer, 256), 0);
    char channel[100];
    memset(channel, 'c', sizeof(channel));
    /* 48 + 100 + 10 = 158 -> 192 */
    AA_CHECK_EQ(aa_loss_reporter_create_entry(&reporter, 1, 1, 1, 1, channel, 100, "10.0.0.1:1", 10), 0);
    AA_CHECK_EQ(aa_loss_reporter_create_entry(&reporter, 1, 1, 2, 1, channel, 100, "10.0.0.1:1", 10), -1);
    AA_CHECK_EQ(aa_errcode(), ENOMEM);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_LOSS_REPORT_BUFFER_LENGTH"));
    /* a small one still fits in the 64 bytes left: 48 + 9 + 0 */
    AA_CHECK_EQ(aa_loss_reporter_create_entry(&reporter, 1, 1, 3, 1, "aeron:ipc", 9, "", 0), 192);
    AA_CHECK_EQ(reporter.next_record_offset, 256);
    AA_CHECK_EQ(aa_loss_reporter_create_entry(&reporter, 1, 1, 4, 1, "", 0, "", 0), -1);
    collected_t c = { .count = 0 };
    AA_CHECK_EQ(aa_loss_report_read(buffer, 256, collect, &c), 2);
    AA_CHECK_EQ(c.entries[1].session_id, 3);
    free(buffer);
}

static void should_stop_reading_at_lengths_past_the_buffer(void)
{
    uint8_t *buffer = new_buffer(CAPACITY);
    aa_loss_reporter_t reporter;
    AA_CHECK_EQ(aa_loss_reporter_init(&reporter, buffer, CAPACITY), 0);
    AA_CHECK_EQ(aa_loss_reporter_create_entry(&reporter, 1, 1, 1, 1, "a", 1, "b", 1), 0);
    AA_CHECK_EQ(aa_loss_reporter_create_entry(&reporter, 1, 1, 2, 1, "a", 1, "b", 1), 64);
    collected_t c = { .count = 0 };
    int32_t bad = CAPACITY;
    memcpy(buffer + 64 + 40, &bad, sizeof(bad));            /* channel length past the end */
    AA_CHECK_EQ(aa_loss_report_read(buffer, CAPACITY, collect, &c), 1);
    bad = -1;
    memcpy(buffer + 64 + 40, &bad, sizeof(bad));
    c.count = 0;
    AA_CHECK_EQ(aa_loss_report_read(buffer, CAPACITY, collect, &c), 1);
    c.count = 0;
    AA_CHECK_EQ(aa_loss_report_read(buffer, 100, collect, &c), 1);   /* a file cut short */
    c.count = 0;
    AA_CHECK_EQ(aa_loss_report_read(buffer, 47, collect, &c), 0);
    c.count = 0;
    AA_CHECK_EQ(aa_loss_report_read(buffer, 0, collect, &c), 0);
    AA_CHECK_EQ(aa_loss_reporter_init(&reporter, buffer + 8, 64), -1);   /* misaligned */
    free(buffer);
}

/* A reader walking the report while the writer adds entries sees whole entries only. */
typedef struct writer_args_stct
{
    aa_loss_reporter_t *reporter;
    int entries;
}
writer_args_t;

static void *writer(void *arg)
{
    writer_args_t *args = arg;
    for (int i = 0; i < args->entries; i++)
    {
        char channel[64];
        int n = snprintf(channel, sizeof(channel), "aeron:udp?endpoint=10.0.0.%d:4000", i);
        int64_t offset = aa_loss_reporter_create_entry(args->reporter, 32, i, i, 7, channel, (size_t)n, "src:1", 5);
        AA_CHECK(offset >= 0);
        aa_loss_reporter_record_observation(args->reporter, offset, 32, i + 1);
    }
    return NULL;
}

static void check_whole(void *clientd, const aa_loss_report_entry_t *entry)
{
    char expected[64];
    int n = snprintf(expected, sizeof(expected), "aeron:udp?endpoint=10.0.0.%d:4000", entry->session_id);
    AA_CHECK_EQ(entry->channel_length, n);
    AA_CHECK(0 == memcmp(entry->channel, expected, (size_t)n));
    AA_CHECK_EQ(entry->source_length, 5);
    AA_CHECK(0 == memcmp(entry->source, "src:1", 5));
    AA_CHECK(entry->observation_count >= 1 && entry->observation_count <= 2);
    *(size_t *)clientd += 1;
}

static void should_let_a_reader_see_only_whole_entries_while_one_is_written(void)
{
    const int entries = 500;
    size_t capacity = (size_t)entries * 128;
    uint8_t *buffer = new_buffer(capacity);
    aa_loss_reporter_t reporter;
    AA_CHECK_EQ(aa_loss_reporter_init(&reporter, buffer, capacity), 0);
    writer_args_t args = { &reporter, entries };
    pthread_t thread;
    AA_CHECK_EQ(pthread_create(&thread, NULL, writer, &args), 0);
    size_t seen = 0;
    while (seen < (size_t)entries)
    {
        seen = 0;
        aa_loss_report_read(buffer, capacity, check_whole, &seen);
    }
    AA_CHECK_EQ(pthread_join(thread, NULL), 0);
    free(buffer);
}

int main(void)
{
    AA_RUN(should_lay_out_an_entry_as_aerons_loss_report);
    AA_RUN(should_read_entries_with_the_source_length_unaligned);
    AA_RUN(should_refuse_an_entry_when_full_and_keep_the_others);
    AA_RUN(should_stop_reading_at_lengths_past_the_buffer);
    AA_RUN(should_let_a_reader_see_only_whole_entries_while_one_is_written);
    return 0;
}
