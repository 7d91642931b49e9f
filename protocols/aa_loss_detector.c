#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "protocols/aa_loss_detector.h"
#include "logbuffer/aa_term.h"
#include "util/aa_error.h"

/* ---- NAK delays ---- */

int aa_nak_delay_generator_init_static(aa_nak_delay_generator_t *generator, int64_t delay_ns, int64_t retry_ratio)
{
    if (delay_ns < 0 || retry_ratio < 1 || (delay_ns > 0 && retry_ratio > INT64_MAX / delay_ns))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "NAK delay must be >= 0 and the retry ratio >= 1 (got delay %" PRId64 " ns, ratio %" PRId64 ")",
            delay_ns, retry_ratio);
        return -1;
    }
    memset(generator, 0, sizeof(*generator));
    generator->kind = AA_NAK_DELAY_STATIC;
    generator->initial_delay_ns = delay_ns;
    generator->retry_delay_ns = delay_ns * retry_ratio;
    return 0;
}

int aa_nak_delay_generator_init_optimal_multicast(
    aa_nak_delay_generator_t *generator, int64_t max_backoff_ns, int32_t group_size, uint64_t seed)
{
    if (max_backoff_ns <= 0 || group_size < 1)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "multicast NAK max backoff must be > 0 and the group size >= 1 (got %" PRId64 " ns, %d)",
            max_backoff_ns, group_size);
        return -1;
    }
    memset(generator, 0, sizeof(*generator));
    generator->kind = AA_NAK_DELAY_OPTIMAL_MULTICAST;
    generator->max_backoff_ns = max_backoff_ns;
    generator->lambda = log((double)group_size) + 1.0;
    generator->exp_lambda_minus_one = exp(generator->lambda) - 1.0;
    generator->random_state = seed;
    return 0;
}

/* splitmix64: a small, seedable generator; any seed (0 included) is fine. */
static uint64_t aa_nak_delay_next_random(aa_nak_delay_generator_t *generator)
{
    uint64_t z = (generator->random_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int64_t aa_nak_delay_scaled(int64_t max_backoff_ns, double lambda, double exp_lambda_minus_one, double u)
{
    double delay = ((double)max_backoff_ns / lambda) * log(1.0 + (u * exp_lambda_minus_one));
    int64_t result = (int64_t)delay;
    if (result >= max_backoff_ns)
    {
        result = max_backoff_ns - 1;
    }
    return result < 0 ? 0 : result;
}

int64_t aa_nak_delay_optimal_multicast(int64_t max_backoff_ns, int32_t group_size, double u)
{
    double lambda = log((double)(group_size < 1 ? 1 : group_size)) + 1.0;
    return aa_nak_delay_scaled(max_backoff_ns, lambda, exp(lambda) - 1.0, u);
}

static int64_t aa_nak_delay_random(aa_nak_delay_generator_t *generator)
{
    double u = (double)(aa_nak_delay_next_random(generator) >> 11) * (1.0 / 9007199254740992.0);
    return aa_nak_delay_scaled(generator->max_backoff_ns, generator->lambda, generator->exp_lambda_minus_one, u);
}

int64_t aa_nak_delay_generator_initial_delay(aa_nak_delay_generator_t *generator)
{
    return AA_NAK_DELAY_STATIC == generator->kind ? generator->initial_delay_ns : aa_nak_delay_random(generator);
}

int64_t aa_nak_delay_generator_retry_delay(aa_nak_delay_generator_t *generator)
{
    return AA_NAK_DELAY_STATIC == generator->kind ? generator->retry_delay_ns : aa_nak_delay_random(generator);
}

/* ---- loss detector ---- */

int aa_loss_detector_init(
    aa_loss_detector_t *detector, const aa_nak_delay_generator_t *delay_generator, int32_t term_length,
    int32_t initial_term_id)
{
    if (term_length < AA_LOGBUFFER_TERM_MIN_LENGTH || term_length > AA_LOGBUFFER_TERM_MAX_LENGTH ||
        0 != (term_length & (term_length - 1)))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "loss detector term length %d is not a power of two in [%d, %d]",
            term_length, AA_LOGBUFFER_TERM_MIN_LENGTH, AA_LOGBUFFER_TERM_MAX_LENGTH);
        return -1;
    }
    memset(detector, 0, sizeof(*detector));
    detector->delay_generator = *delay_generator;
    detector->term_length = term_length;
    detector->position_bits_to_shift = aa_position_bits_to_shift(term_length);
    detector->initial_term_id = initial_term_id;
    return 0;
}

