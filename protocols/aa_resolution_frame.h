/*
 * RESOLUTION (RES) frames of the driver-name (gossip) resolver (reference 1.10): sans-I/O encoders
 * and decoders, byte-compatible with Aeron's C and Java drivers. No I/O, no allocation, any buffer
 * alignment, little-endian hosts (as aa_udp_protocol.h checks).
 *
 * A frame is the 8-byte frame header (frame_length = the whole frame, version 0, flags 0, type 0x07)
 * followed by entries, each padded with zeros to a multiple of 8:
 *   0 res_type int8 (1 = name -> IPv4, 2 = name -> IPv6)   1 res_flags uint8 (0x80 SELF)
 *   2 udp_port uint16 LE                                     4 age_in_ms int32 LE
 *   8 address, 4 or 16 raw network-order bytes
 *   12 / 24 name_length int16 LE, then the name (ASCII, no NUL)
 *
 * Decoding is strict, so that one bad frame never reaches the cache: aa_resolution_frame_validate
 * walks the WHOLE frame and refuses it (-1, AA_ERROR_CODE_MALFORMED_COMMAND, a message naming the
 * entry and the fault) unless the datagram holds the frame header with version 0 and type RES,
 * 8 <= frame_length <= datagram length, and every entry, checked against the bytes REMAINING in the
 * frame (Aeron's C checks against the datagram length, reference 1.10 ⚠), has a known type, a name
 * of 1..512 bytes of printable ASCII (0x21..0x7E), a port other than 0, an age >= 0, and its padded
 * length inside the frame; entries end exactly at frame_length. Bytes past frame_length are ignored.
 * A frame with no entries is valid (nothing to learn). The receiver applies no entry of a frame that
 * does not validate and counts the frame as one invalid packet.
 */
#ifndef AA_RESOLUTION_FRAME_H
#define AA_RESOLUTION_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CDEF BEGIN */

#define AA_RESOLUTION_FRAME_HEADER_LENGTH 8
#define AA_RESOLUTION_TYPE_NAME_TO_IP4 1
#define AA_RESOLUTION_TYPE_NAME_TO_IP6 2
#define AA_RESOLUTION_FLAG_SELF 128
/* the longest name the Java resolver accepts (reference 1.10) */
#define AA_RESOLUTION_NAME_MAX_LENGTH 512
/* what one entry of each family takes before its name */
#define AA_RESOLUTION_IPV4_FIXED_LENGTH 14
#define AA_RESOLUTION_IPV6_FIXED_LENGTH 26
#define AA_RESOLUTION_ENTRY_ALIGNMENT 8

typedef struct aa_resolution_entry_stct
{
    int8_t res_type;          /* AA_RESOLUTION_TYPE_NAME_TO_IP4 / _IP6 */
    uint8_t res_flags;        /* AA_RESOLUTION_FLAG_SELF or 0 */
    uint16_t udp_port;
    int32_t age_in_ms;
    uint8_t address[16];      /* network order: the first 4 bytes for IPv4 */
    const uint8_t *name;      /* decoding: points INTO the frame; encoding: the caller's bytes */
    int32_t name_length;
}
aa_resolution_entry_t;

/* Bytes one entry takes on the wire, padding included: align(14 + n, 8) or align(26 + n, 8);
 * -1 for an unknown type or a name length out of 1..512. */
int32_t aa_resolution_entry_length(int8_t res_type, int32_t name_length);

/* Starts a frame at the start of buffer: the header with frame_length 8. Returns 8, or -1 when
 * capacity is below 8. */
int32_t aa_resolution_frame_begin(uint8_t *buffer, size_t capacity);

/* Appends one entry (zero padded) to the frame begun at the start of buffer and updates its
 * frame_length. Returns the new frame_length, or -1 (AA_ERROR_CODE_INVALID_ARGUMENT) when the
 * entry breaks the rules above or does not fit in capacity; the frame is then unchanged. */
int32_t aa_resolution_frame_append(uint8_t *buffer, size_t capacity, const aa_resolution_entry_t *entry);

/* Checks the whole frame (rules above). Returns its number of entries, or -1. */
int32_t aa_resolution_frame_validate(const uint8_t *buffer, size_t length);

/* Reads the entry at *offset (start at AA_RESOLUTION_FRAME_HEADER_LENGTH) of a frame that passed
 * aa_resolution_frame_validate (it re-checks the bounds of the entry it reads). Returns 1 and moves
 * *offset past the entry's padding, 0 at the end of the frame, -1 for a malformed entry. */
int aa_resolution_frame_next(const uint8_t *buffer, size_t length, size_t *offset, aa_resolution_entry_t *entry);

/* CDEF END */

/*
 * Signed frames (ours, beyond Aeron: AERON_DRIVER_RESOLVER_HMAC_KEY_FILE, docs/architecture.md
 * "Driver names"). The frame stays exactly as above and a 48-byte trailer follows it, OUTSIDE
 * frame_length, so the datagram is frame_length + 48 bytes:
 *   0  magic "aahmac01" (8 ASCII bytes: the scheme and its version)
 *   8  timestamp_ms int64 LE (epoch ms when signed)
 *   16 HMAC-SHA256(key, frame bytes [0, frame_length) || trailer bytes [0, 16)), 32 bytes
 * Only drivers with the key read it: an Aeron driver would take the trailer for an entry (Aeron's C
 * reads entries to the end of the datagram, reference 1.10), so with the key set a driver gossips
 * with drivers of ours holding the same key only. Without the key no trailer is sent.
 */
#define AA_RESOLUTION_HMAC_TRAILER_LENGTH 48
#define AA_RESOLUTION_HMAC_MAGIC "aahmac01"
#define AA_RESOLUTION_HMAC_MAGIC_LENGTH 8

/* Appends the trailer to the frame of frame_length bytes at the start of buffer. Returns the
 * datagram's length, or -1 (AA_ERROR_CODE_INVALID_ARGUMENT) when it does not fit in capacity. */
int32_t aa_resolution_frame_sign(
    uint8_t *buffer, size_t capacity, int32_t frame_length, const uint8_t *key, size_t key_length,
    int64_t timestamp_ms);

/* Checks the trailer of a datagram whose frame passed aa_resolution_frame_validate: 1 with
 * *timestamp_ms when it is exactly one trailer with the magic and a MAC that matches (compared in
 * constant time), 0 when the datagram carries no trailer (unsigned), -1 otherwise (bytes past the
 * frame that are no trailer, or a MAC that does not match). */
int aa_resolution_frame_verify(
    const uint8_t *buffer, size_t length, const uint8_t *key, size_t key_length, int64_t *timestamp_ms);

#endif
