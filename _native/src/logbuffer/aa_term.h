/*
 * Term-level operations on a log buffer partition (reference 2.3, 2.4, 4.3): appenders
 * (concurrent and exclusive), reader, scanner, rebuilder, gap scanner and unblocker.
 * All are wait-free over the shared term memory and allocate nothing.
 */
#ifndef AA_TERM_H
#define AA_TERM_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#include "logbuffer/aa_logbuffer.h"

typedef struct aa_iovec_stct
{
    const uint8_t *base;
    size_t length;
}
aa_iovec_t;

/* Result of an append that crossed the end of the term: padding was written where there was room
 * and the caller must rotate the log (and return ADMIN_ACTION or MAX_POSITION_EXCEEDED). */
#define AA_TERM_APPENDER_FAILED (-2)

/* ---- concurrent appender: atomic get-and-add on the raw tail (many writers) ---- */

/* Append one unfragmented frame holding the gathered `iov` (total `length` bytes).
 * Returns the resulting term offset (> 0) or AA_TERM_APPENDER_FAILED; *term_id is the term appended to. */
int32_t aa_term_appender_append_unfragmented(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, const uint8_t *default_header,
    const aa_iovec_t *iov, size_t iovcnt, size_t length, int64_t reserved_value, int32_t *term_id);

/* Append a message longer than max_payload_length as B, middle and E fragments. */
int32_t aa_term_appender_append_fragmented(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, const uint8_t *default_header,
    const aa_iovec_t *iov, size_t iovcnt, size_t length, size_t max_payload_length, int64_t reserved_value,
    int32_t *term_id);

/* Claim a frame of `length` payload bytes, header written with a negative length (in progress).
 * *frame_offset receives the frame's term offset. Commit with aa_term_claim_commit or abort. */
int32_t aa_term_appender_claim(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, const uint8_t *default_header,
    size_t length, int32_t *term_id, int32_t *frame_offset);

/* ---- exclusive appender: one writer; the caller keeps the offset and stores the tail ordered ---- */

int32_t aa_exclusive_term_appender_append_unfragmented(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, int32_t term_id, int32_t term_offset,
    const uint8_t *default_header, const aa_iovec_t *iov, size_t iovcnt, size_t length, int64_t reserved_value);

int32_t aa_exclusive_term_appender_append_fragmented(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, int32_t term_id, int32_t term_offset,
    const uint8_t *default_header, const aa_iovec_t *iov, size_t iovcnt, size_t length, size_t max_payload_length,
    int64_t reserved_value);

int32_t aa_exclusive_term_appender_claim(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, int32_t term_id, int32_t term_offset,
    const uint8_t *default_header, size_t length);

/* Pad the rest of the term from term_offset (exclusive publications only; returns term_length). */
int32_t aa_exclusive_term_appender_append_padding(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, int32_t term_id,
    int32_t term_offset, const uint8_t *default_header, size_t length);

/* Commit (release-store the positive length) or abort (turn into PAD) a claimed frame. */
void aa_term_claim_commit(uint8_t *term_buffer, int32_t frame_offset);
void aa_term_claim_abort(uint8_t *term_buffer, int32_t frame_offset);

/* ---- reader ---- */

typedef void (*aa_fragment_handler_t)(void *clientd, const uint8_t *payload, size_t length, const aa_data_header_t *header);

/* Read committed frames from term_offset up to fragments_limit, skipping padding. Returns the new
 * term offset (the caller advances the subscriber position by new - old); *fragments_read counts
 * data frames delivered. */
int32_t aa_term_reader_read(
    const uint8_t *term_buffer, int32_t term_offset, int32_t term_length, aa_fragment_handler_t handler,
    void *clientd, int32_t fragments_limit, int32_t *fragments_read);

/* ---- scanner (sender side): contiguous committed bytes from offset, up to max_length,
 * stopping after a padding frame; *padding receives the padding length beyond what is returned. ---- */
int32_t aa_term_scanner_scan_for_availability(
    const uint8_t *term_buffer, int32_t term_offset, int32_t max_length, int32_t term_length, int32_t *padding);

/* ---- rebuilder (receiver side): insert a datagram verbatim, header word 0 written last ---- */
void aa_term_rebuilder_insert(uint8_t *term_buffer, int32_t term_offset, const uint8_t *packet, size_t length);

/* ---- gap scanner: from rebuild offset up to limit_offset, report the first gap ---- */
typedef void (*aa_term_gap_handler_t)(void *clientd, int32_t term_id, int32_t term_offset, size_t length);

/* Returns the offset reached (end of contiguous data); calls handler for the first gap found. */
int32_t aa_term_gap_scanner_scan_for_gap(
    const uint8_t *term_buffer, int32_t term_id, int32_t rebuild_offset, int32_t limit_offset,
    aa_term_gap_handler_t handler, void *clientd);

/* ---- unblocker (reference 2.3): turn a region blocked by a dead writer into padding ---- */
typedef enum aa_term_unblocker_status_enum
{
    AA_TERM_UNBLOCKER_STATUS_NO_ACTION,
    AA_TERM_UNBLOCKER_STATUS_UNBLOCKED,
    AA_TERM_UNBLOCKER_STATUS_UNBLOCKED_TO_END
}
aa_term_unblocker_status_t;

aa_term_unblocker_status_t aa_term_unblocker_unblock(
    aa_logbuffer_metadata_t *metadata, uint8_t *term_buffer, int32_t blocked_offset, int32_t tail_offset,
    int32_t term_id);

/* The same for a publication whose consumers stopped at blocked_position: finds the term, the blocked
 * offset and the tail in that term (the term's end once the tail has moved on) and unblocks there. */
aa_term_unblocker_status_t aa_term_unblocker_unblock_at(
    const aa_mapped_log_t *log, int64_t blocked_position, int32_t initial_term_id, int32_t position_bits_to_shift);

#endif
