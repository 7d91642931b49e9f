/*
 * The CnC (command and control) file, <aeron dir>/cnc.dat, reference 9.2: a 128-byte header
 * (48 bytes used) then the to-driver ring buffer, to-clients broadcast buffer, counters metadata,
 * counters values and the distinct error log, in that order.
 *
 * Our one addition lives in the header's padding, at AA_CNC_DOORBELL_OFFSET: the driver's
 * doorbell (aa_doorbell.h). A deeply idle driver sleeps on it; clients ring it after writing a
 * command and when an offer is back-pressured or not connected. Aeron's tools ignore the padding.
 */
#ifndef AA_CNC_H
#define AA_CNC_H

#include <stdint.h>
#include <stddef.h>

#include "../concurrent/aa_atomic.h"
#include "../concurrent/aa_doorbell.h"

#define AA_CNC_FILE "cnc.dat"
#define AA_CNC_VERSION_MAJOR 0
#define AA_CNC_VERSION_MINOR 2
#define AA_CNC_VERSION_PATCH 0
#define AA_CNC_VERSION ((AA_CNC_VERSION_MAJOR << 16) | (AA_CNC_VERSION_MINOR << 8) | AA_CNC_VERSION_PATCH)
#define AA_CNC_HEADER_LENGTH 128
#define AA_CNC_DOORBELL_OFFSET 64

#pragma pack(push)
#pragma pack(4)
typedef struct aa_cnc_metadata_stct
{
    volatile int32_t cnc_version;
    int32_t to_driver_buffer_length;
    int32_t to_clients_buffer_length;
    int32_t counters_metadata_buffer_length;
    int32_t counters_values_buffer_length;
    int32_t error_log_buffer_length;
    int64_t client_liveness_timeout;
    int64_t start_timestamp;
    int64_t pid;
}
aa_cnc_metadata_t;
#pragma pack(pop)

_Static_assert(sizeof(aa_cnc_metadata_t) == 48, "cnc header is 48 bytes");

static inline aa_doorbell_t *aa_cnc_doorbell(aa_cnc_metadata_t *m)
{
    return (aa_doorbell_t *)((uint8_t *)m + AA_CNC_DOORBELL_OFFSET);
}

static inline size_t aa_cnc_computed_length(size_t total_buffers, size_t page_size)
{
    return AA_ALIGN(AA_CNC_HEADER_LENGTH + total_buffers, page_size);
}

static inline uint8_t *aa_cnc_to_driver_buffer(aa_cnc_metadata_t *m)
{
    return (uint8_t *)m + AA_CNC_HEADER_LENGTH;
}

static inline uint8_t *aa_cnc_to_clients_buffer(aa_cnc_metadata_t *m)
{
    return aa_cnc_to_driver_buffer(m) + m->to_driver_buffer_length;
}

static inline uint8_t *aa_cnc_counters_metadata_buffer(aa_cnc_metadata_t *m)
{
    return aa_cnc_to_clients_buffer(m) + m->to_clients_buffer_length;
}

static inline uint8_t *aa_cnc_counters_values_buffer(aa_cnc_metadata_t *m)
{
    return aa_cnc_counters_metadata_buffer(m) + m->counters_metadata_buffer_length;
}

static inline uint8_t *aa_cnc_error_log_buffer(aa_cnc_metadata_t *m)
{
    return aa_cnc_counters_values_buffer(m) + m->counters_values_buffer_length;
}

#endif
