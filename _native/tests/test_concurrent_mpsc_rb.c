/* Many-to-one ring buffer: unit behaviour and a 4-producer stress test with wrap-around. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aa_test.h"
#include "concurrent/aa_mpsc_rb.h"
#include "util/aa_clock.h"

#define CAPACITY (64 * 1024)
#define PRODUCERS 4
#define PER_PRODUCER 200000

static uint8_t *new_buffer(void)
{
    uint8_t *b = aligned_alloc(64, CAPACITY + AA_RB_TRAILER_LENGTH);
    memset(b, 0, CAPACITY + AA_RB_TRAILER_LENGTH);
    return b;
}

typedef struct
{
    int32_t last_type;
    size_t last_length;
    uint8_t last[256];
    int count;
}
capture_t;

static void capture(int32_t type, const void *buffer, size_t length, void *clientd)
{
    capture_t *c = clientd;
    c->last_type = type;
    c->last_length = length;
    memcpy(c->last, buffer, length < sizeof(c->last) ? length : sizeof(c->last));
    c->count++;
}

static void should_write_and_read(void)
{
    uint8_t *b = new_buffer();
    aa_mpsc_rb_t rb;
    AA_CHECK_EQ(aa_mpsc_rb_init(&rb, b, CAPACITY + AA_RB_TRAILER_LENGTH), 0);
    AA_CHECK_EQ(rb.max_message_length, CAPACITY / 8);
    AA_CHECK_EQ(aa_mpsc_rb_write(&rb, 7, "hello", 5), 0);
    capture_t c = { 0 };
    AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 10), 1);
    AA_CHECK_EQ(c.last_type, 7);
    AA_CHECK_EQ(c.last_length, 5);
    AA_CHECK(0 == memcmp(c.last, "hello", 5));
    AA_CHECK_EQ(aa_mpsc_rb_consumer_position(&rb), 16);
    AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 10), 0);
    AA_CHECK_EQ(aa_mpsc_rb_write(&rb, 7, b, CAPACITY / 8 + 1), -1);
    AA_CHECK_EQ(aa_mpsc_rb_next_correlation_id(&rb), 0);
    AA_CHECK_EQ(aa_mpsc_rb_next_correlation_id(&rb), 1);
    free(b);
}

static void should_reject_bad_capacity(void)
{
    uint8_t *b = new_buffer();
    aa_mpsc_rb_t rb;
    AA_CHECK_EQ(aa_mpsc_rb_init(&rb, b, 1000 + AA_RB_TRAILER_LENGTH), -1);
    free(b);
}

static void should_fill_then_refuse(void)
{
    uint8_t *b = new_buffer();
    aa_mpsc_rb_t rb;
    aa_mpsc_rb_init(&rb, b, CAPACITY + AA_RB_TRAILER_LENGTH);
    uint8_t msg[1016];
    memset(msg, 1, sizeof(msg));
    int written = 0;
    while (0 == aa_mpsc_rb_write(&rb, 1, msg, sizeof(msg)))
    {
        written++;
    }
    AA_CHECK_EQ(written, CAPACITY / 1024);
    capture_t c = { 0 };
    AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 1000), (size_t)written);
    AA_CHECK_EQ(aa_mpsc_rb_write(&rb, 1, msg, sizeof(msg)), 0);
    free(b);
}

static void should_unblock_dead_producer(void)
{
    uint8_t *b = new_buffer();
    aa_mpsc_rb_t rb;
    aa_mpsc_rb_init(&rb, b, CAPACITY + AA_RB_TRAILER_LENGTH);
    int32_t index = aa_mpsc_rb_try_claim(&rb, 3, 40);
    AA_CHECK(index > 0);
    AA_CHECK_EQ(aa_mpsc_rb_write(&rb, 4, "after", 5), 0);
    capture_t c = { 0 };
    AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 10), 0);
    AA_CHECK(aa_mpsc_rb_unblock(&rb));
    AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 10), 1);
    AA_CHECK_EQ(c.last_type, 4);
    AA_CHECK(!aa_mpsc_rb_unblock(&rb));
    free(b);
}


/* A producer of the file, not of ours: claims `bytes` by moving the tail as a client would and writes
 * the header it likes (docs/security.md, "The CnC file"). */
