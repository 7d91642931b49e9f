/*
 * Fields of wire frames and of the archive's files at any alignment: read and written with memcpy,
 * in the host's order, which is little-endian like the wire and the files (checked in
 * protocols/aa_udp_protocol.h). p points at the field.
 */
#ifndef AA_BYTES_H
#define AA_BYTES_H

#include <stdint.h>
#include <string.h>

/* aa_get_<name>(p) reads and aa_put_<name>(p, v) writes one field of the type: u16, u32, i16, i32, i64. */
#define AA_BYTES_FIELD(name, type) \
    static inline type aa_get_##name(const uint8_t *p) \
    { \
        type v; \
        memcpy(&v, p, sizeof(v)); \
        return v; \
    } \
    static inline void aa_put_##name(uint8_t *p, type v) \
    { \
        memcpy(p, &v, sizeof(v)); \
    }

AA_BYTES_FIELD(u16, uint16_t)
AA_BYTES_FIELD(u32, uint32_t)
AA_BYTES_FIELD(i16, int16_t)
AA_BYTES_FIELD(i32, int32_t)
AA_BYTES_FIELD(i64, int64_t)

#undef AA_BYTES_FIELD

#endif
