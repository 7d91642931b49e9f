/*
 * Aeron wire frames (reference section 1). One packed struct per frame, each embedding the common
 * frame header (logbuffer/aa_frame.h: the frame header and the DATA header are also the layout of
 * every frame in a log buffer). All multi-byte fields are little-endian on the wire; the structs are used directly
 * on little-endian hosts (x86-64, aarch64), which is checked at compile time.
 */
#ifndef AA_UDP_PROTOCOL_H
#define AA_UDP_PROTOCOL_H

#include <stdint.h>
#include <stddef.h>

#include "logbuffer/aa_frame.h"


#define AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG ((uint8_t)0x80)
#define AA_STATUS_MESSAGE_HEADER_EOS_FLAG ((uint8_t)0x40)
#define AA_SETUP_HEADER_SEND_RESPONSE_FLAG ((uint8_t)0x80)
#define AA_SETUP_HEADER_GROUP_FLAG ((uint8_t)0x40)
#define AA_RTTM_HEADER_REPLY_FLAG ((uint8_t)0x80)
#define AA_ERROR_HEADER_HAS_GROUP_TAG_FLAG ((uint8_t)0x08)
#define AA_RES_HEADER_SELF_FLAG ((uint8_t)0x80)

/* Resolution entry types (reference 1.10). */
#define AA_RES_HEADER_TYPE_NAME_TO_IP4_MD ((int8_t)0x01)
#define AA_RES_HEADER_TYPE_NAME_TO_IP6_MD ((int8_t)0x02)

/* Error frame text is at most this long (reference 1.9). */
#define AA_ERROR_MAX_TEXT_LENGTH 1023
/* Longest resolver name the Java resolver accepts (reference 1.10). */
#define AA_RES_MAX_NAME_LENGTH 512
/* Largest UDP payload Aeron sends (and the largest MTU). */
#define AA_MAX_UDP_PAYLOAD_LENGTH 65504

#pragma pack(push)
#pragma pack(4)
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

typedef struct aa_response_setup_header_stct
{
    aa_frame_header_t frame_header;
    int32_t session_id;
    int32_t stream_id;
    int32_t response_session_id;
}
aa_response_setup_header_t;

/* One entry of a RES frame; the name (name_length bytes, no NUL) follows, then padding to 8. */
typedef struct aa_resolution_header_stct
{
    int8_t res_type;
    uint8_t res_flags;
    uint16_t udp_port;
    int32_t age_in_ms;
}
aa_resolution_header_t;

typedef struct aa_resolution_header_ipv4_stct
{
    aa_resolution_header_t resolution_header;
    uint8_t addr[4];
    int16_t name_length;
}
aa_resolution_header_ipv4_t;

typedef struct aa_resolution_header_ipv6_stct
{
    aa_resolution_header_t resolution_header;
    uint8_t addr[16];
    int16_t name_length;
}
aa_resolution_header_ipv6_t;
#pragma pack(pop)

#define AA_SETUP_HEADER_LENGTH ((int32_t)sizeof(aa_setup_header_t))
#define AA_STATUS_MESSAGE_HEADER_LENGTH ((int32_t)sizeof(aa_status_message_header_t))
/* An SM carrying the optional 8-byte group tag. */
#define AA_STATUS_MESSAGE_WITH_GROUP_TAG_LENGTH (AA_STATUS_MESSAGE_HEADER_LENGTH + (int32_t)sizeof(int64_t))
#define AA_NAK_HEADER_LENGTH ((int32_t)sizeof(aa_nak_header_t))
#define AA_RTTM_HEADER_LENGTH ((int32_t)sizeof(aa_rttm_header_t))
#define AA_ERROR_HEADER_LENGTH ((int32_t)sizeof(aa_error_header_t))
#define AA_RESPONSE_SETUP_HEADER_LENGTH ((int32_t)sizeof(aa_response_setup_header_t))
/* Fixed part of a resolution entry, before the name: 14 bytes for IPv4, 26 for IPv6. */
#define AA_RES_IPV4_ENTRY_FIXED_LENGTH ((int32_t)(offsetof(aa_resolution_header_ipv4_t, name_length) + sizeof(int16_t)))
#define AA_RES_IPV6_ENTRY_FIXED_LENGTH ((int32_t)(offsetof(aa_resolution_header_ipv6_t, name_length) + sizeof(int16_t)))
#define AA_RES_ENTRY_ALIGNMENT 8

