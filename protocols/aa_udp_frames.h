/*
 * UDP frame codecs (reference section 1): encoders, decoders and the receive-side classifier for
 * every Aeron frame type, working on plain byte buffers of any alignment. No I/O, no allocation.
 *
 * Encoders write one frame at the start of `buffer` and return the number of bytes written, or -1
 * (AA_SET_ERR) when `capacity` is too small or an argument is out of range. DATA frames are padded
 * with zeros to the 32-byte frame alignment; control frames are written at their exact length.
 *
 * aa_udp_frame_classify() applies the receive-side validation of reference 1.12 and a little more
 * (marked "stricter than C" below) and tells the caller what a datagram is: a frame kind to
 * dispatch, an unknown type to ignore silently, or one of the invalid kinds (< 0) to count as an
 * invalid packet. Decoders re-check what they need and return -1 (AA_SET_ERR) on malformed input,
 * so they are safe to call without classifying first.
 */
#ifndef AA_UDP_FRAMES_H
#define AA_UDP_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocols/aa_udp_protocol.h"

typedef enum aa_udp_frame_kind_enum
{
    /* The type's fixed header does not fit, or frame_length is out of bounds for the type. */
    AA_UDP_FRAME_INVALID_LENGTH = -3,
    /* version != 0. */
    AA_UDP_FRAME_INVALID_VERSION = -2,
    /* Fewer than 8 bytes: not even a frame header. */
    AA_UDP_FRAME_INVALID_SHORT = -1,
    /* A type this library does not handle (ATS, EXT, unassigned): ignore without counting. */
    AA_UDP_FRAME_UNKNOWN = 0,
    /* A datagram whose first frame is a PAD header (the rest of the term is padding). */
    AA_UDP_FRAME_PAD,
    /* A batch of one or more DATA frames (possibly ending with a PAD header). */
    AA_UDP_FRAME_DATA,
    /* A 32-byte DATA header with frame_length 0. */
    AA_UDP_FRAME_HEARTBEAT,
    AA_UDP_FRAME_NAK,
    AA_UDP_FRAME_SM,
    AA_UDP_FRAME_ERR,
    AA_UDP_FRAME_SETUP,
    AA_UDP_FRAME_RTTM,
    AA_UDP_FRAME_RES,
    AA_UDP_FRAME_RSP_SETUP
}
aa_udp_frame_kind_t;

/*
 * Classifies a received datagram (reference 1.12):
 * - fewer than 8 bytes -> INVALID_SHORT; version != 0 -> INVALID_VERSION;
 * - shorter than the type's fixed header (DATA/PAD 32, SETUP 40, RTTM 40, NAK 28, SM 36, ERR 40,
 *   RSP_SETUP 20, RES 8) -> INVALID_LENGTH; SM and ERR also when the datagram is shorter than
 *   frame_length;
 * - unknown types -> UNKNOWN.
 * Stricter than C: control frames need fixed length <= frame_length <= datagram length; an ERR's
 * error_length must fit in the frame; every frame of a DATA batch must be a DATA frame with
 * 32 <= frame_length <= the bytes left, or a final PAD header with frame_length >= 32; a 32-byte
 * DATA header with frame_length 0 is a heartbeat, any other frame_length 0 is invalid.
 */
aa_udp_frame_kind_t aa_udp_frame_classify(const uint8_t *buffer, size_t length);

/* True for the kinds the receiver counts as invalid packets. */
static inline bool aa_udp_frame_kind_is_invalid(aa_udp_frame_kind_t kind)
{
    return kind < 0;
}

/* A short fixed name for logs and tests ("DATA", "INVALID_VERSION", ...). */
const char *aa_udp_frame_kind_name(aa_udp_frame_kind_t kind);

/* The S (end of stream) bit; C tests only this bit, Java wants flags == 0xE0. Emit 0xE0. */
static inline bool aa_udp_data_flags_is_end_of_stream(uint8_t flags)
{
    return 0 != (flags & AA_DATA_HEADER_EOS_FLAG);
}

/* A revoked publication's end-of-stream heartbeat (flags 0xF0). */
static inline bool aa_udp_data_flags_is_revoked(uint8_t flags)
{
    return 0 != (flags & AA_DATA_HEADER_EOS_FLAG) && 0 != (flags & AA_DATA_HEADER_REVOKED_FLAG);
}

/* The stream position of (term_id, term_offset) as reference 3 computes it (wrapping term count),
 * but defined for term ids before the initial term too: wire input can carry any term id, and
 * left-shifting the negative term count (as aa_compute_position does) is undefined behaviour. */
static inline int64_t aa_udp_compute_position(
    int32_t term_id, int32_t term_offset, int32_t position_bits_to_shift, int32_t initial_term_id)
{
    int64_t term_count = (int64_t)(int32_t)((uint32_t)term_id - (uint32_t)initial_term_id);
    return term_count * ((int64_t)1 << position_bits_to_shift) + term_offset;
}

/* length == 32 and frame_length == 0 with type DATA (reference 1.4). */
bool aa_udp_frame_is_heartbeat(const uint8_t *buffer, size_t length);

/*
 * Checks a classified DATA / PAD / HEARTBEAT datagram against the receiving term before it is
 * inserted: term_offset is 32-aligned and >= 0, the datagram fits in the term from there, and a
 * PAD's whole padded region ends inside the term. Returns false when the datagram must be dropped.
 */
