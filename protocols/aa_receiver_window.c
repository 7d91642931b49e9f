#include <inttypes.h>
#include <string.h>

#include "protocols/aa_receiver_window.h"
#include "protocols/aa_udp_frames.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_error.h"

int32_t aa_receiver_window_length(int32_t initial_window_length, int32_t term_length)
{
    int32_t half_term = term_length / 2;
    return initial_window_length < half_term ? initial_window_length : half_term;
}

int aa_receiver_window_validate_initial(int32_t initial_window_length, int32_t so_rcvbuf)
{
    if (initial_window_length < AA_RCV_INITIAL_WINDOW_LENGTH_MIN)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "receiver window length %d is below the minimum of %d",
            initial_window_length, AA_RCV_INITIAL_WINDOW_LENGTH_MIN);
        return -1;
    }
    if (so_rcvbuf > 0 && initial_window_length > so_rcvbuf)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "receiver window length %d is larger than the socket SO_RCVBUF of %d",
            initial_window_length, so_rcvbuf);
        return -1;
    }
    return 0;
}

int aa_receiver_window_validate_mtu(int32_t mtu, int32_t window_length)
{
    if (mtu <= AA_MTU_LENGTH_MIN_EXCLUSIVE || mtu > AA_MTU_LENGTH_MAX || 0 != (mtu % 32))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "mtu %d must be a multiple of 32 in (%d, %d]",
            mtu, AA_MTU_LENGTH_MIN_EXCLUSIVE, AA_MTU_LENGTH_MAX);
        return -1;
    }
    if (mtu > window_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "mtu %d is larger than the receiver window of %d", mtu, window_length);
        return -1;
    }
    return 0;
}

int aa_receiver_window_init(
    aa_receiver_window_t *window, int32_t term_length, int32_t initial_term_id, int32_t window_length,
    int64_t sm_timeout_ns, int64_t join_position, int64_t now_ns)
{
    if (term_length < AA_LOGBUFFER_TERM_MIN_LENGTH || term_length > AA_LOGBUFFER_TERM_MAX_LENGTH ||
        0 != (term_length & (term_length - 1)) || window_length <= 0 || sm_timeout_ns <= 0 || join_position < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "receiver window needs a power-of-two term length (%d), a window > 0 (%d), an SM timeout > 0 (%" PRId64
            " ns) and a join position >= 0 (%" PRId64 ")",
            term_length, window_length, sm_timeout_ns, join_position);
        return -1;
    }
    memset(window, 0, sizeof(*window));
    window->sm_timeout_ns = sm_timeout_ns;
    window->term_length = term_length;
    window->position_bits_to_shift = aa_position_bits_to_shift(term_length);
    window->initial_term_id = initial_term_id;
    window->next_sm_position = join_position;
    window->next_sm_window_length = window_length;
    window->sm_change_number = 1;
    window->last_sm_change_number = 0;
    window->last_sm_time_ns = now_ns;
    window->last_sm_position = join_position;
    window->last_sm_window_length = window_length;
    return 0;
}

bool aa_receiver_window_on_track_rebuild(
    aa_receiver_window_t *window, int64_t min_subscriber_position, int32_t window_length, bool force_sm)
{
    int64_t threshold = window_length / 4;
    if (force_sm ||
        min_subscriber_position > window->next_sm_position + threshold ||
        window_length != window->next_sm_window_length)
    {
        if (min_subscriber_position > window->next_sm_position)
        {
            window->next_sm_position = min_subscriber_position;
        }
        window->next_sm_window_length = window_length;
        window->sm_change_number++;
        return true;
    }
    return false;
}

bool aa_receiver_window_poll_sm(aa_receiver_window_t *window, int64_t now_ns, aa_receiver_window_sm_t *sm)
{
    if (window->sm_change_number == window->last_sm_change_number &&
        now_ns < window->last_sm_time_ns + window->sm_timeout_ns)
    {
        return false;
    }
    int32_t bits = window->position_bits_to_shift;
    sm->position = window->next_sm_position;
    sm->term_id = aa_compute_term_id_from_position(sm->position, bits, window->initial_term_id);
    sm->term_offset = aa_compute_term_offset_from_position(sm->position, bits);
    sm->window_length = window->next_sm_window_length;

    window->last_sm_change_number = window->sm_change_number;
    window->last_sm_time_ns = now_ns;
    window->last_sm_position = sm->position;
    window->last_sm_window_length = sm->window_length;
    return true;
}

aa_receiver_window_packet_t aa_receiver_window_check_packet(
    const aa_receiver_window_t *window, int32_t term_id, int32_t term_offset, int32_t length, bool is_heartbeat)
{
    if ((int32_t)((uint32_t)term_id - (uint32_t)window->initial_term_id) < 0)
    {
        return AA_RECEIVER_WINDOW_BEFORE_INITIAL_TERM;
    }
    int64_t position = aa_udp_compute_position(
        term_id, term_offset, window->position_bits_to_shift, window->initial_term_id);
    if (is_heartbeat)
    {
        return position >= window->last_sm_position - window->term_length ?
            AA_RECEIVER_WINDOW_ACCEPT : AA_RECEIVER_WINDOW_STALE_HEARTBEAT;
    }
    if (position < window->last_sm_position)
    {
        return AA_RECEIVER_WINDOW_UNDERRUN;
    }
    if (position + length > window->last_sm_position + (window->term_length / 2))
    {
        return AA_RECEIVER_WINDOW_OVERRUN;
    }
    return AA_RECEIVER_WINDOW_ACCEPT;
}
