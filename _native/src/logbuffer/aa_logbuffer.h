/*
 * Log buffers (reference sections 2 and 3): three term partitions followed by a 4 KiB metadata
 * section, in one memory-mapped file. Position arithmetic, metadata layout, rotation.
 */
#ifndef AA_LOGBUFFER_H
#define AA_LOGBUFFER_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "concurrent/aa_atomic.h"
#include "concurrent/aa_doorbell.h"
#include "logbuffer/aa_frame.h"

#define AA_LOGBUFFER_PARTITION_COUNT 3
#define AA_LOGBUFFER_TERM_MIN_LENGTH (64 * 1024)
#define AA_LOGBUFFER_TERM_MAX_LENGTH (1024 * 1024 * 1024)
#define AA_PAGE_MIN_SIZE (4 * 1024)
#define AA_PAGE_MAX_SIZE (1024 * 1024 * 1024)
#define AA_LOGBUFFER_META_DATA_LENGTH 4096
#define AA_LOGBUFFER_FRAME_ALIGNMENT 32
#define AA_LOGBUFFER_DEFAULT_FRAME_HEADER_MAX_LENGTH 128
#define AA_MAX_MESSAGE_LENGTH_CAP (16 * 1024 * 1024)

#pragma pack(push)
#pragma pack(4)
typedef struct aa_logbuffer_metadata_stct
{
    volatile int64_t term_tail_counters[AA_LOGBUFFER_PARTITION_COUNT];
    volatile int32_t active_term_count;
    uint8_t pad1[128 - 28];
    volatile int64_t end_of_stream_position;
    volatile int32_t is_connected;
    volatile int32_t active_transport_count;
    uint8_t pad2[256 - 144];
    int64_t correlation_id;
    int32_t initial_term_id;
    int32_t default_frame_header_length;
    int32_t mtu_length;
    int32_t term_length;
    int32_t page_size;
    int32_t publication_window_length;
    int32_t receiver_window_length;
    int32_t socket_sndbuf_length;
    int32_t os_default_socket_sndbuf_length;
    int32_t os_max_socket_sndbuf_length;
    int32_t socket_rcvbuf_length;
    int32_t os_default_socket_rcvbuf_length;
    int32_t os_max_socket_rcvbuf_length;
    int32_t max_resend;
    uint8_t default_header[AA_LOGBUFFER_DEFAULT_FRAME_HEADER_MAX_LENGTH];
    int64_t entity_tag;
    int64_t response_correlation_id;
    int64_t linger_timeout_ns;
    int64_t untethered_window_limit_timeout_ns;
    int64_t untethered_resting_timeout_ns;
    uint8_t group;
    uint8_t is_response;
    uint8_t rejoin;
    uint8_t reliable;
    uint8_t sparse;
    uint8_t signal_eos;
    uint8_t spies_simulate_connection;
    uint8_t tether;
    volatile uint8_t is_publication_revoked;   /* Aeron 1.48 (aeron-wave3.md 4.1) */
    uint8_t type;                              /* 0 concurrent, 1 exclusive, 2 image */
    uint8_t pad3[2];
    int64_t untethered_linger_timeout_ns;      /* @500: only 4-byte aligned, as Aeron's */
}
aa_logbuffer_metadata_t;
#pragma pack(pop)

