#include <string.h>

#include "protocols/aa_udp_frames.h"
#include "util/aa_error.h"
#include "util/aa_bytes.h"

#define AA_UDP_FRAME_ALIGNMENT 32

static inline size_t aa_udp_align(size_t value, size_t alignment)
{
    return (value + (alignment - 1)) & ~(alignment - 1);
}

static inline aa_frame_header_t aa_udp_frame_header(int32_t frame_length, uint8_t flags, int16_t type)
{
    return (aa_frame_header_t){ .frame_length = frame_length, .version = AA_FRAME_HEADER_VERSION, .flags = flags, .type = type };
}

static int aa_udp_check_capacity(size_t capacity, size_t needed, const char *what)
{
    if (capacity < needed)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s needs %zu bytes, buffer capacity is %zu", what, needed, capacity);
        return -1;
    }
    return 0;
}

/* ---- classification ---- */

/* Walks the frames of a DATA datagram. term_length > 0 also checks every frame against the term. */
static aa_udp_frame_kind_t aa_udp_data_batch_walk(const uint8_t *buffer, size_t length, int32_t term_length)
{
    int64_t base_offset = aa_get_i32(buffer + offsetof(aa_data_header_t, term_offset));
    size_t offset = 0;
    while (offset < length)
    {
        size_t remaining = length - offset;
        if (remaining < (size_t)AA_DATA_HEADER_LENGTH)
        {
            return AA_UDP_FRAME_INVALID_LENGTH;
        }
        aa_frame_header_t header;
        memcpy(&header, buffer + offset, sizeof(header));
        if (AA_FRAME_HEADER_VERSION != header.version)
        {
            return AA_UDP_FRAME_INVALID_VERSION;
        }
        if (header.frame_length < AA_DATA_HEADER_LENGTH)
        {
            return AA_UDP_FRAME_INVALID_LENGTH;
        }
        if (AA_HDR_TYPE_PAD == header.type)
        {
            /* Only the PAD header travels; the sender's scan stops after it. */
            if (term_length > 0 && base_offset + (int64_t)offset + header.frame_length > term_length)
            {
                return AA_UDP_FRAME_INVALID_LENGTH;
            }
            break;
        }
        if (AA_HDR_TYPE_DATA != header.type || (size_t)header.frame_length > remaining)
        {
            return AA_UDP_FRAME_INVALID_LENGTH;
        }
        offset += aa_udp_align((size_t)header.frame_length, AA_UDP_FRAME_ALIGNMENT);
    }
    return AA_UDP_FRAME_DATA;
}

static aa_udp_frame_kind_t aa_udp_check_control(
    const aa_frame_header_t *header, size_t length, int32_t fixed_length, aa_udp_frame_kind_t kind)
{
    if (length < (size_t)fixed_length ||
        header->frame_length < fixed_length ||
        (size_t)header->frame_length > length)
    {
        return AA_UDP_FRAME_INVALID_LENGTH;
    }
    return kind;
}

aa_udp_frame_kind_t aa_udp_frame_classify(const uint8_t *buffer, size_t length)
{
    if (NULL == buffer || length < (size_t)AA_FRAME_HEADER_LENGTH)
    {
        return AA_UDP_FRAME_INVALID_SHORT;
    }
    aa_frame_header_t header;
    memcpy(&header, buffer, sizeof(header));
    if (AA_FRAME_HEADER_VERSION != header.version)
    {
        return AA_UDP_FRAME_INVALID_VERSION;
    }

    switch (header.type)
    {
        case AA_HDR_TYPE_DATA:
        case AA_HDR_TYPE_PAD:
        {
            if (length < (size_t)AA_DATA_HEADER_LENGTH)
            {
                return AA_UDP_FRAME_INVALID_LENGTH;
            }
            if (AA_HDR_TYPE_DATA == header.type && 0 == header.frame_length)
            {
                return (size_t)AA_DATA_HEADER_LENGTH == length ? AA_UDP_FRAME_HEARTBEAT : AA_UDP_FRAME_INVALID_LENGTH;
            }
            aa_udp_frame_kind_t kind = aa_udp_data_batch_walk(buffer, length, 0);
            if (AA_UDP_FRAME_DATA == kind && AA_HDR_TYPE_PAD == header.type)
            {
                return AA_UDP_FRAME_PAD;
            }
            return kind;
        }

        case AA_HDR_TYPE_NAK:
            return aa_udp_check_control(&header, length, AA_NAK_HEADER_LENGTH, AA_UDP_FRAME_NAK);

        case AA_HDR_TYPE_SM:
            return aa_udp_check_control(&header, length, AA_STATUS_MESSAGE_HEADER_LENGTH, AA_UDP_FRAME_SM);

        case AA_HDR_TYPE_ERR:
        {
            aa_udp_frame_kind_t kind = aa_udp_check_control(&header, length, AA_ERROR_HEADER_LENGTH, AA_UDP_FRAME_ERR);
            if (AA_UDP_FRAME_ERR == kind)
            {
                int32_t error_length = aa_get_i32(buffer + offsetof(aa_error_header_t, error_length));
                if (error_length < 0 || error_length > header.frame_length - AA_ERROR_HEADER_LENGTH)
                {
                    return AA_UDP_FRAME_INVALID_LENGTH;
                }
            }
            return kind;
        }

        case AA_HDR_TYPE_SETUP:
            return aa_udp_check_control(&header, length, AA_SETUP_HEADER_LENGTH, AA_UDP_FRAME_SETUP);

        case AA_HDR_TYPE_RTTM:
            return aa_udp_check_control(&header, length, AA_RTTM_HEADER_LENGTH, AA_UDP_FRAME_RTTM);

        case AA_HDR_TYPE_RES:
            return aa_udp_check_control(&header, length, AA_FRAME_HEADER_LENGTH, AA_UDP_FRAME_RES);

        case AA_HDR_TYPE_RSP_SETUP:
            return aa_udp_check_control(&header, length, AA_RESPONSE_SETUP_HEADER_LENGTH, AA_UDP_FRAME_RSP_SETUP);

        default:
            return AA_UDP_FRAME_UNKNOWN;
    }
}