static size_t forge(aa_mpsc_rb_t *rb, int32_t length, int32_t type, int64_t client_id, size_t bytes)
{
    int64_t tail = *rb->tail;
    size_t index = (size_t)tail & (rb->capacity - 1);
    memcpy(rb->buffer + index + 4, &type, 4);
    memcpy(rb->buffer + index + 8, &client_id, 8);
    memcpy(rb->buffer + index, &length, 4);
    *rb->tail = tail + (int64_t)bytes;
    return index;
}

typedef struct
{
    int count;
    aa_rb_invalid_record_t last;
}
invalid_t;

static void on_invalid(const aa_rb_invalid_record_t *record, void *clientd)
{
    invalid_t *v = clientd;
    v->count++;
    v->last = *record;
}

static void should_skip_impossible_headers_and_stay_usable(void)
{
    uint8_t *b = new_buffer();
    aa_mpsc_rb_t rb;
    aa_mpsc_rb_init(&rb, b, CAPACITY + AA_RB_TRAILER_LENGTH);
    invalid_t v = { 0 };
    aa_mpsc_rb_on_invalid(&rb, on_invalid, &v);
    capture_t c = { 0 };
    const int32_t lengths[] = { 0x7FFFFF00, 3, CAPACITY + 8, 64 };
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++)
    {
        AA_CHECK_EQ(aa_mpsc_rb_write(&rb, 5, "before", 6), 0);
        /* 64 bytes claimed, but 64 past a tail that only moved 32 is past the tail */
        forge(&rb, lengths[i], 6, 4242, 32);
        AA_CHECK_EQ(aa_mpsc_rb_write(&rb, 7, "after", 5), 0);
        int before = c.count;
        aa_mpsc_rb_read(&rb, capture, &c, 10);
        AA_CHECK_EQ(c.count, before + 1);    /* the record before it; the one after is claimed before the tail */
        AA_CHECK_EQ(v.count, (int)i + 1);
        AA_CHECK_EQ(v.last.client_id, lengths[i] >= 16 ? 4242 : AA_RB_NO_CLIENT_ID);
        AA_CHECK_EQ(aa_mpsc_rb_consumer_position(&rb), aa_mpsc_rb_producer_position(&rb));
        AA_CHECK_EQ(aa_mpsc_rb_write(&rb, 8, "next", 4), 0);
        AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 10), 1);
        AA_CHECK_EQ(c.last_type, 8);
    }
    for (size_t i = 0; i < CAPACITY; i++)
    {
        AA_CHECK(0 == b[i]);    /* everything skipped was zeroed */
    }
    free(b);
}

static void should_skip_bad_types_by_length_and_recover_a_wild_tail(void)
{
    uint8_t *b = new_buffer();
    aa_mpsc_rb_t rb;
    aa_mpsc_rb_init(&rb, b, CAPACITY + AA_RB_TRAILER_LENGTH);
    invalid_t v = { 0 };
    aa_mpsc_rb_on_invalid(&rb, on_invalid, &v);
    capture_t c = { 0 };
    forge(&rb, 24, 0, 99, 24);
    forge(&rb, 24, -7, 98, 24);
    AA_CHECK_EQ(aa_mpsc_rb_write(&rb, 3, "ok", 2), 0);
    AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 10), 1);
    AA_CHECK_EQ(c.last_type, 3);
    AA_CHECK_EQ(v.count, 2);
    AA_CHECK_EQ(v.last.client_id, 98);

    /* the shared head is the consumer's: a write to it is put back */
    int64_t head = aa_mpsc_rb_consumer_position(&rb);
    *rb.head = head + 12345;
    AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 10), 0);
    AA_CHECK_EQ(aa_mpsc_rb_consumer_position(&rb), head);

    /* a misaligned or runaway tail is taken back to the consumer */
    const int64_t tails[] = { head + 3, head + 2 * CAPACITY, head - 64 };
    for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++)
    {
        *rb.tail = tails[i];
        aa_mpsc_rb_read(&rb, capture, &c, 10);
        AA_CHECK_EQ(aa_mpsc_rb_producer_position(&rb), head);
        AA_CHECK_EQ(aa_mpsc_rb_write(&rb, 9, "again", 5), 0);
        AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 10), 1);
        AA_CHECK_EQ(c.last_type, 9);
        head = aa_mpsc_rb_consumer_position(&rb);
    }
    AA_CHECK_EQ(v.count, 5);

    /* a header left in free space (no claim behind it) is cleared, not read */
    int32_t garbage = 40;
    memcpy(b + ((size_t)head & (CAPACITY - 1)), &garbage, 4);
    AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 10), 0);
    AA_CHECK_EQ(v.count, 6);
    AA_CHECK_EQ(aa_mpsc_rb_write(&rb, 10, "last", 4), 0);
    AA_CHECK_EQ(aa_mpsc_rb_read(&rb, capture, &c, 10), 1);
    AA_CHECK_EQ(c.last_type, 10);

    /* a stuck record of length INT32_MIN is unblocked into padding the read then skips */
    forge(&rb, INT32_MIN, 4, 97, 32);
    AA_CHECK(aa_mpsc_rb_unblock(&rb));
    aa_mpsc_rb_read(&rb, capture, &c, 10);
    AA_CHECK_EQ(aa_mpsc_rb_consumer_position(&rb), aa_mpsc_rb_producer_position(&rb));
    free(b);
}