_Static_assert(offsetof(aa_logbuffer_metadata_t, active_term_count) == 24, "active_term_count @24");
_Static_assert(offsetof(aa_logbuffer_metadata_t, end_of_stream_position) == 128, "eos @128");
_Static_assert(offsetof(aa_logbuffer_metadata_t, is_connected) == 136, "is_connected @136");
_Static_assert(offsetof(aa_logbuffer_metadata_t, active_transport_count) == 140, "transports @140");
_Static_assert(offsetof(aa_logbuffer_metadata_t, correlation_id) == 256, "correlation_id @256");
_Static_assert(offsetof(aa_logbuffer_metadata_t, initial_term_id) == 264, "initial_term_id @264");
_Static_assert(offsetof(aa_logbuffer_metadata_t, mtu_length) == 272, "mtu @272");
_Static_assert(offsetof(aa_logbuffer_metadata_t, term_length) == 276, "term_length @276");
_Static_assert(offsetof(aa_logbuffer_metadata_t, page_size) == 280, "page_size @280");
_Static_assert(offsetof(aa_logbuffer_metadata_t, max_resend) == 316, "max_resend @316");
_Static_assert(offsetof(aa_logbuffer_metadata_t, default_header) == 320, "default_header @320");
_Static_assert(offsetof(aa_logbuffer_metadata_t, entity_tag) == 448, "entity_tag @448");
_Static_assert(offsetof(aa_logbuffer_metadata_t, linger_timeout_ns) == 464, "linger @464");
_Static_assert(offsetof(aa_logbuffer_metadata_t, group) == 488, "flags @488");
_Static_assert(offsetof(aa_logbuffer_metadata_t, untethered_window_limit_timeout_ns) == 472, "window limit @472");
_Static_assert(offsetof(aa_logbuffer_metadata_t, untethered_resting_timeout_ns) == 480, "resting @480");
_Static_assert(offsetof(aa_logbuffer_metadata_t, is_publication_revoked) == 496, "revoked @496");
_Static_assert(offsetof(aa_logbuffer_metadata_t, untethered_linger_timeout_ns) == 500, "untethered linger @500");
_Static_assert(sizeof(aa_logbuffer_metadata_t) == 508, "metadata used size is 508");

/* Our one addition to the log metadata, in its reserved space (Aeron uses 508 of 4096
 * bytes): the log's doorbell (aa_doorbell.h). Async readers and back-pressured async publishers
 * wait on it; publishers ring it after appending (unfenced, in the message path), the receiver after
 * inserting data, and the driver after moving the publisher limit. */
#define AA_LOGBUFFER_DOORBELL_OFFSET 512

static inline aa_doorbell_t *aa_logbuffer_doorbell(aa_logbuffer_metadata_t *metadata)
{
    return (aa_doorbell_t *)((uint8_t *)metadata + AA_LOGBUFFER_DOORBELL_OFFSET);
}

/* ---- position arithmetic (reference section 3) ---- */

static inline int32_t aa_number_of_trailing_zeroes(int32_t value)
{
    return __builtin_ctz((uint32_t)value);
}

static inline int32_t aa_position_bits_to_shift(int32_t term_length)
{
    return aa_number_of_trailing_zeroes(term_length);
}

static inline int64_t aa_max_possible_position(int32_t term_length)
{
    return ((int64_t)term_length) << 31;
}

static inline int64_t aa_compute_position(
    int32_t term_id, int32_t term_offset, int32_t position_bits_to_shift, int32_t initial_term_id)
{
    int64_t term_count = (int64_t)(int32_t)((uint32_t)term_id - (uint32_t)initial_term_id);
    return term_count * ((int64_t)1 << position_bits_to_shift) + term_offset; /* term_count may be negative */
}

static inline int64_t aa_compute_term_begin_position(
    int32_t term_id, int32_t position_bits_to_shift, int32_t initial_term_id)
{
    return aa_compute_position(term_id, 0, position_bits_to_shift, initial_term_id);
}

static inline int32_t aa_compute_term_id_from_position(
    int64_t position, int32_t position_bits_to_shift, int32_t initial_term_id)
{
    return (int32_t)((uint32_t)(position >> position_bits_to_shift) + (uint32_t)initial_term_id);
}

static inline int32_t aa_compute_term_offset_from_position(int64_t position, int32_t position_bits_to_shift)
{
    int64_t mask = (1LL << position_bits_to_shift) - 1;
    return (int32_t)(position & mask);
}

static inline int32_t aa_index_by_position(int64_t position, int32_t position_bits_to_shift)
{
    return (int32_t)((position >> position_bits_to_shift) % AA_LOGBUFFER_PARTITION_COUNT);
}

static inline int32_t aa_index_by_term(int32_t initial_term_id, int32_t active_term_id)
{
    return (int32_t)((uint32_t)((int32_t)((uint32_t)active_term_id - (uint32_t)initial_term_id)) %
        AA_LOGBUFFER_PARTITION_COUNT);
}

static inline int32_t aa_index_by_term_count(int64_t term_count)
{
    return (int32_t)(term_count % AA_LOGBUFFER_PARTITION_COUNT);
}

static inline int32_t aa_term_id(int64_t raw_tail)
{
    return (int32_t)(raw_tail >> 32);
}