const char *aa_udp_frame_kind_name(aa_udp_frame_kind_t kind)
{
    switch (kind)
    {
        case AA_UDP_FRAME_INVALID_LENGTH: return "INVALID_LENGTH";
        case AA_UDP_FRAME_INVALID_VERSION: return "INVALID_VERSION";
        case AA_UDP_FRAME_INVALID_SHORT: return "INVALID_SHORT";
        case AA_UDP_FRAME_UNKNOWN: return "UNKNOWN";
        case AA_UDP_FRAME_PAD: return "PAD";
        case AA_UDP_FRAME_DATA: return "DATA";
        case AA_UDP_FRAME_HEARTBEAT: return "HEARTBEAT";
        case AA_UDP_FRAME_NAK: return "NAK";
        case AA_UDP_FRAME_SM: return "SM";
        case AA_UDP_FRAME_ERR: return "ERR";
        case AA_UDP_FRAME_SETUP: return "SETUP";
        case AA_UDP_FRAME_RTTM: return "RTTM";
        case AA_UDP_FRAME_RES: return "RES";
        case AA_UDP_FRAME_RSP_SETUP: return "RSP_SETUP";
    }
    return "?";
}

bool aa_udp_frame_is_heartbeat(const uint8_t *buffer, size_t length)
{
    if (NULL == buffer || (size_t)AA_DATA_HEADER_LENGTH != length)
    {
        return false;
    }
    aa_frame_header_t header;
    memcpy(&header, buffer, sizeof(header));
    return AA_HDR_TYPE_DATA == header.type && 0 == header.frame_length;
}

bool aa_udp_frame_data_fits_term(const uint8_t *buffer, size_t length, int32_t term_length)
{
    if (NULL == buffer || length < (size_t)AA_DATA_HEADER_LENGTH || term_length <= 0)
    {
        return false;
    }
    int32_t term_offset = aa_get_i32(buffer + offsetof(aa_data_header_t, term_offset));
    if (term_offset < 0 || 0 != (term_offset & (AA_UDP_FRAME_ALIGNMENT - 1)))
    {
        return false;
    }
    if (aa_udp_frame_is_heartbeat(buffer, length))
    {
        return term_offset <= term_length;
    }
    if ((int64_t)term_offset + (int64_t)length > term_length)
    {
        return false;
    }
    return AA_UDP_FRAME_DATA == aa_udp_data_batch_walk(buffer, length, term_length);
}

/* ---- DATA, PAD, heartbeat ---- */

static int32_t aa_udp_encode_data_header(
    uint8_t *buffer, int32_t frame_length, uint8_t flags, int16_t type, int32_t term_offset, int32_t session_id,
    int32_t stream_id, int32_t term_id, int64_t reserved_value)
{
    aa_data_header_t header =
    {
        .frame_header = aa_udp_frame_header(frame_length, flags, type),
        .term_offset = term_offset,
        .session_id = session_id,
        .stream_id = stream_id,
        .term_id = term_id,
        .reserved_value = reserved_value,
    };
    memcpy(buffer, &header, sizeof(header));
    return AA_DATA_HEADER_LENGTH;
}