static void aa_loss_detector_on_gap(void *clientd, int32_t term_id, int32_t term_offset, size_t length)
{
    aa_loss_detector_t *detector = (aa_loss_detector_t *)clientd;
    detector->scanned_gap = true;
    detector->scanned_term_id = term_id;
    detector->scanned_term_offset = term_offset;
    detector->scanned_length = (int32_t)length;
}

int aa_loss_detector_scan(
    aa_loss_detector_t *detector, const uint8_t *const *term_buffers, int64_t rebuild_position, int64_t hwm_position,
    int64_t now_ns, aa_loss_detector_result_t *result)
{
    memset(result, 0, sizeof(*result));
    result->rebuild_position = rebuild_position;
    if (rebuild_position >= hwm_position)
    {
        detector->has_active_gap = false;
        return 0;
    }

    int32_t bits = detector->position_bits_to_shift;
    int64_t rebuild_term_count = rebuild_position >> bits;
    int64_t hwm_term_count = hwm_position >> bits;
    int32_t rebuild_offset = aa_compute_term_offset_from_position(rebuild_position, bits);
    int32_t limit_offset = rebuild_term_count == hwm_term_count ?
        aa_compute_term_offset_from_position(hwm_position, bits) : detector->term_length;
    int32_t term_id = aa_compute_term_id_from_position(rebuild_position, bits, detector->initial_term_id);
    const uint8_t *term_buffer = term_buffers[aa_index_by_position(rebuild_position, bits)];

    detector->scanned_gap = false;
    int32_t contiguous_offset = aa_term_gap_scanner_scan_for_gap(
        term_buffer, term_id, rebuild_offset, limit_offset, aa_loss_detector_on_gap, detector);
    result->rebuild_position = rebuild_position + (contiguous_offset - rebuild_offset);

    if (!detector->scanned_gap)
    {
        detector->has_active_gap = false;
        return 0;
    }

    result->loss_found = true;
    result->term_id = detector->scanned_term_id;
    result->term_offset = detector->scanned_term_offset;
    result->length = detector->scanned_length;

    if (!detector->has_active_gap ||
        detector->active_term_id != detector->scanned_term_id ||
        detector->active_term_offset != detector->scanned_term_offset ||
        detector->active_length != detector->scanned_length)
    {
        detector->has_active_gap = true;
        result->new_gap = true;
        detector->active_term_id = detector->scanned_term_id;
        detector->active_term_offset = detector->scanned_term_offset;
        detector->active_length = detector->scanned_length;
        detector->expiry_ns = now_ns + aa_nak_delay_generator_initial_delay(&detector->delay_generator);
    }

    if (now_ns >= detector->expiry_ns)
    {
        result->send_nak = true;
        detector->expiry_ns = now_ns + aa_nak_delay_generator_retry_delay(&detector->delay_generator);
        return 1;
    }
    return 0;
}

bool aa_loss_detector_fill_gap(
    uint8_t *term_buffer, int32_t term_id, int32_t term_offset, int32_t length, int32_t session_id, int32_t stream_id)
{
    if (length < AA_DATA_HEADER_LENGTH || 0 != aa_frame_length_volatile(term_buffer, term_offset))
    {
        return false;
    }
    aa_data_header_t header;
    header.frame_header.frame_length = 0;
    header.frame_header.version = AA_FRAME_HEADER_VERSION;
    header.frame_header.flags = AA_DATA_HEADER_UNFRAGMENTED;
    header.frame_header.type = AA_HDR_TYPE_PAD;
    header.term_offset = term_offset;
    header.session_id = session_id;
    header.stream_id = stream_id;
    header.term_id = term_id;
    header.reserved_value = 0;
    memcpy(term_buffer + term_offset + sizeof(int32_t), (const uint8_t *)&header + sizeof(int32_t),
        sizeof(header) - sizeof(int32_t));
    aa_frame_length_ordered(term_buffer, term_offset, length);
    return true;
}
