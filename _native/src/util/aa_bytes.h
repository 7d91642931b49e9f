/*
 * Fields of wire frames and of the archive's files at any alignment: read and written with memcpy,
 * in the host's order, which is little-endian like the wire and the files (checked in
 * protocols/aa_udp_protocol.h). p points at the field.
 */
#ifndef AA_BYTES_H
#define AA_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t aa_get_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline uint32_t aa_get_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void aa_put_u16(uint8_t *p, uint16_t v)
{
    memcpy(p, &v, sizeof(v));
}

static inline void aa_put_u32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, sizeof(v));
}

static inline int16_t aa_get_i16(const uint8_t *p)
{
    int16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline int32_t aa_get_i32(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline int64_t aa_get_i64(const uint8_t *p)
{
    int64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void aa_put_i32(uint8_t *p, int32_t v)
{
    memcpy(p, &v, sizeof(v));
}

static inline void aa_put_i64(uint8_t *p, int64_t v)
{
    memcpy(p, &v, sizeof(v));
}

#endif
