/* The fragment-handler polls of images and subscriptions (src/client/aa_image_poll.c) on logs in
 * memory: controlled actions, bounds, padding and term ends, block polls, and moving the position. */
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "aa_test_log.h"
#include "aeron_async.h"
#include "client/aa_client.h"
#include "logbuffer/aa_term.h"

#define TERM TEST_IMAGE_TERM_LENGTH
#define INITIAL_TERM_ID TEST_IMAGE_INITIAL_TERM_ID


/* Appends a message of `length` bytes (first byte `tag`) to term 0; returns the resulting offset, or -1 when
 * it tripped the term end (padding written). */
static int32_t append(test_image_t *t, size_t length, uint8_t tag)
{
    uint8_t data[8192];
    memset(data, tag, length);
    int32_t r = test_image_append(t, data, length, 0);
    return r > 0 ? r : -1;
}

typedef struct
{
    const int *actions;
    int count;
    int calls;
    uint8_t tags[64];
    int64_t positions_seen[64];
    test_image_t *t;
}
script_t;

static int scripted(void *clientd, const aa_poll_fragment_t *fragment)
{
    script_t *s = clientd;
    const aa_data_header_t *h = (const aa_data_header_t *)fragment->frame;
    AA_CHECK_EQ(fragment->frame_length, h->frame_header.frame_length);
    AA_CHECK_EQ(fragment->initial_term_id, INITIAL_TERM_ID);
    s->tags[s->calls] = fragment->frame[AA_DATA_HEADER_LENGTH];
    s->positions_seen[s->calls] = NULL != s->t ? *s->t->image.subscriber_position : 0;
    int action = s->calls < s->count ? s->actions[s->calls] : AA_POLL_CONTINUE;
    s->calls++;
    return action;
}

static void controlled_actions_move_the_position_as_aeron_does(void)
{
    test_image_t t;
    test_image_init(&t, 11);
    int32_t ends[8];
    for (int i = 0; i < 8; i++)
    {
        ends[i] = append(&t, 100, (uint8_t)(i + 1)); /* 160-byte frames */
    }
    /* ABORT: nothing consumed */
    script_t s = { .actions = (const int[]){ AA_POLL_ABORT }, .count = 1, .t = &t };
    AA_CHECK_EQ(aa_image_controlled_poll(&t.image, scripted, &s, 10), 0);
    AA_CHECK_EQ(t.subscriber_position, 0);
    /* CONTINUE, CONTINUE, ABORT: two consumed, the position stored at the end */
    s = (script_t){ .actions = (const int[]){ AA_POLL_CONTINUE, AA_POLL_CONTINUE, AA_POLL_ABORT }, .count = 3, .t = &t };
    AA_CHECK_EQ(aa_image_controlled_poll(&t.image, scripted, &s, 10), 2);
    AA_CHECK_EQ(s.positions_seen[1], 0);
    AA_CHECK_EQ(t.subscriber_position, ends[1]);
    /* COMMIT stores at once */
    s = (script_t){ .actions = (const int[]){ AA_POLL_COMMIT, AA_POLL_COMMIT, AA_POLL_BREAK }, .count = 3, .t = &t };
    AA_CHECK_EQ(aa_image_controlled_poll(&t.image, scripted, &s, 10), 3);
    AA_CHECK_EQ(s.tags[0], 3);
    AA_CHECK_EQ(s.positions_seen[1], ends[2]);
    AA_CHECK_EQ(s.positions_seen[2], ends[3]);
    AA_CHECK_EQ(t.subscriber_position, ends[4]); /* BREAK consumed its fragment */
    /* STOP consumes and stops; CLOSED stops touching nothing */
    s = (script_t){ .actions = (const int[]){ AA_POLL_STOP }, .count = 1, .t = &t };
    AA_CHECK_EQ(aa_image_controlled_poll(&t.image, scripted, &s, 10), 1);
    AA_CHECK_EQ(t.subscriber_position, ends[5]);
    s = (script_t){ .actions = (const int[]){ AA_POLL_CONTINUE, AA_POLL_CLOSED }, .count = 2, .t = &t };
    AA_CHECK_EQ(aa_image_controlled_poll(&t.image, scripted, &s, 10), 2);
    AA_CHECK_EQ(t.subscriber_position, ends[5]);
    /* the fragment limit, then the end of the data */
    s = (script_t){ .t = &t };
    AA_CHECK_EQ(aa_image_controlled_poll(&t.image, scripted, &s, 1), 1);
    AA_CHECK_EQ(aa_image_controlled_poll(&t.image, scripted, &s, 10), 1);
    AA_CHECK_EQ(t.subscriber_position, ends[7]);
    AA_CHECK_EQ(aa_image_controlled_poll(&t.image, scripted, &s, 10), 0);
    /* a closed image reads nothing */
    t.image.is_closed = 1;
    AA_CHECK_EQ(aa_image_controlled_poll(&t.image, scripted, &s, 10), 0);
    test_image_free(&t);
}