int32_t aa_udp_frame_encode_data(
    uint8_t *buffer, size_t capacity, uint8_t flags, int32_t term_offset, int32_t session_id, int32_t stream_id,
    int32_t term_id, int64_t reserved_value, const uint8_t *payload, size_t payload_length)
{
    if (payload_length > (size_t)(AA_MAX_UDP_PAYLOAD_LENGTH - AA_DATA_HEADER_LENGTH))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "DATA payload of %zu bytes exceeds the %d byte maximum",
            payload_length, AA_MAX_UDP_PAYLOAD_LENGTH - AA_DATA_HEADER_LENGTH);
        return -1;
    }
    if (NULL == payload && payload_length > 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s", "DATA payload is NULL");
        return -1;
    }
    size_t frame_length = (size_t)AA_DATA_HEADER_LENGTH + payload_length;
    size_t aligned_length = aa_udp_align(frame_length, AA_UDP_FRAME_ALIGNMENT);
    if (aa_udp_check_capacity(capacity, aligned_length, "DATA frame") < 0)
    {
        return -1;
    }
    aa_udp_encode_data_header(
        buffer, (int32_t)frame_length, flags, AA_HDR_TYPE_DATA, term_offset, session_id, stream_id, term_id, reserved_value);
    if (payload_length > 0)
    {
        memcpy(buffer + AA_DATA_HEADER_LENGTH, payload, payload_length);
    }
    memset(buffer + frame_length, 0, aligned_length - frame_length);
    return (int32_t)aligned_length;
}

int32_t aa_udp_frame_encode_pad(
    uint8_t *buffer, size_t capacity, int32_t term_offset, int32_t session_id, int32_t stream_id, int32_t term_id,
    int32_t pad_length)
{
    if (pad_length < AA_DATA_HEADER_LENGTH || 0 != (pad_length & (AA_UDP_FRAME_ALIGNMENT - 1)))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "PAD length %d must be a multiple of 32 and at least 32", pad_length);
        return -1;
    }
    if (aa_udp_check_capacity(capacity, AA_DATA_HEADER_LENGTH, "PAD header") < 0)
    {
        return -1;
    }
    return aa_udp_encode_data_header(
        buffer, pad_length, AA_DATA_HEADER_UNFRAGMENTED, AA_HDR_TYPE_PAD, term_offset, session_id, stream_id, term_id, 0);
}

int32_t aa_udp_frame_encode_heartbeat(
    uint8_t *buffer, size_t capacity, int32_t term_offset, int32_t session_id, int32_t stream_id, int32_t term_id,
    bool end_of_stream)
{
    if (aa_udp_check_capacity(capacity, AA_DATA_HEADER_LENGTH, "heartbeat") < 0)
    {
        return -1;
    }
    uint8_t flags = end_of_stream ?
        (uint8_t)(AA_DATA_HEADER_UNFRAGMENTED | AA_DATA_HEADER_EOS_FLAG) : AA_DATA_HEADER_UNFRAGMENTED;
    return aa_udp_encode_data_header(buffer, 0, flags, AA_HDR_TYPE_DATA, term_offset, session_id, stream_id, term_id, 0);
}

static int aa_udp_expect(const uint8_t *buffer, size_t length, aa_udp_frame_kind_t expected, const char *what)
{
    aa_udp_frame_kind_t kind = aa_udp_frame_classify(buffer, length);
    if (expected != kind)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "not a valid %s frame: %s (%zu bytes)",
            what, aa_udp_frame_kind_name(kind), length);
        return -1;
    }
    return 0;
}

/* Decodes a frame of fixed layout: checks it is a valid frame of the expected kind, copies its header. */
static int aa_udp_decode_fixed(
    const uint8_t *buffer, size_t length, aa_udp_frame_kind_t expected, const char *what, void *header, size_t header_length)
{
    if (aa_udp_expect(buffer, length, expected, what) < 0)
    {
        return -1;
    }
    memcpy(header, buffer, header_length);
    return 0;
}

/* Writes a frame of fixed layout, encoded in header, when the buffer can hold it; returns its length. */
static int32_t aa_udp_put_fixed(
    uint8_t *buffer, size_t capacity, const char *what, const void *header, size_t header_length)
{
    if (aa_udp_check_capacity(capacity, header_length, what) < 0)
    {
        return -1;
    }
    memcpy(buffer, header, header_length);
    return (int32_t)header_length;
}

