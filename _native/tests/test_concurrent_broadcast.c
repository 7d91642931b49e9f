/* Broadcast buffer: one transmitter, several receivers; a slow receiver is lapped but never
 * delivers a corrupt record. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aa_test.h"
#include "concurrent/aa_broadcast.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

#define CAPACITY (16 * 1024)
#define MESSAGES 200000
#define RECEIVERS 3

static volatile int transmitting = 1;

typedef struct
{
    uint8_t *buffer;
    int slow;
    int64_t received;
    int64_t last_seq;
    int64_t lapped;
}
receiver_ctx_t;

static void on_message(int32_t type, const void *buffer, size_t length, void *clientd)
{
    receiver_ctx_t *ctx = clientd;
    uint64_t words[16];
    AA_CHECK(length >= 16 && length <= sizeof(words) && 0 == length % 8);
    memcpy(words, buffer, length);
    int64_t seq = (int64_t)words[0];
    AA_CHECK_EQ(type, 1 + (int32_t)(seq % 5));
    AA_CHECK_EQ(length, (size_t)(2 + seq % 14) * 8);
    for (size_t i = 1; i < length / 8; i++)
    {
        AA_CHECK_EQ(words[i], (uint64_t)seq * 11400714819323198485ull + i);
    }
    AA_CHECK(seq > ctx->last_seq);
    ctx->last_seq = seq;
    ctx->received++;
}

static void *receive(void *arg)
{
    receiver_ctx_t *ctx = arg;
    aa_broadcast_receiver_t r;
    AA_CHECK_EQ(aa_broadcast_receiver_init(&r, ctx->buffer, CAPACITY + AA_BROADCAST_BUFFER_TRAILER_LENGTH), 0);
    r.next_record = 0;
    r.cursor = 0;
    int64_t deadline = aa_nano_clock() + 60LL * 1000000000LL;
    while (ctx->last_seq < MESSAGES - 1)
    {
        aa_broadcast_receiver_receive(&r, on_message, ctx);
        if (ctx->slow)
        {
            struct timespec ts = { 0, 20000 };
            nanosleep(&ts, NULL);
        }
        AA_CHECK(aa_nano_clock() < deadline);
    }
    ctx->lapped = r.lapped_count;
    aa_broadcast_receiver_close(&r);
    return NULL;
}

static void should_broadcast_to_receivers_and_lap_slow_ones(void)
{
    uint8_t *buffer = calloc(1, CAPACITY + AA_BROADCAST_BUFFER_TRAILER_LENGTH);
    aa_broadcast_transmitter_t t;
    AA_CHECK_EQ(aa_broadcast_transmitter_init(&t, buffer, CAPACITY + AA_BROADCAST_BUFFER_TRAILER_LENGTH), 0);
    pthread_t threads[RECEIVERS];
    receiver_ctx_t ctx[RECEIVERS];
    for (int i = 0; i < RECEIVERS; i++)
    {
        ctx[i] = (receiver_ctx_t){ buffer, i == RECEIVERS - 1, 0, -1, 0 };
        pthread_create(&threads[i], NULL, receive, &ctx[i]);
    }
    uint64_t words[16];
    for (int64_t seq = 0; seq < MESSAGES; seq++)
    {
        size_t n = (size_t)(2 + seq % 14);
        words[0] = (uint64_t)seq;
        for (size_t i = 1; i < n; i++)
        {
            words[i] = (uint64_t)seq * 11400714819323198485ull + i;
        }
        AA_CHECK_EQ(aa_broadcast_transmitter_transmit(&t, 1 + (int32_t)(seq % 5), words, n * 8), 0);
        if (0 == seq % 64)
        {
            sched_yield();
        }
    }
    for (int i = 0; i < RECEIVERS; i++)
    {
        pthread_join(threads[i], NULL);
        AA_CHECK(ctx[i].received > 0);
        AA_CHECK_EQ(ctx[i].last_seq, MESSAGES - 1);
    }
    AA_CHECK(ctx[RECEIVERS - 1].lapped > 0);
    AA_CHECK(ctx[RECEIVERS - 1].received < MESSAGES);
    free(buffer);
}

static void should_reject_oversized_and_start_at_tail(void)
{
    uint8_t *buffer = calloc(1, CAPACITY + AA_BROADCAST_BUFFER_TRAILER_LENGTH);
    aa_broadcast_transmitter_t t;
    aa_broadcast_transmitter_init(&t, buffer, CAPACITY + AA_BROADCAST_BUFFER_TRAILER_LENGTH);
    AA_CHECK_EQ(aa_broadcast_transmitter_transmit(&t, 1, buffer, CAPACITY / 8 + 1), -1);
    uint64_t w[2] = { 0, 11400714819323198485ull + 1 };
    AA_CHECK_EQ(aa_broadcast_transmitter_transmit(&t, 1, w, 16), 0);
    aa_broadcast_receiver_t r;
    aa_broadcast_receiver_init(&r, buffer, CAPACITY + AA_BROADCAST_BUFFER_TRAILER_LENGTH);
    receiver_ctx_t ctx = { buffer, 0, 0, -1, 0 };
    AA_CHECK_EQ(aa_broadcast_receiver_receive(&r, on_message, &ctx), 0);
    w[0] = 14;
    w[1] = 14 * 11400714819323198485ull + 1;
    AA_CHECK_EQ(aa_broadcast_transmitter_transmit(&t, 1 + 14 % 5, w, 16), 0);
    AA_CHECK_EQ(aa_broadcast_receiver_receive(&r, on_message, &ctx), 1);
    AA_CHECK_EQ(ctx.last_seq, 14);
    aa_broadcast_receiver_close(&r);
    free(buffer);
}

/* What another writer of the CnC file puts in the to-clients buffer is refused, never read past
 * (docs/security.md, "The CnC file"). */
