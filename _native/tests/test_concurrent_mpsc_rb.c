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
    AA_RUN(should_deliver_every_message_in_order_from_many_producers);
    return 0;
}