static void bounded_polls_read_no_frame_starting_at_the_limit(void)
{
    test_image_t t;
    test_image_init(&t, 11);
    int32_t ends[4];
    for (int i = 0; i < 4; i++)
    {
        ends[i] = append(&t, 100, (uint8_t)(i + 1));
    }
    script_t s = { .t = &t };
    AA_CHECK_EQ(aa_image_bounded_controlled_poll(&t.image, scripted, &s, 0, 10), 0);
    AA_CHECK_EQ(aa_image_bounded_controlled_poll(&t.image, scripted, &s, ends[1], 10), 2);
    AA_CHECK_EQ(t.subscriber_position, ends[1]);
    AA_CHECK_EQ(aa_image_bounded_controlled_poll(&t.image, scripted, &s, ends[1] + 1, 10), 1);
    AA_CHECK_EQ(t.subscriber_position, ends[2]);
    AA_CHECK_EQ(aa_image_bounded_controlled_poll(&t.image, scripted, &s, INT64_MAX, 10), 1);
    test_image_free(&t);
}

static void padding_is_skipped_and_the_term_end_consumed(void)
{
    test_image_t t;
    test_image_init(&t, 11);
    int frames = 0;
    while (append(&t, 1000, 9) > 0) /* 1056-byte frames: the term ends with padding */
    {
        frames++;
    }
    script_t s = { .t = NULL };
    int32_t total = 0;
    int32_t n;
    while ((n = aa_image_controlled_poll(&t.image, scripted, &s, 10)) > 0)
    {
        total += n;
    }
    AA_CHECK_EQ(total, frames);
    AA_CHECK_EQ(t.subscriber_position, TERM); /* the padding was consumed with the last read */
    test_image_free(&t);
}

typedef struct
{
    int calls;
    int32_t offset;
    int32_t length;
    int32_t term_id;
    int32_t session_id;
    int action;
}
blocks_t;

static int on_block(void *clientd, const uint8_t *term_buffer, int32_t term_length, int32_t offset, int32_t length,
    int32_t session_id, int32_t term_id)
{
    blocks_t *b = clientd;
    (void)term_buffer;
    AA_CHECK_EQ(term_length, TERM);
    b->calls++;
    b->offset = offset;
    b->length = length;
    b->term_id = term_id;
    b->session_id = session_id;
    return b->action;
}

static void block_polls_hand_runs_of_whole_frames(void)
{
    test_image_t t;
    test_image_init(&t, 11);
    for (int i = 0; i < 10; i++)
    {
        append(&t, 96, 1); /* 128-byte frames */
    }
    blocks_t b = { 0 };
    AA_CHECK_EQ(aa_image_block_poll(&t.image, on_block, &b, 100), 0);
    AA_CHECK_EQ(b.calls, 0);
    AA_CHECK_EQ(aa_image_block_poll(&t.image, on_block, &b, 300), 256);
    AA_CHECK_EQ(b.offset, 0);
    AA_CHECK_EQ(b.term_id, INITIAL_TERM_ID);
    AA_CHECK_EQ(b.session_id, 11);
    AA_CHECK_EQ(t.subscriber_position, 256);
    b.action = AA_POLL_STOP; /* a failing handler still consumes its block */
    AA_CHECK_EQ(aa_image_block_poll(&t.image, on_block, &b, TERM), 8 * 128);
    AA_CHECK_EQ(t.subscriber_position, 10 * 128);
    test_image_free(&t);

    test_image_init(&t, 11);
    while (append(&t, 1000, 9) > 0)
    {
    }
    b = (blocks_t){ 0 };
    int64_t bytes;
    int32_t last_length = 0;
    while ((bytes = aa_image_block_poll(&t.image, on_block, &b, 4 * 1056)) > 0)
    {
        AA_CHECK(b.offset + b.length <= TERM);
        last_length = b.length;
    }
    AA_CHECK_EQ(t.subscriber_position, TERM);
    AA_CHECK_EQ(last_length, TERM % 1056); /* the padding came alone */
    AA_CHECK_EQ(b.offset + b.length, TERM);
    test_image_free(&t);
}

