#include <string.h>

#include "protocols/aa_resolution_frame.h"
#include "protocols/aa_udp_protocol.h"
#include "util/aa_error.h"
#include "util/aa_sha256.h"

_Static_assert(AA_RESOLUTION_IPV4_FIXED_LENGTH == AA_RES_IPV4_ENTRY_FIXED_LENGTH, "IPv4 entry fixed part");
_Static_assert(AA_RESOLUTION_IPV6_FIXED_LENGTH == AA_RES_IPV6_ENTRY_FIXED_LENGTH, "IPv6 entry fixed part");
_Static_assert(AA_RESOLUTION_FLAG_SELF == AA_RES_HEADER_SELF_FLAG, "SELF flag");
_Static_assert(AA_RESOLUTION_NAME_MAX_LENGTH == AA_RES_MAX_NAME_LENGTH, "name length limit");

static size_t aa_resolution_align(size_t value)
{
    return (value + (AA_RESOLUTION_ENTRY_ALIGNMENT - 1)) & ~(size_t)(AA_RESOLUTION_ENTRY_ALIGNMENT - 1);
}

/* The fixed part of an entry of res_type and its address length; -1 for an unknown type. */
static int32_t aa_resolution_fixed_length(int8_t res_type, size_t *address_length)
{
    if (AA_RESOLUTION_TYPE_NAME_TO_IP4 == res_type)
    {
        *address_length = 4;
        return AA_RESOLUTION_IPV4_FIXED_LENGTH;
    }
    if (AA_RESOLUTION_TYPE_NAME_TO_IP6 == res_type)
    {
        *address_length = 16;
        return AA_RESOLUTION_IPV6_FIXED_LENGTH;
    }
    *address_length = 0;
    return -1;
}

static bool aa_resolution_name_is_valid(const uint8_t *name, int32_t name_length)
{
    if (name_length < 1 || name_length > AA_RESOLUTION_NAME_MAX_LENGTH || NULL == name)
    {
        return false;
    }
    for (int32_t i = 0; i < name_length; i++)
    {
        if (name[i] < 0x21 || name[i] > 0x7E)
        {
            return false;
        }
    }
    return true;
}

int32_t aa_resolution_entry_length(int8_t res_type, int32_t name_length)
{
    size_t address_length;
    int32_t fixed_length = aa_resolution_fixed_length(res_type, &address_length);
    if (fixed_length < 0 || name_length < 1 || name_length > AA_RESOLUTION_NAME_MAX_LENGTH)
    {
        return -1;
    }
    return (int32_t)aa_resolution_align((size_t)fixed_length + (size_t)name_length);
}

int32_t aa_resolution_frame_begin(uint8_t *buffer, size_t capacity)
{
    if (NULL == buffer || capacity < AA_RESOLUTION_FRAME_HEADER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "a RES frame needs %d bytes, the buffer has %zu",
            AA_RESOLUTION_FRAME_HEADER_LENGTH, capacity);
        return -1;
    }
    aa_frame_header_t header;
    header.frame_length = AA_RESOLUTION_FRAME_HEADER_LENGTH;
    header.version = AA_FRAME_HEADER_VERSION;
    header.flags = 0;
    header.type = AA_HDR_TYPE_RES;
    memcpy(buffer, &header, sizeof(header));
    return AA_RESOLUTION_FRAME_HEADER_LENGTH;
}

