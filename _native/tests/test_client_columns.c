/* Columnar polling (src/client/aa_columns.c) on a log in memory: whole messages into column
 * buffers, fragmented ones reassembled, start positions, the from/to range, batches that fill up
 * inside a message, a data buffer too small for one message, padding at the term's end, and a batch
 * or range that ends exactly at a term's end. */
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "aa_test_log.h"
#include "aeron_async.h"
#include "client/aa_client.h"
#include "logbuffer/aa_term.h"

#define TERM TEST_IMAGE_TERM_LENGTH
#define INITIAL_TERM_ID TEST_IMAGE_INITIAL_TERM_ID
#define MAX_PAYLOAD TEST_IMAGE_MAX_PAYLOAD
#define ROWS 64

typedef struct
{
    uint8_t data[65536];
    int32_t offsets[ROWS + 1];
    int64_t positions[ROWS];
    int64_t reserved_values[ROWS];
    aa_columns_t columns;
}
test_columns_t;

static void new_columns(test_columns_t *c, int64_t data_capacity, int32_t row_capacity, int64_t from, int64_t to)
{
    memset(c, 0, sizeof(*c));
    c->columns = (aa_columns_t){
        .data = c->data, .offsets = c->offsets, .positions = c->positions, .reserved_values = c->reserved_values,
        .data_capacity = data_capacity, .row_capacity = row_capacity, .from_position = from, .to_position = to,
    };
    AA_CHECK_EQ(aa_columns_reset(&c->columns), 0);
}

/* Appends a message of `length` bytes, byte i = tag + i, with reserved value `tag`; returns its
 * start position, or -1 when it tripped the term end (padding written). */
static int64_t append(test_image_t *t, size_t length, uint8_t tag)
{
    uint8_t data[8192];
    for (size_t i = 0; i < length; i++)
    {
        data[i] = (uint8_t)(tag + i);
    }
    int64_t start = t->log.metadata->term_tail_counters[0] & 0xFFFFFFFF;
    int32_t r = test_image_append(t, data, length, tag);
    return r > 0 ? start : -1;
}

/* The end of a message of `length` bytes appended at `start`: its fragments' aligned frames. */
static int64_t message_end(int64_t start, size_t length)
{
    int64_t end = start;
    size_t left = length;
    do
    {
        size_t payload = left < TEST_IMAGE_MAX_PAYLOAD ? left : TEST_IMAGE_MAX_PAYLOAD;
        end += (int64_t)((AA_DATA_HEADER_LENGTH + payload + 31) & ~(size_t)31);
        left -= payload;
    }
    while (left > 0);
    return end;
}

/* Row `row` holds the message of `length` bytes and reserved value `tag` appended at `start`; its
 * position is the message's end (as a polled message's position: docs/spark.md, Reading). */
static void check_message(test_columns_t *c, int32_t row, size_t length, uint8_t tag, int64_t start)
{
    AA_CHECK_EQ(c->offsets[row + 1] - c->offsets[row], (int32_t)length);
    AA_CHECK_EQ(c->positions[row], message_end(start, length));
    AA_CHECK_EQ(c->reserved_values[row], tag);
    for (size_t i = 0; i < length; i++)
    {
        AA_CHECK_EQ(c->data[c->offsets[row] + (int32_t)i], (uint8_t)(tag + i));
    }
}

static void messages_fill_the_columns_with_end_positions(void)
{
    test_image_t t;
    test_image_init(&t, 3);
    size_t sizes[5] = { 1, 100, 5000, 0, 3000 }; /* two of them fragmented */
    int64_t starts[5];
    for (int i = 0; i < 5; i++)
    {
        starts[i] = append(&t, sizes[i], (uint8_t)(10 * i + 1));
    }
    test_columns_t c;
    new_columns(&c, sizeof(c.data), ROWS, 0, INT64_MAX);
    AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), 5);
    AA_CHECK_EQ(c.columns.rows, 5);
    for (int i = 0; i < 5; i++)
    {
        check_message(&c, i, sizes[i], (uint8_t)(10 * i + 1), starts[i]);
    }
    AA_CHECK_EQ(c.columns.data_length, 1 + 100 + 5000 + 0 + 3000);
    AA_CHECK(0 == c.columns.full);
    AA_CHECK_EQ(t.subscriber_position, c.columns.position);
    AA_CHECK(0 == c.columns.done);
    AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), 0); /* nothing new */
    test_image_free(&t);
}

static void the_range_skips_earlier_messages_and_ends_at_its_limit(void)
{
    test_image_t t;
    test_image_init(&t, 3);
    int64_t starts[6];
    for (int i = 0; i < 6; i++)
    {
        starts[i] = append(&t, i == 2 ? 4000 : 50, (uint8_t)(i + 1));
    }
    /* from inside message 1, to inside message 4: messages 2 and 3 (start in [from, to)) */
    test_columns_t c;
    new_columns(&c, sizeof(c.data), ROWS, starts[1] + 32, starts[4] + 32);
    AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), 3);
    AA_CHECK_EQ(c.columns.rows, 3);
    check_message(&c, 0, 4000, 3, starts[2]);
    check_message(&c, 1, 50, 4, starts[3]);
    check_message(&c, 2, 50, 5, starts[4]);
    /* message 4 starts at starts[4] < starts[4] + 32: it is in; done once past to, between messages */
    AA_CHECK(1 == c.columns.done);
    AA_CHECK_EQ(t.subscriber_position, starts[5]);
    test_image_free(&t);
}

