/*
 * Archive segment files (reference 1 and 4): `<recordingId>-<segmentBasePosition>.rec` in the
 * archive directory, created sparse at their full length with no header, holding the stream's raw
 * log frames (32-byte header + payload, 32-aligned) at their term offsets; a PAD frame is stored
 * as its header only and frame_length 0 marks the end of the data.
 *
 * Positions: a recording's segment length is max(configured, term length) (a power of 2 from
 * 64 KiB to 1 GiB); the first segment's base is the term base of the start position, so a position
 * p lies in the segment based at aa_archive_segment_base_position() and at file offset
 * (p - startTermBase) & (segmentLength - 1), and p == base + offset.
 *
 * Sync levels (`file.sync.level`): 0 leaves writes in the page cache, 1 forces the data
 * (fdatasync), 2 the data and the metadata (fsync): aa_archive_segment_write after each write, or,
 * for a recording, its syncer (aa_archive_syncer.h) on a thread of its own; a file created at
 * level >= 1 also syncs its directory, so the new name survives a crash.
 *
 * Every function returns -1 (or NULL) with aa_errcode()/aa_errmsg() set on failure; a write that
 * finds the disk full (ENOSPC, EDQUOT, EFBIG) fails with AA_ERROR_CODE_STORAGE_SPACE.
 * All of it is blocking file I/O: call it from the archive's recorder/replayer/conductor, never
 * from the driver's sender/receiver.
 */
#ifndef AA_ARCHIVE_SEGMENT_H
#define AA_ARCHIVE_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "archive/aa_archive_checksum.h"

#define AA_ARCHIVE_SEGMENT_FILE_SUFFIX ".rec"

/* CDEF BEGIN */

#define AA_ARCHIVE_SEGMENT_LENGTH_MIN 65536
#define AA_ARCHIVE_SEGMENT_LENGTH_MAX 1073741824
#define AA_ARCHIVE_SEGMENT_LENGTH_DEFAULT 134217728
/* the page a short write (a process killed in write(2)) stops on a boundary of */
#define AA_ARCHIVE_PAGE_SIZE 4096

#define AA_ARCHIVE_SYNC_NONE 0
#define AA_ARCHIVE_SYNC_DATA 1
#define AA_ARCHIVE_SYNC_DATA_AND_METADATA 2

/* aa_archive_segment_open flags */
#define AA_ARCHIVE_SEGMENT_CREATE 1
#define AA_ARCHIVE_SEGMENT_READ_ONLY 2

/* What the recovery scan of a recording's last segment found. */
typedef struct aa_archive_recovery_stct
{
    int64_t stop_position;       /* after the last complete frame (start_position when no data) */
    int64_t segment_base;        /* the base position of the last segment, -1 when there is none */
    int32_t segment_count;       /* segment files of the recording */
    bool torn_frame;             /* a last frame was found incomplete (a write cut short) */
    int64_t torn_frame_position; /* its position and frame_length when torn_frame */
    int32_t torn_frame_length;
    bool repaired;               /* the torn frame's bytes were zeroed (repair was asked for) */
}
aa_archive_recovery_t;

/* What aa_archive_segment_verify found. */
typedef struct aa_archive_verify_stct
{
    int64_t frames;          /* DATA frames checked */
    int64_t bytes;           /* stream bytes walked (stop - start when all is well) */
    int64_t bad_position;    /* the first problem's position, -1 when none */
    char message[256];       /* the problem, for a person: what was found where */
}
aa_archive_verify_t;

/* "<recording_id>-<base_position>.rec" into buffer; its length, or -1 when buffer is too short. */
int aa_archive_segment_file_name(char *buffer, size_t length, int64_t recording_id, int64_t base_position);
/* Parses a segment file name: 1 with *recording_id and *base_position set, 0 when name is not one
 * (a ".rec" suffix, two decimal numbers, base >= 0). */
int aa_archive_segment_parse_file_name(const char *name, int64_t *recording_id, int64_t *base_position);

/* 0 when segment_length is a power of 2 in [64 KiB, 1 GiB], else -1 with an error naming the range. */
int aa_archive_segment_validate_length(int64_t segment_length);
/* The segment length a recording uses: max(configured, term_length); -1 when either is invalid. */
int32_t aa_archive_segment_length_for(int32_t configured_segment_length, int32_t term_length);
/* The base position of the segment holding position (term and segment lengths powers of 2). */
int64_t aa_archive_segment_base_position(
    int64_t start_position, int64_t position, int32_t term_length, int32_t segment_length);
/* The offset of position in its segment file: (position - startTermBase) & (segment_length - 1). */
int64_t aa_archive_segment_file_offset(
    int64_t start_position, int64_t position, int32_t term_length, int32_t segment_length);

/* Opens <dir>/<recording_id>-<base_position>.rec: read-write (or read-only with
 * AA_ARCHIVE_SEGMENT_READ_ONLY); with AA_ARCHIVE_SEGMENT_CREATE a missing file is created sparse
 * at segment_length (and the directory synced when sync_level >= 1). Returns the descriptor
 * (close(2) it), or -1 (a missing file without CREATE: errno ENOENT in the message). */