int32_t aa_resolution_frame_append(uint8_t *buffer, size_t capacity, const aa_resolution_entry_t *entry)
{
    size_t address_length;
    int32_t fixed_length = aa_resolution_fixed_length(entry->res_type, &address_length);
    if (fixed_length < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "unknown resolution entry type %d (1 = IPv4, 2 = IPv6)", entry->res_type);
        return -1;
    }
    if (!aa_resolution_name_is_valid(entry->name, entry->name_length))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "a resolution entry's name is 1 to %d bytes of printable ASCII, got %d bytes",
            AA_RESOLUTION_NAME_MAX_LENGTH, entry->name_length);
        return -1;
    }
    if (0 == entry->udp_port || entry->age_in_ms < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "a resolution entry needs a port (got %u) and an age >= 0 (got %d)",
            (unsigned)entry->udp_port, entry->age_in_ms);
        return -1;
    }
    if (NULL == buffer || capacity < AA_RESOLUTION_FRAME_HEADER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "no RES frame begun in a buffer of %zu bytes", capacity);
        return -1;
    }
    int32_t frame_length;
    memcpy(&frame_length, buffer, sizeof(frame_length));
    if (frame_length < AA_RESOLUTION_FRAME_HEADER_LENGTH || (size_t)frame_length > capacity)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "RES frame length %d is not valid in a buffer of %zu bytes",
            frame_length, capacity);
        return -1;
    }
    size_t unpadded = (size_t)fixed_length + (size_t)entry->name_length;
    size_t entry_length = aa_resolution_align(unpadded);
    if (capacity - (size_t)frame_length < entry_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "a %zu-byte resolution entry does not fit: %zu of %zu bytes left",
            entry_length, capacity - (size_t)frame_length, capacity);
        return -1;
    }

    uint8_t *p = buffer + frame_length;
    aa_resolution_header_t common;
    common.res_type = entry->res_type;
    common.res_flags = entry->res_flags;
    common.udp_port = entry->udp_port;
    common.age_in_ms = entry->age_in_ms;
    memcpy(p, &common, sizeof(common));
    memcpy(p + sizeof(common), entry->address, address_length);
    int16_t name_length = (int16_t)entry->name_length;
    memcpy(p + fixed_length - (int32_t)sizeof(int16_t), &name_length, sizeof(name_length));
    memcpy(p + fixed_length, entry->name, (size_t)entry->name_length);
    memset(p + unpadded, 0, entry_length - unpadded);

    frame_length += (int32_t)entry_length;
    memcpy(buffer, &frame_length, sizeof(frame_length));
    return frame_length;
}

/* The frame header checks; the frame's length, or -1. */
static int32_t aa_resolution_frame_header_check(const uint8_t *buffer, size_t length)
{
    if (NULL == buffer || length < AA_RESOLUTION_FRAME_HEADER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "RES frame: %zu bytes, shorter than the 8-byte frame header", length);
        return -1;
    }
    aa_frame_header_t header;
    memcpy(&header, buffer, sizeof(header));
    if (AA_FRAME_HEADER_VERSION != header.version || AA_HDR_TYPE_RES != header.type)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "RES frame: version %d, type %d (want version 0, type 7)",
            header.version, header.type);
        return -1;
    }
    if (header.frame_length < AA_RESOLUTION_FRAME_HEADER_LENGTH || (size_t)header.frame_length > length)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "RES frame: frame_length %d outside 8..%zu (the datagram)",
            header.frame_length, length);
        return -1;
    }
    return header.frame_length;
}

/* One entry at offset of a frame of frame_length bytes, every bound against the bytes remaining. */
static int aa_resolution_entry_read(
    const uint8_t *buffer, size_t frame_length, size_t *offset, aa_resolution_entry_t *entry)
{
    size_t remaining = frame_length - *offset;
    const uint8_t *p = buffer + *offset;
    if (remaining < sizeof(aa_resolution_header_t))
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "RES entry at offset %zu: cut short, %zu bytes remain", *offset, remaining);
        return -1;
    }
    aa_resolution_header_t common;
    memcpy(&common, p, sizeof(common));
    size_t address_length;
    int32_t fixed_length = aa_resolution_fixed_length(common.res_type, &address_length);
    if (fixed_length < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "RES entry at offset %zu: unknown type %d", *offset, common.res_type);
        return -1;
    }
    if (remaining < (size_t)fixed_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "RES entry at offset %zu: its %d-byte fixed part is cut short, %zu bytes remain",
            *offset, fixed_length, remaining);
        return -1;
    }
    int16_t name_length;
    memcpy(&name_length, p + fixed_length - (int32_t)sizeof(int16_t), sizeof(name_length));
    if (name_length < 1 || name_length > AA_RESOLUTION_NAME_MAX_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "RES entry at offset %zu: name length %d outside 1..%d",
            *offset, name_length, AA_RESOLUTION_NAME_MAX_LENGTH);
        return -1;
    }
    size_t entry_length = aa_resolution_align((size_t)fixed_length + (size_t)name_length);
    if (entry_length > remaining)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "RES entry at offset %zu: %zu bytes with its padding, %zu bytes remain",
            *offset, entry_length, remaining);
        return -1;
    }
    if (!aa_resolution_name_is_valid(p + fixed_length, name_length))
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "RES entry at offset %zu: the name is not printable ASCII", *offset);
        return -1;
    }
    if (0 == common.udp_port || common.age_in_ms < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "RES entry at offset %zu: port %u, age %d ms (want a port and an age >= 0)",
            *offset, (unsigned)common.udp_port, common.age_in_ms);
        return -1;
    }

    entry->res_type = common.res_type;
    entry->res_flags = common.res_flags;
    entry->udp_port = common.udp_port;
    entry->age_in_ms = common.age_in_ms;
    memset(entry->address, 0, sizeof(entry->address));
    memcpy(entry->address, p + sizeof(common), address_length);
    entry->name = p + fixed_length;
    entry->name_length = name_length;
    *offset += entry_length;
    return 1;
}