static inline int32_t aa_term_offset(int64_t raw_tail, int64_t term_length)
{
    int64_t tail = raw_tail & 0xFFFFFFFFLL;
    return (int32_t)(tail < term_length ? tail : term_length);
}

static inline int64_t aa_pack_tail(int32_t term_id, int32_t term_offset)
{
    return (int64_t)(((uint64_t)(uint32_t)term_id << 32) | (uint64_t)(uint32_t)term_offset);
}

static inline int32_t aa_compute_max_message_length(int32_t term_length)
{
    int32_t by_term = term_length / 8;
    return by_term < AA_MAX_MESSAGE_LENGTH_CAP ? by_term : AA_MAX_MESSAGE_LENGTH_CAP;
}

static inline int64_t aa_compute_fragmented_length(size_t length, size_t max_payload_length)
{
    size_t num_max_payloads = length / max_payload_length;
    size_t remaining = length % max_payload_length;
    size_t last = remaining > 0 ? AA_ALIGN(remaining + AA_DATA_HEADER_LENGTH, AA_LOGBUFFER_FRAME_ALIGNMENT) : 0;
    return (int64_t)(num_max_payloads * (max_payload_length + AA_DATA_HEADER_LENGTH) + last);
}

static inline size_t aa_logbuffer_compute_log_length(int32_t term_length, int32_t page_size)
{
    return AA_ALIGN(((size_t)term_length * AA_LOGBUFFER_PARTITION_COUNT) + AA_LOGBUFFER_META_DATA_LENGTH,
        (size_t)page_size);
}

/* Validation with messages naming the bad value and the accepted range. */
int aa_logbuffer_check_term_length(int64_t term_length);
int aa_logbuffer_check_page_size(int64_t page_size);

/* ---- a mapped log: three term buffers and the metadata ---- */

typedef struct aa_mapped_log_stct
{
    uint8_t *addr;
    size_t length;
    uint8_t *term_buffers[AA_LOGBUFFER_PARTITION_COUNT];
    aa_logbuffer_metadata_t *metadata;
    int32_t term_length;
}
aa_mapped_log_t;

/* Points the partitions and metadata at a mapping of a log with the given term length. */
void aa_mapped_log_init(aa_mapped_log_t *log, uint8_t *addr, size_t length, int32_t term_length);
/* The same for a mapping whose metadata already holds the term length (finds and checks it). */
int aa_mapped_log_wrap(aa_mapped_log_t *log, uint8_t *addr, size_t length);

/* A publication begins draining: its publisher limit stops at position, the producer position, which
 * is also the end of the stream its subscribers will see; the publisher is woken to see the limit. */
static inline void aa_logbuffer_end_stream_at(
    aa_logbuffer_metadata_t *metadata, volatile int64_t *publisher_limit, int64_t position)
{
    aa_put_int64_release(publisher_limit, position);
    aa_put_int64_release(&metadata->end_of_stream_position, position);
    aa_doorbell_ring(aa_logbuffer_doorbell(metadata));
}

/* Zeroes the log from *clean_position towards position, at most to the end of that term, and moves
 * *clean_position past what it zeroed. The frame's first word is zeroed last, with release order, so a
 * reader never sees a frame length before the body behind it is clean. Publications and images call
 * it a term behind their slowest consumer. */
static inline void aa_mapped_log_clean_to(
    const aa_mapped_log_t *log, int64_t *clean_position, int64_t position, int32_t term_length,
    int32_t position_bits_to_shift)
{
    int64_t start = *clean_position;
    if (position > start)
    {
        int32_t index = aa_index_by_position(start, position_bits_to_shift);
        int32_t offset = (int32_t)(start & (term_length - 1));
        int64_t bytes_to_clean = position - start;
        int64_t term_remaining = term_length - offset;
        size_t length = (size_t)(bytes_to_clean < term_remaining ? bytes_to_clean : term_remaining);
        uint8_t *dirty = log->term_buffers[index] + offset;
        if (length > sizeof(int64_t))
        {
            memset(dirty + sizeof(int64_t), 0, length - sizeof(int64_t));
        }
        aa_put_int64_release((volatile int64_t *)dirty, 0);
        *clean_position = start + (int64_t)length;
    }
}

