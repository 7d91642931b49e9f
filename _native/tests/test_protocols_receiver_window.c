/* Receiver window (reference 4.1, 4.2): window length rules, MTU checks, SM cadence on a fixed
 * clock, and over-run / under-run / heartbeat acceptance. */
#include <string.h>

#include "aa_test.h"
#include "protocols/aa_receiver_window.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_error.h"

#define TERM (64 * 1024)
#define MS (1000 * 1000LL)

static void should_compute_and_validate_the_window(void)
{
    /* min(rcv-wnd or 128 KiB, termLength / 2). */
    AA_CHECK_EQ(aa_receiver_window_length(AA_RCV_INITIAL_WINDOW_LENGTH_DEFAULT, 16 * 1024 * 1024), 128 * 1024);
    AA_CHECK_EQ(aa_receiver_window_length(AA_RCV_INITIAL_WINDOW_LENGTH_DEFAULT, TERM), 32 * 1024);
    AA_CHECK_EQ(aa_receiver_window_length(1024 * 1024, 16 * 1024 * 1024), 1024 * 1024);

    AA_CHECK_EQ(aa_receiver_window_validate_initial(256, 128 * 1024), 0);
    AA_CHECK_EQ(aa_receiver_window_validate_initial(255, 128 * 1024), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_CONFIGURATION);
    AA_CHECK_EQ(aa_receiver_window_validate_initial(128 * 1024, 128 * 1024), 0);
    AA_CHECK_EQ(aa_receiver_window_validate_initial(128 * 1024 + 1, 128 * 1024), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "SO_RCVBUF"));
    AA_CHECK_EQ(aa_receiver_window_validate_initial(4 * 1024 * 1024, 0), 0);

    /* 32 < mtu <= 65504, a multiple of 32, <= the window. */
    AA_CHECK_EQ(aa_receiver_window_validate_mtu(1408, 128 * 1024), 0);
    AA_CHECK_EQ(aa_receiver_window_validate_mtu(64, 128 * 1024), 0);
    AA_CHECK_EQ(aa_receiver_window_validate_mtu(65504, 128 * 1024), 0);
    AA_CHECK_EQ(aa_receiver_window_validate_mtu(32, 128 * 1024), -1);
    AA_CHECK_EQ(aa_receiver_window_validate_mtu(65536, 128 * 1024), -1);
    AA_CHECK_EQ(aa_receiver_window_validate_mtu(1400, 128 * 1024), -1);
    AA_CHECK_EQ(aa_receiver_window_validate_mtu(8192, 4096), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "receiver window"));
}

static void should_send_sm_at_once_then_every_timeout(void)
{
    aa_receiver_window_t w;
    int64_t t = 7 * MS;
    int64_t join = 2LL * TERM + 4096;
    AA_CHECK_EQ(aa_receiver_window_init(&w, TERM, 50, 32 * 1024, AA_RCV_STATUS_MESSAGE_TIMEOUT_DEFAULT_NS, join, t), 0);

    aa_receiver_window_sm_t sm;
    AA_CHECK(aa_receiver_window_poll_sm(&w, t, &sm));
    AA_CHECK_EQ(sm.position, join);
    AA_CHECK_EQ(sm.term_id, 52);
    AA_CHECK_EQ(sm.term_offset, 4096);
    AA_CHECK_EQ(sm.window_length, 32 * 1024);
    AA_CHECK(!aa_receiver_window_poll_sm(&w, t, &sm));
    AA_CHECK(!aa_receiver_window_poll_sm(&w, t + 200 * MS - 1, &sm));
    AA_CHECK(aa_receiver_window_poll_sm(&w, t + 200 * MS, &sm));
    AA_CHECK_EQ(sm.position, join);
    AA_CHECK(!aa_receiver_window_poll_sm(&w, t + 399 * MS, &sm));
    AA_CHECK(aa_receiver_window_poll_sm(&w, t + 400 * MS, &sm));

    /* Bad arguments. */
    AA_CHECK_EQ(aa_receiver_window_init(&w, TERM + 1, 0, 1024, 1, 0, 0), -1);
    AA_CHECK_EQ(aa_receiver_window_init(&w, TERM, 0, 0, 1, 0, 0), -1);
    AA_CHECK_EQ(aa_receiver_window_init(&w, TERM, 0, 1024, 0, 0, 0), -1);
    AA_CHECK_EQ(aa_receiver_window_init(&w, TERM, 0, 1024, 1, -32, 0), -1);
}