int aa_udp_frame_decode_data_header(const uint8_t *buffer, size_t length, aa_data_header_t *header)
{
    aa_udp_frame_kind_t kind = aa_udp_frame_classify(buffer, length);
    if (AA_UDP_FRAME_DATA != kind && AA_UDP_FRAME_PAD != kind && AA_UDP_FRAME_HEARTBEAT != kind)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "not a valid DATA frame: %s (%zu bytes)",
            aa_udp_frame_kind_name(kind), length);
        return -1;
    }
    memcpy(header, buffer, sizeof(*header));
    return 0;
}

/* ---- SETUP ---- */

int32_t aa_udp_frame_encode_setup(
    uint8_t *buffer, size_t capacity, uint8_t flags, int32_t term_offset, int32_t session_id, int32_t stream_id,
    int32_t initial_term_id, int32_t active_term_id, int32_t term_length, int32_t mtu, int32_t ttl)
{
    aa_setup_header_t setup =
    {
        .frame_header = aa_udp_frame_header(AA_SETUP_HEADER_LENGTH, flags, AA_HDR_TYPE_SETUP),
        .term_offset = term_offset,
        .session_id = session_id,
        .stream_id = stream_id,
        .initial_term_id = initial_term_id,
        .active_term_id = active_term_id,
        .term_length = term_length,
        .mtu = mtu,
        .ttl = ttl,
    };
    return aa_udp_put_fixed(buffer, capacity, "SETUP", &setup, sizeof(setup));
}

int aa_udp_frame_decode_setup(const uint8_t *buffer, size_t length, aa_setup_header_t *setup)
{
    return aa_udp_decode_fixed(buffer, length, AA_UDP_FRAME_SETUP, "SETUP", setup, sizeof(*setup));
}

/* ---- STATUS MESSAGE ---- */

int32_t aa_udp_frame_encode_status_message(
    uint8_t *buffer, size_t capacity, uint8_t flags, int32_t session_id, int32_t stream_id,
    int32_t consumption_term_id, int32_t consumption_term_offset, int32_t receiver_window, int64_t receiver_id,
    const int64_t *group_tag)
{
    int32_t frame_length = NULL == group_tag ? AA_STATUS_MESSAGE_HEADER_LENGTH : AA_STATUS_MESSAGE_WITH_GROUP_TAG_LENGTH;
    if (aa_udp_check_capacity(capacity, (size_t)frame_length, "SM") < 0)
    {
        return -1;
    }
    aa_status_message_header_t sm =
    {
        .frame_header = aa_udp_frame_header(frame_length, flags, AA_HDR_TYPE_SM),
        .session_id = session_id,
        .stream_id = stream_id,
        .consumption_term_id = consumption_term_id,
        .consumption_term_offset = consumption_term_offset,
        .receiver_window = receiver_window,
        .receiver_id = receiver_id,
    };
    memcpy(buffer, &sm, sizeof(sm));
    if (NULL != group_tag)
    {
        memcpy(buffer + AA_STATUS_MESSAGE_HEADER_LENGTH, group_tag, sizeof(*group_tag));
    }
    return frame_length;
}

int aa_udp_frame_decode_status_message(const uint8_t *buffer, size_t length, aa_udp_status_message_t *sm)
{
    if (aa_udp_decode_fixed(buffer, length, AA_UDP_FRAME_SM, "SM", &sm->header, sizeof(sm->header)) < 0)
    {
        return -1;
    }
    sm->has_group_tag = AA_STATUS_MESSAGE_WITH_GROUP_TAG_LENGTH == sm->header.frame_header.frame_length;
    sm->group_tag = 0;
    if (sm->has_group_tag)
    {
        memcpy(&sm->group_tag, buffer + AA_STATUS_MESSAGE_HEADER_LENGTH, sizeof(sm->group_tag));
    }
    return 0;
}

/* ---- NAK ---- */

int32_t aa_udp_frame_encode_nak(
    uint8_t *buffer, size_t capacity, int32_t session_id, int32_t stream_id, int32_t term_id, int32_t term_offset,
    int32_t length)
{
    aa_nak_header_t nak =
    {
        .frame_header = aa_udp_frame_header(AA_NAK_HEADER_LENGTH, 0, AA_HDR_TYPE_NAK),
        .session_id = session_id,
        .stream_id = stream_id,
        .term_id = term_id,
        .term_offset = term_offset,
        .length = length,
    };
    return aa_udp_put_fixed(buffer, capacity, "NAK", &nak, sizeof(nak));
}

int aa_udp_frame_decode_nak(const uint8_t *buffer, size_t length, aa_nak_header_t *nak)
{
    return aa_udp_decode_fixed(buffer, length, AA_UDP_FRAME_NAK, "NAK", nak, sizeof(*nak));
}

