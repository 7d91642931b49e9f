/*
 * Receiver window, status message cadence and data acceptance of a receiving image (reference
 * 4.1, 4.2), sans I/O.
 *
 * Window: min(rcv-wnd or aeron.rcv.initial.window.length (128 KiB), termLength / 2) with static
 * congestion control; the configured initial window must be >= 256 and <= SO_RCVBUF, and the
 * sender's MTU (32 < mtu <= 65504, a multiple of 32) must not exceed the window.
 *
 * SM cadence: an SM is scheduled at image creation (at the join position), whenever the minimum
 * subscriber position has moved more than window/4 past the last scheduled SM position, when the
 * window length changes, or when congestion control forces one (aa_receiver_window_on_track_rebuild).
 * aa_receiver_window_poll_sm() then says "send an SM now" for a newly scheduled SM, or when the
 * status message timeout (200 ms) has passed since the last one, and records it as sent.
 *
 * Acceptance, against the position of the last SM sent: data ending beyond
 * last_sm_position + termLength/2 is an over-run, data starting below last_sm_position an under-run;
 * a heartbeat is accepted from last_sm_position - termLength on; anything in a term before the
 * initial term is dropped.
 *
 * No clock reads (every call takes now_ns), no allocation.
 */
#ifndef AA_RECEIVER_WINDOW_H
#define AA_RECEIVER_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#define AA_RCV_INITIAL_WINDOW_LENGTH_DEFAULT (128 * 1024)
#define AA_RCV_INITIAL_WINDOW_LENGTH_MIN 256
#define AA_RCV_STATUS_MESSAGE_TIMEOUT_DEFAULT_NS (200 * 1000 * 1000LL)
#define AA_MTU_LENGTH_MIN_EXCLUSIVE 32
#define AA_MTU_LENGTH_MAX 65504

/* min(initial_window_length, term_length / 2). */
int32_t aa_receiver_window_length(int32_t initial_window_length, int32_t term_length);

/* 256 <= initial_window_length, and <= so_rcvbuf when so_rcvbuf > 0 (0: OS default, not checked). */
int aa_receiver_window_validate_initial(int32_t initial_window_length, int32_t so_rcvbuf);

/* A SETUP's MTU for an image: 32 < mtu <= 65504, a multiple of 32, <= window_length. */
int aa_receiver_window_validate_mtu(int32_t mtu, int32_t window_length);

typedef struct aa_receiver_window_stct
{
    int64_t sm_timeout_ns;
    int32_t term_length;
    int32_t position_bits_to_shift;
    int32_t initial_term_id;
    /* The SM to send next. */
    int64_t next_sm_position;
    int32_t next_sm_window_length;
    int64_t sm_change_number;
    /* The SM sent last. */
    int64_t last_sm_change_number;
    int64_t last_sm_time_ns;
    int64_t last_sm_position;
    int32_t last_sm_window_length;
}
aa_receiver_window_t;

/* One SM to send: consumption position as (term_id, term_offset), and the window. */
typedef struct aa_receiver_window_sm_stct
{
    int64_t position;
    int32_t term_id;
    int32_t term_offset;
    int32_t window_length;
}
aa_receiver_window_sm_t;

/* A new image joined at join_position: an SM for it is due at once. */
int aa_receiver_window_init(
    aa_receiver_window_t *window,
    int32_t term_length,
    int32_t initial_term_id,
    int32_t window_length,
    int64_t sm_timeout_ns,
    int64_t join_position,
    int64_t now_ns);

/* After each rebuild scan: schedules an SM at min_subscriber_position when it moved more than
 * window_length/4 past the last scheduled position, when window_length changed, or when force_sm.
 * Returns true when an SM was scheduled (the caller may clean the log behind min - termLength). */
bool aa_receiver_window_on_track_rebuild(
    aa_receiver_window_t *window, int64_t min_subscriber_position, int32_t window_length, bool force_sm);

/* True when an SM should be sent now (a new one is scheduled, or the SM timeout has passed since
 * the last); fills *sm and records it as sent at now_ns. */
bool aa_receiver_window_poll_sm(aa_receiver_window_t *window, int64_t now_ns, aa_receiver_window_sm_t *sm);

typedef enum aa_receiver_window_packet_enum
{
    AA_RECEIVER_WINDOW_ACCEPT,
    /* Ends beyond last_sm_position + termLength/2: drop, count a flow-control over-run. */
    AA_RECEIVER_WINDOW_OVERRUN,
    /* Data below last_sm_position: drop, count a flow-control under-run. */
    AA_RECEIVER_WINDOW_UNDERRUN,
    /* A heartbeat older than last_sm_position - termLength: drop. */
    AA_RECEIVER_WINDOW_STALE_HEARTBEAT,
    /* A term before the initial term (wrapping compare): drop. */
    AA_RECEIVER_WINDOW_BEFORE_INITIAL_TERM
}
aa_receiver_window_packet_t;

/* Classifies a DATA (is_heartbeat false, length bytes) or heartbeat packet at (term_id, term_offset). */
aa_receiver_window_packet_t aa_receiver_window_check_packet(
    const aa_receiver_window_t *window, int32_t term_id, int32_t term_offset, int32_t length, bool is_heartbeat);

#endif