bool aa_udp_frame_data_fits_term(const uint8_t *buffer, size_t length, int32_t term_length);

/* ---- DATA, PAD, heartbeat ---- */

/* One DATA frame: frame_length = 32 + payload_length, zero padding up to the next multiple of 32.
 * Returns the aligned length written. */
int32_t aa_udp_frame_encode_data(
    uint8_t *buffer, size_t capacity, uint8_t flags, int32_t term_offset, int32_t session_id, int32_t stream_id,
    int32_t term_id, int64_t reserved_value, const uint8_t *payload, size_t payload_length);

/* A PAD header covering pad_length bytes of the term (a multiple of 32, >= 32); writes 32 bytes. */
int32_t aa_udp_frame_encode_pad(
    uint8_t *buffer, size_t capacity, int32_t term_offset, int32_t session_id, int32_t stream_id, int32_t term_id,
    int32_t pad_length);

/* A heartbeat at the sender position: frame_length 0, flags 0xC0 or 0xE0 at end of stream. */
int32_t aa_udp_frame_encode_heartbeat(
    uint8_t *buffer, size_t capacity, int32_t term_offset, int32_t session_id, int32_t stream_id, int32_t term_id,
    bool end_of_stream);

/* The first frame header of a DATA, PAD or heartbeat datagram. */
int aa_udp_frame_decode_data_header(const uint8_t *buffer, size_t length, aa_data_header_t *header);

/* ---- SETUP ---- */

int32_t aa_udp_frame_encode_setup(
    uint8_t *buffer, size_t capacity, uint8_t flags, int32_t term_offset, int32_t session_id, int32_t stream_id,
    int32_t initial_term_id, int32_t active_term_id, int32_t term_length, int32_t mtu, int32_t ttl);

int aa_udp_frame_decode_setup(const uint8_t *buffer, size_t length, aa_setup_header_t *setup);

/* ---- STATUS MESSAGE ---- */

typedef struct aa_udp_status_message_stct
{
    aa_status_message_header_t header;
    /* Only when frame_length is exactly 44; any other extra length means "no tag". */
    bool has_group_tag;
    int64_t group_tag;
}
aa_udp_status_message_t;

/* group_tag NULL: 36 bytes; otherwise 44 bytes with the tag at offset 36. */
int32_t aa_udp_frame_encode_status_message(
    uint8_t *buffer, size_t capacity, uint8_t flags, int32_t session_id, int32_t stream_id,
    int32_t consumption_term_id, int32_t consumption_term_offset, int32_t receiver_window, int64_t receiver_id,
    const int64_t *group_tag);

int aa_udp_frame_decode_status_message(const uint8_t *buffer, size_t length, aa_udp_status_message_t *sm);

/* ---- NAK ---- */

int32_t aa_udp_frame_encode_nak(
    uint8_t *buffer, size_t capacity, int32_t session_id, int32_t stream_id, int32_t term_id, int32_t term_offset,
    int32_t length);

int aa_udp_frame_decode_nak(const uint8_t *buffer, size_t length, aa_nak_header_t *nak);

/* ---- RTT MEASUREMENT ---- */

/* flags AA_RTTM_HEADER_REPLY_FLAG asks the peer to answer. */
int32_t aa_udp_frame_encode_rttm(
    uint8_t *buffer, size_t capacity, uint8_t flags, int32_t session_id, int32_t stream_id, int64_t echo_timestamp,
    int64_t reception_delta, int64_t receiver_id);

/* The answer to a request that had the REPLY flag: flags 0, same session, stream, echo timestamp
 * and receiver id, reception_delta 0. */
int32_t aa_udp_frame_encode_rttm_reply(uint8_t *buffer, size_t capacity, const aa_rttm_header_t *request);

int aa_udp_frame_decode_rttm(const uint8_t *buffer, size_t length, aa_rttm_header_t *rttm);

/* ---- ERROR ---- */

typedef struct aa_udp_error_stct
{
    aa_error_header_t header;
    /* The HAS_GROUP_TAG flag (0x08); header.group_tag is meaningful only when set. */
    bool has_group_tag;
    /* Points into the decoded buffer. */
    const uint8_t *text;
    size_t text_length;
}
aa_udp_error_t;

/* frame_length = 40 + text length, no padding; text longer than 1023 bytes is truncated.
 * group_tag NULL: flags 0 and group_tag field 0. */
int32_t aa_udp_frame_encode_error(
    uint8_t *buffer, size_t capacity, int32_t session_id, int32_t stream_id, int64_t receiver_id,
    const int64_t *group_tag, int32_t error_code, const char *text, size_t text_length);

int aa_udp_frame_decode_error(const uint8_t *buffer, size_t length, aa_udp_error_t *error);

/* ---- RESPONSE SETUP ---- */

int32_t aa_udp_frame_encode_response_setup(
    uint8_t *buffer, size_t capacity, int32_t session_id, int32_t stream_id, int32_t response_session_id);

int aa_udp_frame_decode_response_setup(const uint8_t *buffer, size_t length, aa_response_setup_header_t *rsp);

/* RESOLUTION frames: aa_resolution_frame.h. */

#endif