/* ---- RTT MEASUREMENT ---- */

int32_t aa_udp_frame_encode_rttm(
    uint8_t *buffer, size_t capacity, uint8_t flags, int32_t session_id, int32_t stream_id, int64_t echo_timestamp,
    int64_t reception_delta, int64_t receiver_id)
{
    aa_rttm_header_t rttm =
    {
        .frame_header = aa_udp_frame_header(AA_RTTM_HEADER_LENGTH, flags, AA_HDR_TYPE_RTTM),
        .session_id = session_id,
        .stream_id = stream_id,
        .echo_timestamp = echo_timestamp,
        .reception_delta = reception_delta,
        .receiver_id = receiver_id,
    };
    return aa_udp_put_fixed(buffer, capacity, "RTTM", &rttm, sizeof(rttm));
}

int32_t aa_udp_frame_encode_rttm_reply(uint8_t *buffer, size_t capacity, const aa_rttm_header_t *request)
{
    return aa_udp_frame_encode_rttm(
        buffer, capacity, 0, request->session_id, request->stream_id, request->echo_timestamp, 0, request->receiver_id);
}

int aa_udp_frame_decode_rttm(const uint8_t *buffer, size_t length, aa_rttm_header_t *rttm)
{
    return aa_udp_decode_fixed(buffer, length, AA_UDP_FRAME_RTTM, "RTTM", rttm, sizeof(*rttm));
}

/* ---- ERROR ---- */

int32_t aa_udp_frame_encode_error(
    uint8_t *buffer, size_t capacity, int32_t session_id, int32_t stream_id, int64_t receiver_id,
    const int64_t *group_tag, int32_t error_code, const char *text, size_t text_length)
{
    if (NULL == text)
    {
        text_length = 0;
    }
    if (text_length > AA_ERROR_MAX_TEXT_LENGTH)
    {
        text_length = AA_ERROR_MAX_TEXT_LENGTH;
    }
    size_t frame_length = (size_t)AA_ERROR_HEADER_LENGTH + text_length;
    if (aa_udp_check_capacity(capacity, frame_length, "ERR") < 0)
    {
        return -1;
    }
    aa_error_header_t error =
    {
        .frame_header = aa_udp_frame_header(
            (int32_t)frame_length, NULL == group_tag ? 0 : AA_ERROR_HEADER_HAS_GROUP_TAG_FLAG, AA_HDR_TYPE_ERR),
        .session_id = session_id,
        .stream_id = stream_id,
        .receiver_id = receiver_id,
        .group_tag = NULL == group_tag ? 0 : *group_tag,
        .error_code = error_code,
        .error_length = (int32_t)text_length,
    };
    memcpy(buffer, &error, sizeof(error));
    if (text_length > 0)
    {
        memcpy(buffer + AA_ERROR_HEADER_LENGTH, text, text_length);
    }
    return (int32_t)frame_length;
}

int aa_udp_frame_decode_error(const uint8_t *buffer, size_t length, aa_udp_error_t *error)
{
    if (aa_udp_decode_fixed(buffer, length, AA_UDP_FRAME_ERR, "ERR", &error->header, sizeof(error->header)) < 0)
    {
        return -1;
    }
    error->has_group_tag = 0 != (error->header.frame_header.flags & AA_ERROR_HEADER_HAS_GROUP_TAG_FLAG);
    error->text = buffer + AA_ERROR_HEADER_LENGTH;
    error->text_length = (size_t)error->header.error_length;
    return 0;
}

/* ---- RESPONSE SETUP ---- */

int32_t aa_udp_frame_encode_response_setup(
    uint8_t *buffer, size_t capacity, int32_t session_id, int32_t stream_id, int32_t response_session_id)
{
    aa_response_setup_header_t rsp =
    {
        .frame_header = aa_udp_frame_header(AA_RESPONSE_SETUP_HEADER_LENGTH, 0, AA_HDR_TYPE_RSP_SETUP),
        .session_id = session_id,
        .stream_id = stream_id,
        .response_session_id = response_session_id,
    };
    return aa_udp_put_fixed(buffer, capacity, "RSP_SETUP", &rsp, sizeof(rsp));
}

int aa_udp_frame_decode_response_setup(const uint8_t *buffer, size_t length, aa_response_setup_header_t *rsp)
{
    return aa_udp_decode_fixed(buffer, length, AA_UDP_FRAME_RSP_SETUP, "RSP_SETUP", rsp, sizeof(*rsp));
}