_Static_assert(sizeof(aa_frame_header_t) == 8, "frame header is 8 bytes");
_Static_assert(sizeof(aa_data_header_t) == 32, "data header is 32 bytes");
_Static_assert(sizeof(aa_setup_header_t) == 40, "setup header is 40 bytes");
_Static_assert(sizeof(aa_status_message_header_t) == 36, "status message is 36 bytes");
_Static_assert(sizeof(aa_nak_header_t) == 28, "nak is 28 bytes");
_Static_assert(sizeof(aa_rttm_header_t) == 40, "rttm is 40 bytes");
_Static_assert(sizeof(aa_error_header_t) == 40, "error header is 40 bytes");
_Static_assert(sizeof(aa_response_setup_header_t) == 20, "response setup is 20 bytes");
_Static_assert(sizeof(aa_resolution_header_t) == 8, "resolution entry common part is 8 bytes");
_Static_assert(AA_RES_IPV4_ENTRY_FIXED_LENGTH == 14, "IPv4 resolution entry fixed part is 14 bytes");
_Static_assert(AA_RES_IPV6_ENTRY_FIXED_LENGTH == 26, "IPv6 resolution entry fixed part is 26 bytes");

/* Field offsets from the reference tables. */
_Static_assert(offsetof(aa_frame_header_t, version) == 4, "version @4");
_Static_assert(offsetof(aa_frame_header_t, flags) == 5, "flags @5");
_Static_assert(offsetof(aa_frame_header_t, type) == 6, "type @6");
_Static_assert(offsetof(aa_data_header_t, term_offset) == 8, "data term_offset @8");
_Static_assert(offsetof(aa_data_header_t, term_id) == 20, "data term_id @20");
_Static_assert(offsetof(aa_data_header_t, reserved_value) == 24, "data reserved_value @24");
_Static_assert(offsetof(aa_setup_header_t, initial_term_id) == 20, "setup initial_term_id @20");
_Static_assert(offsetof(aa_setup_header_t, ttl) == 36, "setup ttl @36");
_Static_assert(offsetof(aa_status_message_header_t, consumption_term_id) == 16, "sm term_id @16");
_Static_assert(offsetof(aa_status_message_header_t, receiver_window) == 24, "sm window @24");
_Static_assert(offsetof(aa_status_message_header_t, receiver_id) == 28, "sm receiver_id @28 (4-byte aligned)");
_Static_assert(offsetof(aa_nak_header_t, term_id) == 16, "nak term_id @16 (before term_offset)");
_Static_assert(offsetof(aa_nak_header_t, term_offset) == 20, "nak term_offset @20");
_Static_assert(offsetof(aa_nak_header_t, length) == 24, "nak length @24");
_Static_assert(offsetof(aa_rttm_header_t, echo_timestamp) == 16, "rttm echo @16");
_Static_assert(offsetof(aa_rttm_header_t, receiver_id) == 32, "rttm receiver_id @32");
_Static_assert(offsetof(aa_error_header_t, receiver_id) == 16, "err receiver_id @16");
_Static_assert(offsetof(aa_error_header_t, group_tag) == 24, "err group_tag @24");
_Static_assert(offsetof(aa_error_header_t, error_code) == 32, "err code @32");
_Static_assert(offsetof(aa_error_header_t, error_length) == 36, "err length @36");
_Static_assert(offsetof(aa_response_setup_header_t, response_session_id) == 16, "rsp_setup response_session_id @16");
_Static_assert(offsetof(aa_resolution_header_t, udp_port) == 2, "res port @2");
_Static_assert(offsetof(aa_resolution_header_t, age_in_ms) == 4, "res age @4");
_Static_assert(offsetof(aa_resolution_header_ipv4_t, addr) == 8, "res ipv4 addr @8");
_Static_assert(offsetof(aa_resolution_header_ipv4_t, name_length) == 12, "res ipv4 name_length @12");
_Static_assert(offsetof(aa_resolution_header_ipv6_t, name_length) == 24, "res ipv6 name_length @24");

#endif
