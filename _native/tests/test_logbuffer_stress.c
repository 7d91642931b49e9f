/* Concurrent appenders under load: 4 writer threads append 200,000 messages each (some
 * fragmented) into one log with 64 KiB terms, rotating as they go, held back by a publisher limit
 * half a term ahead of a reader that reassembles, verifies and cleans behind itself. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "aa_test_log.h"
#include "logbuffer/aa_term.h"
#include "util/aa_clock.h"

#define TERM (64 * 1024)
#define WRITERS 4
#define PER_WRITER 200000
#define MAX_PAYLOAD 1376
#define INITIAL_TERM_ID 2147483600

typedef struct
{
    aa_mapped_log_t log;
    volatile int64_t limit;
    int32_t bits;
}
shared_t;

typedef struct
{
    shared_t *shared;
    uint32_t id;
}
writer_t;

static size_t message_size(uint32_t seq)
{
    uint32_t x = seq * 2654435761u;
    return (x % 16 == 0) ? 1400 + x % 2000 : 12 + x % 200;
}

static uint8_t expected_byte(uint32_t id, uint32_t seq, size_t i)
{
    return (uint8_t)(id * 31 + seq * 7 + i);
}

static void *write_messages(void *arg)
{
    writer_t *w = arg;
    shared_t *s = w->shared;
    aa_logbuffer_metadata_t *m = s->log.metadata;
    uint8_t payload[4096];
    int64_t deadline = aa_nano_clock() + 120LL * 1000000000LL;
    for (uint32_t seq = 0; seq < PER_WRITER; seq++)
    {
        size_t size = message_size(seq);
        memcpy(payload, &w->id, 4);
        memcpy(payload + 4, &seq, 4);
        for (size_t i = 8; i < size; i++)
        {
            payload[i] = expected_byte(w->id, seq, i);
        }
        aa_iovec_t iov = { payload, size };
        for (;;)
        {
            AA_CHECK(aa_nano_clock() < deadline);
            int32_t term_count = aa_logbuffer_active_term_count(m);
            int32_t index = aa_index_by_term_count(term_count);
            int64_t raw_tail = aa_get_int64_volatile(&m->term_tail_counters[index]);
            int32_t term_id = aa_term_id(raw_tail);
            if (term_count != (int32_t)((uint32_t)term_id - (uint32_t)INITIAL_TERM_ID))
            {
                continue;
            }
            int64_t position = aa_compute_position(term_id, aa_term_offset(raw_tail, TERM), s->bits, INITIAL_TERM_ID);
            if (position >= aa_get_int64_acquire(&s->limit))
            {
                sched_yield();
                continue;
            }
            int32_t appended_term_id;
            int32_t result = size <= MAX_PAYLOAD ?
                aa_term_appender_append_unfragmented(s->log.term_buffers[index], TERM, &m->term_tail_counters[index],
                    m->default_header, &iov, 1, size, seq, &appended_term_id) :
                aa_term_appender_append_fragmented(s->log.term_buffers[index], TERM, &m->term_tail_counters[index],
                    m->default_header, &iov, 1, size, MAX_PAYLOAD, seq, &appended_term_id);
            if (result > 0)
            {
                break;
            }
            aa_logbuffer_rotate_log(m, term_count, appended_term_id);
        }
    }
    return NULL;
}

typedef struct
{
    uint32_t next[WRITERS];
    int64_t total;
    uint8_t assembly[4096];
    size_t assembled;
    bool assembling;
}
reader_t;

static void verify_message(reader_t *r, const uint8_t *data, size_t length)
{
    uint32_t id, seq;
    AA_CHECK(length >= 8);
    memcpy(&id, data, 4);
    memcpy(&seq, data + 4, 4);
    AA_CHECK(id < WRITERS);
    AA_CHECK_EQ(seq, r->next[id]);
    AA_CHECK_EQ(length, message_size(seq));
    for (size_t i = 8; i < length; i++)
    {
        AA_CHECK_EQ(data[i], expected_byte(id, seq, i));
    }
    r->next[id]++;
    r->total++;
}

static void on_fragment(void *clientd, const uint8_t *payload, size_t length, const aa_data_header_t *header)
{
    reader_t *r = clientd;
    uint8_t flags = header->frame_header.flags;
    if (AA_DATA_HEADER_UNFRAGMENTED == (flags & AA_DATA_HEADER_UNFRAGMENTED))
    {
        AA_CHECK(!r->assembling);
        verify_message(r, payload, length);
        return;
    }
    if (flags & AA_DATA_HEADER_BEGIN_FLAG)
    {
        AA_CHECK(!r->assembling);
        r->assembling = true;
        r->assembled = 0;
    }
    AA_CHECK(r->assembling && r->assembled + length <= sizeof(r->assembly));
    memcpy(r->assembly + r->assembled, payload, length);
    r->assembled += length;
    if (flags & AA_DATA_HEADER_END_FLAG)
    {
        r->assembling = false;
        verify_message(r, r->assembly, r->assembled);
    }
}

static void clean(shared_t *s, int64_t *clean_position, int64_t up_to)
{
    while (*clean_position < up_to)
    {
        int32_t index = aa_index_by_position(*clean_position, s->bits);
        int32_t offset = (int32_t)(*clean_position & (TERM - 1));
        int64_t n = TERM - offset < up_to - *clean_position ? TERM - offset : up_to - *clean_position;
        memset(s->log.term_buffers[index] + offset, 0, (size_t)n);
        *clean_position += n;
    }
}

static void should_append_concurrently_with_rotation(void)
{
    shared_t s;
    aa_logbuffer_init_params_t p = {
        .initial_term_id = INITIAL_TERM_ID, .active_term_id = INITIAL_TERM_ID, .term_length = TERM, .mtu_length = 1408,
        .page_size = 4096, .session_id = 1, .stream_id = 2,
    };
    uint8_t *memory = test_log_new(&s.log, &p);
    s.bits = aa_position_bits_to_shift(TERM);
    s.limit = TERM / 2;

    pthread_t threads[WRITERS];
    writer_t writers[WRITERS];
    for (uint32_t i = 0; i < WRITERS; i++)
    {
        writers[i] = (writer_t){ &s, i };
        pthread_create(&threads[i], NULL, write_messages, &writers[i]);
    }
    reader_t *r = calloc(1, sizeof(reader_t));
    int64_t position = 0;
    int64_t clean_position = 0;
    int64_t deadline = aa_nano_clock() + 120LL * 1000000000LL;
    while (r->total < (int64_t)WRITERS * PER_WRITER)
    {
        AA_CHECK(aa_nano_clock() < deadline);
        int32_t index = aa_index_by_position(position, s.bits);
        int32_t offset = (int32_t)(position & (TERM - 1));
        int32_t fragments = 0;
        int32_t new_offset = aa_term_reader_read(s.log.term_buffers[index], offset, TERM, on_fragment, r, 64, &fragments);
        position += new_offset - offset;
        if (position - TERM > clean_position)
        {
            clean(&s, &clean_position, position - TERM);
        }
        aa_put_int64_release(&s.limit, position + TERM / 2);
        if (0 == fragments && new_offset == offset)
        {
            sched_yield();
        }
    }
    for (int i = 0; i < WRITERS; i++)
    {
        pthread_join(threads[i], NULL);
        AA_CHECK_EQ(r->next[i], PER_WRITER);
    }
    AA_CHECK(aa_logbuffer_active_term_count(s.log.metadata) > 100);
    free(r);
    free(memory);
}

int main(void)
{
    AA_RUN(should_append_concurrently_with_rotation);
    return 0;
}