int aa_archive_segment_open(
    const char *dir, int64_t recording_id, int64_t base_position, int32_t segment_length, int32_t flags,
    int32_t sync_level);
/* Writes length bytes at file_offset (all of them: short writes are continued), then forces them
 * as sync_level says. -1 on failure; a full disk gives AA_ERROR_CODE_STORAGE_SPACE, and what was
 * written before stays readable. */
int aa_archive_segment_write(int fd, int64_t file_offset, const uint8_t *data, size_t length, int32_t sync_level);
/* Reads up to length bytes at file_offset; the bytes read (fewer only at the end of the file), -1. */
int64_t aa_archive_segment_read(int fd, int64_t file_offset, uint8_t *buffer, size_t length);
/* Forces a file as sync_level says (no-op at 0). */
int aa_archive_segment_sync(int fd, int32_t sync_level);
/* fsync of a directory (after creating, renaming or deleting files in it). */
int aa_archive_dir_sync(const char *dir);
/* An archive directory a tool writes into (migrate's destination; docs/security.md, "Files"):
 * created with its missing parents, owner only (0700), or an existing one checked as the archive
 * checks its own (a real directory of this user that no one else may write), its mode and group
 * kept. 0, or -1 naming the directory, its owner, its mode and the fix. */
int aa_archive_dir_prepare(const char *dir);

/* The base positions of a recording's segment files, ascending, into bases (at most capacity);
 * returns how many files there are (may exceed capacity), or -1. */
int32_t aa_archive_segment_list(const char *dir, int64_t recording_id, int64_t *bases, int32_t capacity);
/* Deletes a recording's segment files whose base is >= from_base_position (INT64_MIN: all, for a
 * purge); syncs the directory at sync_level >= 1. The number deleted, or -1. */
int32_t aa_archive_segment_delete_from(const char *dir, int64_t recording_id, int64_t from_base_position, int32_t sync_level);

/* Rewrites, in place, the session_id field of every DATA frame in a block of whole frames with the
 * checksum of its payload (reference 4; PAD frames left alone). 0, or -1 when the block does not
 * hold whole frames (a frame_length < 32 or past the block's end). checksum_type NONE: no-op. */
int aa_archive_frames_apply_checksum(uint8_t *block, size_t length, int32_t checksum_type);
/* Checks a block of whole frames written with aa_archive_frames_apply_checksum: 0 when every DATA
 * frame's session_id holds its payload's checksum, 1 on the first mismatch (*bad_offset: the
 * frame's offset in the block), -1 when the frames are malformed. */
int aa_archive_frames_verify_checksum(const uint8_t *block, size_t length, int32_t checksum_type, int64_t *bad_offset);

/* The recovery scan (reference 4, "Startup recovery"): walks the frames of the recording's highest
 * segment from its first position until a frame_length <= 0 or a frame that does not belong
 * (type not DATA/PAD, term offset/term id/stream id not the position's, frame past its term or
 * segment), and returns where the last complete frame ends. A last frame that straddles a page
 * boundary and whose bytes after its last page boundary are all zero may be a write cut short (a
 * killed process stops writing on a page boundary): with checksum_type set it is complete when its
 * checksum matches, without one it is taken as torn (a message whose final partial page is all
 * zeros is then dropped: record with a checksum to tell them apart). A torn frame is not counted,
 * and with repair its bytes are zeroed (synced as sync_level says) so the segment ends cleanly.
 * start_position, initial_term_id, term_length, segment_length and stream_id are the descriptor's.
 * 0 with *result filled, -1 on an I/O error or invalid arguments. */
int aa_archive_segment_recover(
    const char *dir, int64_t recording_id, int64_t start_position, int32_t initial_term_id, int32_t term_length,
    int32_t segment_length, int32_t stream_id, int32_t checksum_type, bool repair, int32_t sync_level,
    aa_archive_recovery_t *result);

/* 1 when a DATA or PAD frame header for position is at its place in the recording's segment
 * (a replay or truncate position must be one: INVALID_POSITION otherwise), 0 when not (a missing
 * segment, a frame_length <= 0, a header of another position/stream), -1 on an I/O error. */
int aa_archive_segment_frame_at(
    const char *dir, int64_t recording_id, int64_t start_position, int64_t position, int32_t initial_term_id,
    int32_t term_length, int32_t segment_length, int32_t stream_id);

/* Zeroes length bytes at file_offset (a truncated tail, a torn frame): punches a hole where the
 * file system can, writes zeros where it cannot; then syncs as sync_level says. */
int aa_archive_segment_erase(int fd, int64_t file_offset, int64_t length, int32_t sync_level);

/* Verifies a recording's frames from start_position to stop_position across its segments: every
 * frame's type, term offset, term id, stream id and extent, and with checksum_type each DATA
 * frame's checksum; the data must reach stop_position. 0 when all is well, 1 at the first problem
 * (*result says where and what), -1 on an I/O error or invalid arguments. */
int aa_archive_segment_verify(
    const char *dir, int64_t recording_id, int64_t start_position, int64_t stop_position, int32_t initial_term_id,
    int32_t term_length, int32_t segment_length, int32_t stream_id, int32_t checksum_type, aa_archive_verify_t *result);

/* CDEF END */

#endif
