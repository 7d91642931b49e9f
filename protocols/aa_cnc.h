/*
 * The CnC (command and control) file, <aeron dir>/cnc.dat, reference 9.2: a 128-byte header
 * (48 bytes used) then the to-driver ring buffer, to-clients broadcast buffer, counters metadata,
 * counters values and the distinct error log, in that order.
 *
 * Our additions live in the header's padding, which Aeron's tools ignore (Aeron's newer drivers
 * use bytes 48-51 for the file page size): at AA_CNC_DOORBELL_OFFSET the driver's doorbell
 * (aa_doorbell.h), on which a deeply idle driver sleeps and which clients ring after writing a
 * command and when an offer is back-pressured or not connected; at AA_CNC_PID_NAMESPACE_OFFSET the
 * driver's pid namespace (0 where unknown, as in a CnC file written by Aeron's driver); at
 * AA_CNC_CLIENTS_DOORBELL_OFFSET the clients' doorbell, which the driver rings after it transmits
 * on the to-clients buffer, so an idle client conductor hears of a response or an image at once
 * instead of after its long sleep; at AA_CNC_FEATURES_OFFSET what our driver does beyond Aeron's
 * (AA_CNC_FEATURE_*), set once it runs. A client arms the clients' doorbell only where the driver
 * says it rings it: Aeron's driver leaves the bytes zero, and its clients hear on their sleep's
 * timeout, as Aeron's own do, without our writing into its file.
 *
 * Liveness, as Aeron has it: the driver conductor stores the epoch-ms time in the to-driver ring
 * buffer's consumer heartbeat; a driver that closes stores Aeron's NULL_VALUE (-1) there as the
 * last thing before it lets go of the file, and Aeron's clients and tools take -1 as "the media
 * driver has been shutdown" (the age of -1 is older than any timeout). We add the pid: a driver
 * whose process no longer exists in our pid namespace is dead at once; only a driver whose pid
 * cannot be checked (another or an unknown namespace) is judged by its heartbeat's age alone.
 */
#ifndef AA_CNC_H
#define AA_CNC_H

#include <stdint.h>
#include <stddef.h>

#include "concurrent/aa_atomic.h"
#include "concurrent/aa_doorbell.h"
#include "concurrent/aa_mpsc_rb.h"
#include "util/aa_process.h"

#define AA_CNC_FILE "cnc.dat"
#define AA_CNC_VERSION_MAJOR 0
#define AA_CNC_VERSION_MINOR 2
#define AA_CNC_VERSION_PATCH 0
#define AA_CNC_VERSION ((AA_CNC_VERSION_MAJOR << 16) | (AA_CNC_VERSION_MINOR << 8) | AA_CNC_VERSION_PATCH)
#define AA_CNC_HEADER_LENGTH 128
#define AA_CNC_DOORBELL_OFFSET 64
#define AA_CNC_PID_NAMESPACE_OFFSET 72
#define AA_CNC_CLIENTS_DOORBELL_OFFSET 80
#define AA_CNC_FEATURES_OFFSET 88
/* The driver rings the clients' doorbell after each transmission to clients. */
#define AA_CNC_FEATURE_CLIENTS_DOORBELL 1
/* The consumer heartbeat of a driver that has closed: Aeron's NULL_VALUE. */
#define AA_CNC_DRIVER_CLOSED_HEARTBEAT (-1LL)

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

static inline aa_doorbell_t *aa_cnc_clients_doorbell(aa_cnc_metadata_t *m)
{
    return (aa_doorbell_t *)((uint8_t *)m + AA_CNC_CLIENTS_DOORBELL_OFFSET);
}

static inline volatile int32_t *aa_cnc_features(aa_cnc_metadata_t *m)
{
    return (volatile int32_t *)((uint8_t *)m + AA_CNC_FEATURES_OFFSET);
}

static inline volatile int64_t *aa_cnc_pid_namespace(aa_cnc_metadata_t *m)
{
    return (volatile int64_t *)((uint8_t *)m + AA_CNC_PID_NAMESPACE_OFFSET);
}

/* What a CnC file says of its driver. */
#define AA_CNC_DRIVER_ACTIVE 1
#define AA_CNC_DRIVER_CLOSED 2  /* it closed: its heartbeat is AA_CNC_DRIVER_CLOSED_HEARTBEAT */
#define AA_CNC_DRIVER_EXITED 3  /* its process is gone (killed, crashed) without closing */
#define AA_CNC_DRIVER_SILENT 4  /* its heartbeat is older than the timeout */

/* The one judgement of a driver's liveness (is_driver_active, a starting driver, a client): closed
 * by its mark, exited by its pid (where checkable), else by its heartbeat's age against timeout_ms. */
static inline int aa_cnc_driver_liveness(aa_cnc_metadata_t *m, int64_t heartbeat_ms, int64_t age_ms, int64_t timeout_ms)
{
    if (AA_CNC_DRIVER_CLOSED_HEARTBEAT == heartbeat_ms)
    {
        return AA_CNC_DRIVER_CLOSED;
    }
    if (AA_PROCESS_DEAD == aa_process_liveness(m->pid, (uint64_t)aa_get_int64_acquire(aa_cnc_pid_namespace(m))))
    {
        return AA_CNC_DRIVER_EXITED;
    }
    return age_ms <= timeout_ms ? AA_CNC_DRIVER_ACTIVE : AA_CNC_DRIVER_SILENT;
}

/* The driver's last act on its CnC file: clients and new drivers see at once that it is gone. */
static inline void aa_cnc_mark_closed(aa_mpsc_rb_t *to_driver)
{
    aa_mpsc_rb_consumer_heartbeat_time(to_driver, AA_CNC_DRIVER_CLOSED_HEARTBEAT);
}

static inline size_t aa_cnc_computed_length(size_t total_buffers, size_t page_size)
{
    return AA_ALIGN(AA_CNC_HEADER_LENGTH + total_buffers, page_size);
}

/* What is wrong with a CnC header's buffer lengths (NULL when they can be a driver's): none negative,
 * the ring and broadcast buffers a power of two plus their trailers, the counters metadata four times
 * the values (512- and 128-byte records), and all of them within the file (docs/security.md, "The CnC
 * file"). */
static inline const char *aa_cnc_lengths_fault(const aa_cnc_metadata_t *m, size_t file_length)
{
    int64_t lengths[5] = { m->to_driver_buffer_length, m->to_clients_buffer_length, m->counters_metadata_buffer_length,
        m->counters_values_buffer_length, m->error_log_buffer_length };
    int64_t total = AA_CNC_HEADER_LENGTH;
    for (int i = 0; i < 5; i++)
    {
        if (lengths[i] < 0)
        {
            return "a buffer length is negative";
        }
        total += lengths[i];
    }
    if (total > (int64_t)file_length)
    {
        return "its buffers reach past the end of the file";
    }
    int64_t to_driver = lengths[0] - AA_RB_TRAILER_LENGTH;
    int64_t to_clients = lengths[1] - 128;
    if (to_driver <= 0 || !AA_IS_POWER_OF_TWO(to_driver) || to_clients <= 0 || !AA_IS_POWER_OF_TWO(to_clients))
    {
        return "a command buffer's capacity is not a power of two";
    }
    if (lengths[2] / 512 < lengths[3] / 128)
    {
        return "the counters metadata buffer is too short for its values buffer";
    }
    return NULL;
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