int32_t aa_resolution_frame_validate(const uint8_t *buffer, size_t length)
{
    int32_t frame_length = aa_resolution_frame_header_check(buffer, length);
    if (frame_length < 0)
    {
        return -1;
    }
    int32_t count = 0;
    size_t offset = AA_RESOLUTION_FRAME_HEADER_LENGTH;
    aa_resolution_entry_t entry;
    while (offset < (size_t)frame_length)
    {
        if (aa_resolution_entry_read(buffer, (size_t)frame_length, &offset, &entry) < 0)
        {
            return -1;
        }
        count++;
    }
    return count;
}

int aa_resolution_frame_next(const uint8_t *buffer, size_t length, size_t *offset, aa_resolution_entry_t *entry)
{
    int32_t frame_length = aa_resolution_frame_header_check(buffer, length);
    if (frame_length < 0)
    {
        return -1;
    }
    if (*offset < AA_RESOLUTION_FRAME_HEADER_LENGTH)
    {
        *offset = AA_RESOLUTION_FRAME_HEADER_LENGTH;
    }
    if (*offset >= (size_t)frame_length)
    {
        return 0;
    }
    return aa_resolution_entry_read(buffer, (size_t)frame_length, offset, entry);
}

/* ---- signed frames (the trailer after frame_length) ---- */

static void aa_resolution_frame_mac(
    const uint8_t *buffer, size_t frame_length, const uint8_t *key, size_t key_length, uint8_t *mac)
{
    const void *parts[2] = { buffer, buffer + frame_length };
    size_t lengths[2] = { frame_length, AA_RESOLUTION_HMAC_MAGIC_LENGTH + sizeof(int64_t) };
    aa_hmac_sha256_parts(key, key_length, parts, lengths, 2, mac);
}

int32_t aa_resolution_frame_sign(
    uint8_t *buffer, size_t capacity, int32_t frame_length, const uint8_t *key, size_t key_length,
    int64_t timestamp_ms)
{
    if (frame_length < AA_RESOLUTION_FRAME_HEADER_LENGTH ||
        (size_t)frame_length + AA_RESOLUTION_HMAC_TRAILER_LENGTH > capacity)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "a signed resolution frame of %d bytes does not fit in %zu",
            frame_length, capacity);
        return -1;
    }
    uint8_t *trailer = buffer + frame_length;
    memcpy(trailer, AA_RESOLUTION_HMAC_MAGIC, AA_RESOLUTION_HMAC_MAGIC_LENGTH);
    for (int i = 0; i < 8; i++)
    {
        trailer[AA_RESOLUTION_HMAC_MAGIC_LENGTH + i] = (uint8_t)((uint64_t)timestamp_ms >> (8 * i));
    }
    aa_resolution_frame_mac(buffer, (size_t)frame_length, key, key_length, trailer + 16);
    return frame_length + AA_RESOLUTION_HMAC_TRAILER_LENGTH;
}

int aa_resolution_frame_verify(
    const uint8_t *buffer, size_t length, const uint8_t *key, size_t key_length, int64_t *timestamp_ms)
{
    int32_t frame_length = aa_resolution_frame_header_check(buffer, length);
    if (frame_length < 0)
    {
        return -1;
    }
    if ((size_t)frame_length == length)
    {
        return 0;
    }
    const uint8_t *trailer = buffer + frame_length;
    if ((size_t)frame_length + AA_RESOLUTION_HMAC_TRAILER_LENGTH != length ||
        0 != memcmp(trailer, AA_RESOLUTION_HMAC_MAGIC, AA_RESOLUTION_HMAC_MAGIC_LENGTH))
    {
        return -1;
    }
    uint8_t mac[AA_SHA256_DIGEST_LENGTH];
    aa_resolution_frame_mac(buffer, (size_t)frame_length, key, key_length, mac);
    if (!aa_constant_time_equals(mac, trailer + 16, sizeof(mac)))
    {
        return -1;
    }
    uint64_t timestamp = 0;
    for (int i = 0; i < 8; i++)
    {
        timestamp |= (uint64_t)trailer[AA_RESOLUTION_HMAC_MAGIC_LENGTH + i] << (8 * i);
    }
    *timestamp_ms = (int64_t)timestamp;
    return 1;
}
