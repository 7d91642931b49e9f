/*
 * The frame header and the DATA frame header (reference 1.1, 1.2): the layout of every frame in a log
 * buffer, and of DATA and PAD frames on the wire (protocols/aa_udp_protocol.h has the other frames).
 * All multi-byte fields are little-endian; the structs are used directly on little-endian hosts
 * (x86-64, aarch64), which is checked at compile time.
 */
#ifndef AA_FRAME_H
#define AA_FRAME_H

#include <stdint.h>
#include <stddef.h>

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
/* ATS frames (encrypted transport) use the C numbering; aeron_async does not implement ATS. */
#define AA_HDR_TYPE_ATS_DATA 0x08
#define AA_HDR_TYPE_ATS_SETUP 0x09
#define AA_HDR_TYPE_ATS_SM 0x0A
#define AA_HDR_TYPE_RSP_SETUP 0x0B
#define AA_HDR_TYPE_EXT (-1)

#define AA_DATA_HEADER_BEGIN_FLAG ((uint8_t)0x80)
#define AA_DATA_HEADER_END_FLAG ((uint8_t)0x40)
#define AA_DATA_HEADER_EOS_FLAG ((uint8_t)0x20)
/* A revoked publication's heartbeats: 0xF0 with B, E and EOS (Aeron 1.48, aeron-wave3.md 4.1). */
#define AA_DATA_HEADER_REVOKED_FLAG ((uint8_t)0x10)
#define AA_DATA_HEADER_UNFRAGMENTED ((uint8_t)(AA_DATA_HEADER_BEGIN_FLAG | AA_DATA_HEADER_END_FLAG))

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
#pragma pack(pop)

#define AA_DATA_HEADER_LENGTH ((int32_t)sizeof(aa_data_header_t))
#define AA_FRAME_HEADER_LENGTH ((int32_t)sizeof(aa_frame_header_t))

#endif