static void should_schedule_sm_after_a_quarter_window_of_progress(void)
{
    aa_receiver_window_t w;
    int32_t window = 32 * 1024;
    AA_CHECK_EQ(aa_receiver_window_init(&w, TERM, 0, window, 200 * MS, 0, 0), 0);
    aa_receiver_window_sm_t sm;
    AA_CHECK(aa_receiver_window_poll_sm(&w, 0, &sm));

    /* Exactly window/4 is not "more than" it. */
    AA_CHECK(!aa_receiver_window_on_track_rebuild(&w, window / 4, window, false));
    AA_CHECK(!aa_receiver_window_poll_sm(&w, 1 * MS, &sm));
    AA_CHECK(aa_receiver_window_on_track_rebuild(&w, window / 4 + 32, window, false));
    AA_CHECK(aa_receiver_window_poll_sm(&w, 1 * MS, &sm));
    AA_CHECK_EQ(sm.position, window / 4 + 32);
    AA_CHECK_EQ(sm.window_length, window);
    AA_CHECK(!aa_receiver_window_poll_sm(&w, 2 * MS, &sm));

    /* The next threshold counts from the last scheduled position. */
    AA_CHECK(!aa_receiver_window_on_track_rebuild(&w, window / 2 + 32, window, false));
    AA_CHECK(aa_receiver_window_on_track_rebuild(&w, window / 2 + 64, window, false));
    /* Several schedules before a send: one SM with the latest values. */
    AA_CHECK(aa_receiver_window_on_track_rebuild(&w, TERM + 64, window, false));
    AA_CHECK(aa_receiver_window_poll_sm(&w, 3 * MS, &sm));
    AA_CHECK_EQ(sm.position, TERM + 64);
    AA_CHECK_EQ(sm.term_id, 1);
    AA_CHECK_EQ(sm.term_offset, 64);
    AA_CHECK(!aa_receiver_window_poll_sm(&w, 4 * MS, &sm));
    /* The timeout counts from the last SM sent. */
    AA_CHECK(!aa_receiver_window_poll_sm(&w, 203 * MS - 1, &sm));
    AA_CHECK(aa_receiver_window_poll_sm(&w, 203 * MS, &sm));
}

static void should_schedule_sm_on_window_change_or_when_forced(void)
{
    aa_receiver_window_t w;
    AA_CHECK_EQ(aa_receiver_window_init(&w, TERM, 0, 32 * 1024, 200 * MS, 4096, 0), 0);
    aa_receiver_window_sm_t sm;
    AA_CHECK(aa_receiver_window_poll_sm(&w, 0, &sm));

    /* A new window (e.g. congestion control) with no progress. */
    AA_CHECK(aa_receiver_window_on_track_rebuild(&w, 4096, 16 * 1024, false));
    AA_CHECK(aa_receiver_window_poll_sm(&w, 1, &sm));
    AA_CHECK_EQ(sm.position, 4096);
    AA_CHECK_EQ(sm.window_length, 16 * 1024);
    AA_CHECK(!aa_receiver_window_on_track_rebuild(&w, 4096, 16 * 1024, false));

    /* Forced (CUBIC on loss). */
    AA_CHECK(aa_receiver_window_on_track_rebuild(&w, 4096 + 32, 16 * 1024, true));
    AA_CHECK(aa_receiver_window_poll_sm(&w, 2, &sm));
    AA_CHECK_EQ(sm.position, 4096 + 32);
    AA_CHECK(!aa_receiver_window_poll_sm(&w, 3, &sm));
}

