/*
 * Resolution entries (protocols/aa_resolution_frame.h) as the tests of the resolution frame and of
 * the driver name resolver build them.
 */
#ifndef AA_RESOLUTION_TEST_H
#define AA_RESOLUTION_TEST_H

#include <stdint.h>
#include <string.h>

#include "protocols/aa_resolution_frame.h"

/* An entry of the type (IPv4: 4 bytes of addr, else 16) naming name (not copied). */
static inline aa_resolution_entry_t test_resolution_entry(
    int8_t type, uint8_t flags, uint16_t port, int32_t age, const uint8_t *addr, const char *name)
{
    aa_resolution_entry_t e;
    memset(&e, 0, sizeof(e));
    e.res_type = type;
    e.res_flags = flags;
    e.udp_port = port;
    e.age_in_ms = age;
    memcpy(e.address, addr, AA_RESOLUTION_TYPE_NAME_TO_IP4 == type ? 4 : 16);
    e.name = (const uint8_t *)name;
    e.name_length = (int32_t)strlen(name);
    return e;
}

#endif