static void a_full_batch_stops_at_a_message_boundary(void)
{
    test_image_t t;
    test_image_init(&t, 3);
    int64_t starts[3];
    starts[0] = append(&t, 2000, 1);
    starts[1] = append(&t, 6000, 2); /* does not fit beside the first in 7000 bytes */
    starts[2] = append(&t, 10, 3);
    test_columns_t c;
    new_columns(&c, 7000, ROWS, 0, INT64_MAX);
    AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), 1);
    AA_CHECK(1 == c.columns.full);
    check_message(&c, 0, 2000, 1, starts[0]);
    AA_CHECK_EQ(t.subscriber_position, starts[1]); /* its copied fragments dropped, read again whole */
    AA_CHECK_EQ(c.columns.data_length, 2000);
    AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), 0);
    AA_CHECK_EQ(aa_columns_reset(&c.columns), 0);
    AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), 2);
    check_message(&c, 0, 6000, 2, starts[1]);
    check_message(&c, 1, 10, 3, starts[2]);
    /* the row capacity bounds a poll too */
    int64_t more[3];
    for (int i = 0; i < 3; i++)
    {
        more[i] = append(&t, 8, (uint8_t)(20 + i));
    }
    new_columns(&c, sizeof(c.data), 2, 0, INT64_MAX);
    AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), 2);
    AA_CHECK(1 == c.columns.full);
    AA_CHECK_EQ(t.subscriber_position, more[2]);
    AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), 0);
    test_image_free(&t);
}

static void a_message_larger_than_the_data_buffer_asks_for_more(void)
{
    test_image_t t;
    test_image_init(&t, 3);
    append(&t, 5000, 7);
    test_columns_t c;
    new_columns(&c, 3000, ROWS, 0, INT64_MAX);
    AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), -2);
    AA_CHECK(c.columns.required > 3000);
    AA_CHECK_EQ(c.columns.rows, 0);
    AA_CHECK_EQ(t.subscriber_position, 0);
    new_columns(&c, 5000, ROWS, 0, INT64_MAX);
    AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), 1);
    check_message(&c, 0, 5000, 7, 0);
    /* bad buffers are refused */
    c.columns.data = NULL;
    AA_CHECK_EQ(aa_columns_reset(&c.columns), -1);
    test_image_free(&t);
}

static void padding_ends_the_term_and_a_torn_start_is_skipped(void)
{
    test_image_t t;
    test_image_init(&t, 3);
    int count = 0;
    while (append(&t, 1000, 9) >= 0)
    {
        count++;
    }
    test_columns_t c;
    new_columns(&c, sizeof(c.data), ROWS, 0, INT64_MAX);
    int32_t total = 0;
    int32_t n;
    while ((n = aa_columns_poll(&t.image, &c.columns)) > 0)
    {
        total += n;
        AA_CHECK_EQ(aa_columns_reset(&c.columns), 0);
    }
    AA_CHECK_EQ(total, count);
    AA_CHECK_EQ(t.subscriber_position, TERM); /* the padding consumed */
    /* a read that begins on a middle fragment skips the rest of that message */
    test_image_t u;
    test_image_init(&u, 3);
    append(&u, 4000, 1);
    int64_t second = append(&u, 20, 2);
    u.subscriber_position = AA_ALIGN(MAX_PAYLOAD + 32, 32);
    new_columns(&c, sizeof(c.data), ROWS, 0, INT64_MAX);
    AA_CHECK_EQ(aa_columns_poll(&u.image, &c.columns), 1);
    check_message(&c, 0, 20, 2, second);
    test_image_free(&t);
    test_image_free(&u);
}

static void a_batch_filled_at_the_term_end_is_full_and_a_range_ending_there_done(void)
{
    /* 64 messages of 992 bytes (frames of 1,024) fill the term exactly, and the 64 rows */
    for (int ending_at_term = 0; ending_at_term < 2; ending_at_term++)
    {
        test_image_t t;
        test_image_init(&t, 3);
        for (int i = 0; i < ROWS; i++)
        {
            AA_CHECK_EQ(append(&t, 992, (uint8_t)i), (int64_t)i * 1024);
        }
        test_columns_t c;
        new_columns(&c, sizeof(c.data), ROWS, 0, ending_at_term ? TERM : INT64_MAX);
        AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), ROWS);
        check_message(&c, ROWS - 1, 992, ROWS - 1, (ROWS - 1) * 1024);
        AA_CHECK_EQ(c.columns.position, TERM);
        AA_CHECK_EQ(t.subscriber_position, TERM);
        AA_CHECK_EQ(c.columns.full, 1);
        AA_CHECK_EQ(c.columns.done, ending_at_term);
        /* room again, and nothing past the term yet: neither */
        AA_CHECK_EQ(aa_columns_reset(&c.columns), 0);
        AA_CHECK_EQ(aa_columns_poll(&t.image, &c.columns), 0);
        AA_CHECK_EQ(c.columns.full, 0);
        AA_CHECK_EQ(c.columns.done, ending_at_term);
        test_image_free(&t);
    }
}

int main(void)
{
    AA_RUN(messages_fill_the_columns_with_end_positions);
    AA_RUN(the_range_skips_earlier_messages_and_ends_at_its_limit);
    AA_RUN(a_full_batch_stops_at_a_message_boundary);
    AA_RUN(a_message_larger_than_the_data_buffer_asks_for_more);
    AA_RUN(padding_ends_the_term_and_a_torn_start_is_skipped);
    AA_RUN(a_batch_filled_at_the_term_end_is_full_and_a_range_ending_there_done);
    return 0;
}
