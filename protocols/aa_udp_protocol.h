/*
 * Aeron wire frames (reference section 1). One packed struct per frame, each embedding the common
 * frame header. All multi-byte fields are little-endian on the wire; the structs are used directly
 * on little-endian hosts (x86-64, aarch64), which is checked at compile time.
 */
#ifndef AA_UDP_PROTOCOL_H
#define AA_UDP_PROTOCOL_H

#include <stdint.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "aeron_async frames are little-endian on the wire; big-endian hosts need byte swapping here"
#endif

#define AA_FRAME_HEADER_VERSION 0

#define AA_HDR_TYPE_PAD 0x00
#define AA_HDR_TYPE_DATA 0x01
#define AA_HDR_TYPE_NAK 0x02
#define AA_HDR_TYPE_SM 0x03
#define AA_HDR_TYPE_ERR 0x04
#define AA_HDR_TYPE_SETUP 0x05
#define AA_HDR_TYPE_RTTM 0x06
#define AA_HDR_TYPE_RES 0x07
#define AA_HDR_TYPE_RSP_SETUP 0x0B
#define AA_HDR_TYPE_EXT (-1)

#define AA_DATA_HEADER_BEGIN_FLAG ((uint8_t)0x80)
#define AA_DATA_HEADER_END_FLAG ((uint8_t)0x40)
#define AA_DATA_HEADER_EOS_FLAG ((uint8_t)0x20)
#define AA_DATA_HEADER_UNFRAGMENTED ((uint8_t)(AA_DATA_HEADER_BEGIN_FLAG | AA_DATA_HEADER_END_FLAG))

#define AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG ((uint8_t)0x80)
#define AA_STATUS_MESSAGE_HEADER_EOS_FLAG ((uint8_t)0x40)
#define AA_SETUP_HEADER_SEND_RESPONSE_FLAG ((uint8_t)0x80)
#define AA_SETUP_HEADER_GROUP_FLAG ((uint8_t)0x40)
#define AA_RTTM_HEADER_REPLY_FLAG ((uint8_t)0x80)

#pragma pack(push)
#pragma pack(4)
typedef struct aa_frame_header_stct
{
    int32_t frame_length;
    int8_t version;
    uint8_t flags;
    int16_t type;
}
aa_frame_header_t;

typedef struct aa_data_header_stct
{
    aa_frame_header_t frame_header;
    int32_t term_offset;
    int32_t session_id;
    int32_t stream_id;
    int32_t term_id;
    int64_t reserved_value;
}
aa_data_header_t;

typedef struct aa_setup_header_stct
{
    aa_frame_header_t frame_header;
    int32_t term_offset;
    int32_t session_id;
    int32_t stream_id;
    int32_t initial_term_id;
    int32_t active_term_id;
    int32_t term_length;
    int32_t mtu;
    int32_t ttl;
}
aa_setup_header_t;

typedef struct aa_status_message_header_stct
{
    aa_frame_header_t frame_header;
    int32_t session_id;
    int32_t stream_id;
    int32_t consumption_term_id;
    int32_t consumption_term_offset;
    int32_t receiver_window;
    int64_t receiver_id;
}
aa_status_message_header_t;

typedef struct aa_nak_header_stct
{
    aa_frame_header_t frame_header;
    int32_t session_id;
    int32_t stream_id;
    int32_t term_id;
    int32_t term_offset;
    int32_t length;
}
aa_nak_header_t;

typedef struct aa_rttm_header_stct
{
    aa_frame_header_t frame_header;
    int32_t session_id;
    int32_t stream_id;
    int64_t echo_timestamp;
    int64_t reception_delta;
    int64_t receiver_id;
}
aa_rttm_header_t;

typedef struct aa_error_header_stct
{
    aa_frame_header_t frame_header;
    int32_t session_id;
    int32_t stream_id;
    int64_t receiver_id;
    int64_t group_tag;
    int32_t error_code;
    int32_t error_length;
}
aa_error_header_t;
#pragma pack(pop)

#define AA_DATA_HEADER_LENGTH ((int32_t)sizeof(aa_data_header_t))

_Static_assert(sizeof(aa_frame_header_t) == 8, "frame header is 8 bytes");
_Static_assert(sizeof(aa_data_header_t) == 32, "data header is 32 bytes");
_Static_assert(sizeof(aa_setup_header_t) == 40, "setup header is 40 bytes");
_Static_assert(sizeof(aa_status_message_header_t) == 36, "status message is 36 bytes");
_Static_assert(sizeof(aa_nak_header_t) == 28, "nak is 28 bytes");
_Static_assert(sizeof(aa_rttm_header_t) == 40, "rttm is 40 bytes");
_Static_assert(sizeof(aa_error_header_t) == 40, "error header is 40 bytes");

#endif