static void should_accept_drop_over_and_under_runs(void)
{
    aa_receiver_window_t w;
    /* initial term 10; last SM at term 12 offset 1024. */
    int64_t sm_pos = 2LL * TERM + 1024;
    AA_CHECK_EQ(aa_receiver_window_init(&w, TERM, 10, 32 * 1024, 200 * MS, sm_pos, 0), 0);
    aa_receiver_window_sm_t sm;
    AA_CHECK(aa_receiver_window_poll_sm(&w, 0, &sm));
    AA_CHECK_EQ(w.last_sm_position, sm_pos);

    /* Data: from last_sm_position up to last_sm_position + termLength/2. */
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 12, 1024, 1408, false), AA_RECEIVER_WINDOW_ACCEPT);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 12, 992, 64, false), AA_RECEIVER_WINDOW_UNDERRUN);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 11, 60000, 64, false), AA_RECEIVER_WINDOW_UNDERRUN);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 12, 1024 + TERM / 2 - 64, 64, false), AA_RECEIVER_WINDOW_ACCEPT);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 12, 1024 + TERM / 2 - 64, 96, false), AA_RECEIVER_WINDOW_OVERRUN);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 13, 0, 32, false), AA_RECEIVER_WINDOW_OVERRUN);

    /* Heartbeats: from last_sm_position - termLength on (behind is fine, not too far). */
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 11, 1024, 0, true), AA_RECEIVER_WINDOW_ACCEPT);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 11, 992, 0, true), AA_RECEIVER_WINDOW_STALE_HEARTBEAT);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 14, 0, 0, true), AA_RECEIVER_WINDOW_ACCEPT);

    /* Terms before the initial one, by wrapping compare. */
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 9, 0, 64, false), AA_RECEIVER_WINDOW_BEFORE_INITIAL_TERM);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 9, 0, 0, true), AA_RECEIVER_WINDOW_BEFORE_INITIAL_TERM);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, INT32_MIN + 10, 0, 0, true), AA_RECEIVER_WINDOW_BEFORE_INITIAL_TERM);

    /* Acceptance follows the SM actually sent, not one merely scheduled. */
    AA_CHECK(aa_receiver_window_on_track_rebuild(&w, sm_pos + TERM / 4, 32 * 1024, false));
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 12, 1024, 64, false), AA_RECEIVER_WINDOW_ACCEPT);
    AA_CHECK(aa_receiver_window_poll_sm(&w, 1, &sm));
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 12, 1024, 64, false), AA_RECEIVER_WINDOW_UNDERRUN);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 12, 1024 + TERM / 4, 64, false), AA_RECEIVER_WINDOW_ACCEPT);
    /* The over-run limit moved up by the same TERM/4: 1024 + 3/4 TERM in term 12. */
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 12, 1024 + TERM / 4 + TERM / 2 - 64, 64, false), AA_RECEIVER_WINDOW_ACCEPT);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, 12, 1024 + TERM / 4 + TERM / 2 - 32, 64, false), AA_RECEIVER_WINDOW_OVERRUN);
}

static void should_wrap_term_ids(void)
{
    aa_receiver_window_t w;
    AA_CHECK_EQ(aa_receiver_window_init(&w, TERM, INT32_MAX, 32 * 1024, 200 * MS, TERM - 64, 0), 0);
    aa_receiver_window_sm_t sm;
    AA_CHECK(aa_receiver_window_poll_sm(&w, 0, &sm));
    AA_CHECK_EQ(sm.term_id, INT32_MAX);
    AA_CHECK(aa_receiver_window_on_track_rebuild(&w, TERM + 8192 + 32, 32 * 1024, false));
    AA_CHECK(aa_receiver_window_poll_sm(&w, 1, &sm));
    AA_CHECK_EQ(sm.term_id, INT32_MIN);
    AA_CHECK_EQ(sm.term_offset, 8192 + 32);
    AA_CHECK_EQ(aa_receiver_window_check_packet(&w, INT32_MIN, 8192 + 32, 1408, false), AA_RECEIVER_WINDOW_ACCEPT);
}

int main(void)
{
    AA_RUN(should_compute_and_validate_the_window);
    AA_RUN(should_send_sm_at_once_then_every_timeout);
    AA_RUN(should_schedule_sm_after_a_quarter_window_of_progress);
    AA_RUN(should_schedule_sm_on_window_change_or_when_forced);
    AA_RUN(should_accept_drop_over_and_under_runs);
    AA_RUN(should_wrap_term_ids);
    return 0;
}