static void should_refuse_records_no_transmitter_writes(void)
{
    const struct { int32_t length; int32_t type; } forged[] = {
        { 0x7FFFFF00, 1 }, { 4, 1 }, { 0, 0 }, { 24, 0 }, { 24, -9 }, { 64, AA_RB_PADDING_MSG_TYPE_ID },
        { 8 + CAPACITY / 8 + 8, 1 },
    };
    for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++)
    {
        uint8_t *buffer = calloc(1, CAPACITY + AA_BROADCAST_BUFFER_TRAILER_LENGTH);
        aa_broadcast_transmitter_t t;
        aa_broadcast_transmitter_init(&t, buffer, CAPACITY + AA_BROADCAST_BUFFER_TRAILER_LENGTH);
        aa_broadcast_receiver_t r;
        aa_broadcast_receiver_init(&r, buffer, CAPACITY + AA_BROADCAST_BUFFER_TRAILER_LENGTH);
        uint64_t w[2] = { 0, 1 };
        AA_CHECK_EQ(aa_broadcast_transmitter_transmit(&t, 1, w, 16), 0);
        int64_t tail = *t.tail;
        memcpy(buffer + tail, &forged[i].length, 4);
        memcpy(buffer + tail + 4, &forged[i].type, 4);
        *t.latest = tail;
        *t.tail_intent = tail + 32;
        *t.tail = tail + 32;
        receiver_ctx_t ctx = { buffer, 0, 0, -1, 0 };
        AA_CHECK_EQ(aa_broadcast_receiver_receive(&r, on_message, &ctx), -1);
        AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_DRIVER_CORRUPT);
        AA_CHECK_EQ(ctx.received, 1);
        aa_broadcast_receiver_close(&r);
        free(buffer);
    }
}

int main(void)
{
    AA_RUN(should_reject_oversized_and_start_at_tail);
    AA_RUN(should_refuse_records_no_transmitter_writes);
    AA_RUN(should_broadcast_to_receivers_and_lap_slow_ones);
    return 0;
}