typedef struct
{
    aa_mpsc_rb_t *rb;
    int32_t id;
}
producer_t;

static void *produce(void *arg)
{
    producer_t *p = arg;
    uint32_t msg[8];
    int64_t deadline = aa_nano_clock() + 60LL * 1000000000LL;
    for (uint32_t seq = 0; seq < PER_PRODUCER; seq++)
    {
        uint32_t words = 2 + seq % 6;
        msg[0] = (uint32_t)p->id;
        msg[1] = seq;
        for (uint32_t w = 2; w < words; w++)
        {
            msg[w] = seq * 2654435761u + w;
        }
        while (aa_mpsc_rb_write(p->rb, 1 + p->id, msg, words * sizeof(uint32_t)) < 0)
        {
            AA_CHECK(aa_nano_clock() < deadline);
        }
    }
    return NULL;
}

typedef struct
{
    uint32_t next[PRODUCERS];
    int64_t total;
}
verify_t;

static void verify(int32_t type, const void *buffer, size_t length, void *clientd)
{
    verify_t *v = clientd;
    uint32_t msg[8];
    AA_CHECK(length >= 8 && length <= sizeof(msg) && 0 == length % 4);
    memcpy(msg, buffer, length);
    uint32_t id = msg[0];
    AA_CHECK(id < PRODUCERS);
    AA_CHECK_EQ(type, 1 + (int32_t)id);
    AA_CHECK_EQ(msg[1], v->next[id]);
    AA_CHECK_EQ(length, (2 + msg[1] % 6) * 4);
    for (uint32_t w = 2; w < length / 4; w++)
    {
        AA_CHECK_EQ(msg[w], msg[1] * 2654435761u + w);
    }
    v->next[id]++;
    v->total++;
}

static void should_deliver_every_message_in_order_from_many_producers(void)
{
    uint8_t *b = new_buffer();
    aa_mpsc_rb_t rb;
    aa_mpsc_rb_init(&rb, b, CAPACITY + AA_RB_TRAILER_LENGTH);
    pthread_t threads[PRODUCERS];
    producer_t producers[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++)
    {
        producers[i].rb = &rb;
        producers[i].id = i;
        pthread_create(&threads[i], NULL, produce, &producers[i]);
    }
    verify_t v = { { 0 }, 0 };
    int64_t deadline = aa_nano_clock() + 60LL * 1000000000LL;
    while (v.total < (int64_t)PRODUCERS * PER_PRODUCER)
    {
        aa_mpsc_rb_read(&rb, verify, &v, 100);
        AA_CHECK(aa_nano_clock() < deadline);
    }
    for (int i = 0; i < PRODUCERS; i++)
    {
        pthread_join(threads[i], NULL);
        AA_CHECK_EQ(v.next[i], PER_PRODUCER);
    }
    AA_CHECK_EQ(aa_mpsc_rb_size(&rb), 0);
    free(b);
}

int main(void)
{
    AA_RUN(should_write_and_read);
    AA_RUN(should_reject_bad_capacity);
    AA_RUN(should_fill_then_refuse);
    AA_RUN(should_unblock_dead_producer);
    AA_RUN(should_skip_impossible_headers_and_stay_usable);
    AA_RUN(should_skip_bad_types_by_length_and_recover_a_wild_tail);
    AA_RUN(should_deliver_every_message_in_order_from_many_producers);
    return 0;
}