static void position_moves_forward_and_back_to_frame_boundaries(void)
{
    test_image_t t;
    test_image_init(&t, 11);
    int32_t ends[6];
    for (int i = 0; i < 6; i++)
    {
        ends[i] = append(&t, 224, (uint8_t)(i + 1)); /* 256-byte frames */
    }
    AA_CHECK_EQ(aa_image_set_position(&t.image, ends[2]), 0);
    AA_CHECK_EQ(t.subscriber_position, ends[2]);
    AA_CHECK_EQ(aa_image_set_position(&t.image, ends[2] + 8), -1);     /* unaligned */
    AA_CHECK_EQ(aa_image_set_position(&t.image, ends[3] + 64), -1);    /* inside a frame */
    AA_CHECK_EQ(aa_image_set_position(&t.image, ends[5] + 256), -1);   /* beyond the data */
    AA_CHECK_EQ(aa_image_set_position(&t.image, TERM + 256), -1);      /* past the term */
    AA_CHECK_EQ(aa_image_set_position(&t.image, ends[0] + 64), -1);    /* back, inside a frame */
    AA_CHECK_EQ(aa_image_set_position(&t.image, -32), -1);             /* before the join position */
    AA_CHECK_EQ(t.subscriber_position, ends[2]);
    AA_CHECK_EQ(aa_image_set_position(&t.image, ends[0]), 0);
    script_t s = { .t = NULL };
    AA_CHECK_EQ(aa_image_controlled_poll(&t.image, scripted, &s, 1), 1);
    AA_CHECK_EQ(s.tags[0], 2);
    AA_CHECK_EQ(aa_image_set_position(&t.image, 0), 0);
    AA_CHECK_EQ(aa_image_set_position(&t.image, ends[5]), 0);
    t.image.is_closed = 1;
    AA_CHECK_EQ(aa_image_set_position(&t.image, ends[4]), -1);
    test_image_free(&t);
}

static void subscription_polls_share_the_limit_and_stop_on_failure(void)
{
    test_image_t a, b;
    test_image_init(&a, 1);
    test_image_init(&b, 2);
    for (int i = 0; i < 3; i++)
    {
        append(&a, 40, 0xA);
        append(&b, 40, 0xB);
    }
    aa_image_list_t *list = malloc(sizeof(aa_image_list_t) + 2 * sizeof(aa_image_t *));
    list->count = 2;
    list->images[0] = &a.image;
    list->images[1] = &b.image;
    aa_subscription_t *sub = calloc(1, sizeof(aa_subscription_t));
    sub->images = list;
    script_t s = { .t = NULL };
    AA_CHECK_EQ(aa_subscription_controlled_poll(sub, scripted, &s, 4), 4);
    AA_CHECK_EQ(a.subscriber_position + b.subscriber_position, 4 * 96);
    s = (script_t){ .actions = (const int[]){ AA_POLL_STOP }, .count = 1 };
    AA_CHECK_EQ(aa_subscription_controlled_poll(sub, scripted, &s, 10), 1);
    AA_CHECK_EQ(s.calls, 1); /* the other image was not polled */
    s = (script_t){ 0 };
    AA_CHECK_EQ(aa_subscription_controlled_poll(sub, scripted, &s, 10), 1);
    AA_CHECK_EQ(a.subscriber_position + b.subscriber_position, 6 * 96);
    blocks_t blocks = { 0 };
    AA_CHECK_EQ(aa_subscription_block_poll(sub, on_block, &blocks, TERM), 0);
    free(sub);
    free(list);
    test_image_free(&a);
    test_image_free(&b);
}

int main(void)
{
    AA_RUN(controlled_actions_move_the_position_as_aeron_does);
    AA_RUN(bounded_polls_read_no_frame_starting_at_the_limit);
    AA_RUN(padding_is_skipped_and_the_term_end_consumed);
    AA_RUN(block_polls_hand_runs_of_whole_frames);
    AA_RUN(position_moves_forward_and_back_to_frame_boundaries);
    AA_RUN(subscription_polls_share_the_limit_and_stop_on_failure);
    return 0;
}
