/*
 * Loss detection and the NAK timer of a receiving image (reference 4.3), sans I/O.
 *
 * Each duty cycle the caller hands over the image's term buffers, the rebuild position
 * (max(rcv-pos, max sub-pos)), the high-water mark and the time. aa_loss_detector_scan() scans the
 * rebuild term from the rebuild position up to the hwm (or the term end) with the term gap scanner,
 * returns how far contiguous data reaches (to propose-max into rcv-pos), and reports the first gap.
 * A gap that differs from the active one (term id, offset or length) becomes active and arms the
 * timer with the initial delay; when the timer expires the scan says "send a NAK for (term_id,
 * offset, length)" and re-arms it with the retry delay. With reliable=false the caller fills the
 * gap with padding instead (aa_loss_detector_fill_gap).
 *
 * Delays: unicast uses a static initial delay (aeron.nak.unicast.delay, 100 us, or the channel's
 * nak-delay) and retry = initial x ratio (100); group/multicast images draw every delay at random
 * from [0, T) with T = aeron.nak.multicast.max.backoff (10 ms) and N = group size (10):
 * (T / L) * ln(1 + U * (e^L - 1)), L = ln N + 1, U uniform in [0, 1).
 *
 * No clock reads (every call takes now_ns), no allocation.
 */
#ifndef AA_LOSS_DETECTOR_H
#define AA_LOSS_DETECTOR_H

#include <stdbool.h>
#include <stdint.h>

#define AA_NAK_UNICAST_DELAY_DEFAULT_NS (100 * 1000LL)
#define AA_NAK_UNICAST_RETRY_DELAY_RATIO_DEFAULT 100
#define AA_NAK_MULTICAST_MAX_BACKOFF_DEFAULT_NS (10 * 1000 * 1000LL)
#define AA_NAK_MULTICAST_GROUP_SIZE_DEFAULT 10

typedef enum aa_nak_delay_kind_enum
{
    AA_NAK_DELAY_STATIC,
    AA_NAK_DELAY_OPTIMAL_MULTICAST
}
aa_nak_delay_kind_t;

typedef struct aa_nak_delay_generator_stct
{
    aa_nak_delay_kind_t kind;
    int64_t initial_delay_ns;
    int64_t retry_delay_ns;
    int64_t max_backoff_ns;
    double lambda;
    double exp_lambda_minus_one;
    uint64_t random_state;
}
aa_nak_delay_generator_t;

/* Unicast: initial delay_ns, retry delay_ns * retry_ratio. delay_ns >= 0, retry_ratio >= 1. */
int aa_nak_delay_generator_init_static(aa_nak_delay_generator_t *generator, int64_t delay_ns, int64_t retry_ratio);

/* Group semantics: every delay random in [0, max_backoff_ns); seed makes the sequence repeatable. */
int aa_nak_delay_generator_init_optimal_multicast(
    aa_nak_delay_generator_t *generator, int64_t max_backoff_ns, int32_t group_size, uint64_t seed);

int64_t aa_nak_delay_generator_initial_delay(aa_nak_delay_generator_t *generator);
int64_t aa_nak_delay_generator_retry_delay(aa_nak_delay_generator_t *generator);

/* The multicast delay for a given U in [0, 1): (T / L) * ln(1 + U * (e^L - 1)), L = ln N + 1. */
int64_t aa_nak_delay_optimal_multicast(int64_t max_backoff_ns, int32_t group_size, double u);

typedef struct aa_loss_detector_stct
{
    aa_nak_delay_generator_t delay_generator;
    int32_t term_length;
    int32_t position_bits_to_shift;
    int32_t initial_term_id;
    bool has_active_gap;
    int32_t active_term_id;
    int32_t active_term_offset;
    int32_t active_length;
    int64_t expiry_ns;
    /* Filled by the gap scanner's callback during a scan. */
    bool scanned_gap;
    int32_t scanned_term_id;
    int32_t scanned_term_offset;
    int32_t scanned_length;
}
aa_loss_detector_t;

typedef struct aa_loss_detector_result_stct
{
    /* End of the contiguous data from the rebuild position: propose-max this into rcv-pos. */
    int64_t rebuild_position;
    /* A gap lies between rebuild_position and the hwm; term_id, term_offset, length describe it. */
    bool loss_found;
    /* That gap became the active one on this scan (not seen before): the loss event congestion
     * control reacts to (C: the scan's loss_found). */
    bool new_gap;
    /* The NAK timer expired on this scan: send a NAK for the gap (or fill it when unreliable). */
    bool send_nak;
    int32_t term_id;
    int32_t term_offset;
    int32_t length;
}
aa_loss_detector_result_t;

/* term_length: a power of two; the generator is copied. */
int aa_loss_detector_init(
    aa_loss_detector_t *detector,
    const aa_nak_delay_generator_t *delay_generator,
    int32_t term_length,
    int32_t initial_term_id);

/*
 * term_buffers: the image's three partitions (index by position as in reference 3).
 * rebuild_position: max(rcv-pos, max sub-pos); hwm_position: rcv-hwm.
 * Returns 1 when result->send_nak is set, else 0.
 */
int aa_loss_detector_scan(
    aa_loss_detector_t *detector,
    const uint8_t *const *term_buffers,
    int64_t rebuild_position,
    int64_t hwm_position,
    int64_t now_ns,
    aa_loss_detector_result_t *result);

/*
 * reliable=false: turn a reported gap into a PAD frame so subscribers move past it ("loss gap
 * fill"). Writes the PAD header with the image's session and stream and release-stores its length,
 * only if the gap's first frame slot is still empty. Call on the thread that rebuilds the term.
 * Returns true when the gap was filled.
 */
bool aa_loss_detector_fill_gap(
    uint8_t *term_buffer,
    int32_t term_id,
    int32_t term_offset,
    int32_t length,
    int32_t session_id,
    int32_t stream_id);

#endif