/* Driver side: fill a fresh (zeroed) log's metadata and tails, reference 2.1/2.2. */
typedef struct aa_logbuffer_init_params_stct
{
    int64_t correlation_id;
    int32_t initial_term_id;
    int32_t active_term_id;   /* == initial_term_id unless a start position was requested */
    int32_t term_offset;      /* offset in the active term */
    int32_t term_length;
    int32_t mtu_length;
    int32_t page_size;
    int32_t session_id;
    int32_t stream_id;
    int32_t publication_window_length;
    int32_t receiver_window_length;
    int64_t linger_timeout_ns;
    int64_t untethered_window_limit_timeout_ns;
    int64_t untethered_resting_timeout_ns;
    int64_t untethered_linger_timeout_ns;
    int32_t type;   /* 0 concurrent publication, 1 exclusive, 2 image */
    bool sparse;
    bool tether;
    bool rejoin;
    bool reliable;
    bool signal_eos;
    bool group;
    bool spies_simulate_connection;
    int32_t max_resend;
    int64_t entity_tag;       /* a publication's tags=<channel tag>,<entity tag> (Aeron: -1 when none) */
}
aa_logbuffer_init_params_t;

void aa_logbuffer_metadata_init(aa_mapped_log_t *log, const aa_logbuffer_init_params_t *params);

/* Rotation per reference 2.2: CAS the next partition's tail, then CAS active_term_count. */
bool aa_logbuffer_rotate_log(aa_logbuffer_metadata_t *metadata, int32_t current_term_count, int32_t current_term_id);

static inline int32_t aa_logbuffer_active_term_count(aa_logbuffer_metadata_t *metadata)
{
    return aa_get_int32_acquire(&metadata->active_term_count);
}

/* The producer position from the active partition's raw tail. */
int64_t aa_logbuffer_producer_position(aa_mapped_log_t *log);

/* Revoked (aeron-wave3.md 4.1): the driver sets it once; clients read it from the image's log. */
static inline bool aa_logbuffer_is_publication_revoked(aa_logbuffer_metadata_t *metadata)
{
    return 0 != __atomic_load_n(&metadata->is_publication_revoked, __ATOMIC_ACQUIRE);
}

static inline void aa_logbuffer_set_publication_revoked(aa_logbuffer_metadata_t *metadata)
{
    __atomic_store_n(&metadata->is_publication_revoked, (uint8_t)1, __ATOMIC_RELEASE);
}

static inline bool aa_logbuffer_is_connected(aa_logbuffer_metadata_t *metadata)
{
    return 1 == aa_get_int32_acquire(&metadata->is_connected);
}

static inline void aa_logbuffer_set_connected(aa_logbuffer_metadata_t *metadata, bool connected)
{
    aa_put_int32_release(&metadata->is_connected, connected ? 1 : 0);
}

static inline int64_t aa_logbuffer_end_of_stream_position(aa_logbuffer_metadata_t *metadata)
{
    return aa_get_int64_acquire(&metadata->end_of_stream_position);
}

static inline void aa_logbuffer_fill_default_header(
    uint8_t *header, int32_t session_id, int32_t stream_id, int32_t initial_term_id)
{
    aa_data_header_t *h = (aa_data_header_t *)header;
    h->frame_header.frame_length = 0;
    h->frame_header.version = AA_FRAME_HEADER_VERSION;
    h->frame_header.flags = AA_DATA_HEADER_UNFRAGMENTED;
    h->frame_header.type = AA_HDR_TYPE_DATA;
    h->term_offset = 0;
    h->session_id = session_id;
    h->stream_id = stream_id;
    h->term_id = initial_term_id;
    h->reserved_value = 0;
}

/* Frame accessors on a term buffer. */
static inline int32_t aa_frame_length_volatile(const uint8_t *term_buffer, int32_t offset)
{
    return aa_get_int32_acquire((const volatile int32_t *)(term_buffer + offset));
}

static inline void aa_frame_length_ordered(uint8_t *term_buffer, int32_t offset, int32_t length)
{
    aa_put_int32_release((volatile int32_t *)(term_buffer + offset), length);
}

static inline bool aa_frame_is_padding(const uint8_t *term_buffer, int32_t offset)
{
    return AA_HDR_TYPE_PAD == ((const aa_frame_header_t *)(term_buffer + offset))->type;
}

#endif
