/*
 * The archive catalog, `<archive dir>/archive.catalog` (reference 1), byte for byte as Aeron's:
 * a memory-mapped file with no SBE message header holding
 *   CatalogHeader (32 B: version 3.1.0 @0, length 32 @4, nextRecordingId @8, alignment 64 @16),
 *   then from offset 32 one entry per recording, each a RecordingDescriptorHeader (32 B: length
 *   @0 = the descriptor's bytes including padding, state @4 INVALID/VALID/DELETED, checksum @8)
 *   followed by a RecordingDescriptor (80-byte block + strippedChannel, originalChannel,
 *   sourceIdentity), the entry padded with zeros to a multiple of the alignment.
 * A scan stops at an entry whose length is 0. The file is created allocated at its capacity (1 MiB
 * by default) and grows by x1.5 (up to 2^31 - 1 bytes) when an entry does not fit, each chunk
 * allocated before the mapping grows into it (a full disk is an error, never a SIGBUS).
 *
 * Crash safety: an entry is appended in this order, so that a crash at any point leaves a catalog
 * that opens (at most the entry being added is lost):
 *   1. the descriptor's bytes and padding are written after the last entry (its header's length
 *      is still 0 there, so a scan stops before it);
 *   2. the header's checksum and state (VALID) are written;
 *      (sync level >= 1: the pages are forced here, before the commit point)
 *   3. the header's length is stored (a release store): the commit point, the entry now exists;
 *   4. the catalog header's nextRecordingId is advanced (and forced at sync level >= 1).
 * On open, nextRecordingId is taken as max(the header's, the highest recording id + 1), so a crash
 * between 3 and 4 does not reuse an id. An entry that cannot be what step 3 commits (a length that
 * is not the aligned size of a descriptor, runs past the file, or a descriptor that does not
 * decode: possible only when pages were lost in a power failure at sync level 0) ends the scan.
 * Opened writable, everything after the last entry is zeroed (a torn entry, or the descriptor of
 * an append that never reached its commit point), so the next append starts on zeros and no
 * remnant is misread by a later scan (counted in aa_archive_catalog_info's repaired_entries).
 * Damage that cannot come from an append (well-formed entries with higher ids follow where the
 * scan stopped) is refused when opened writable, naming the offset: nothing committed is cut off.
 * Updates (stop position and timestamp, start position, extend, state) write the fields in place,
 * recompute the entry's checksum when the catalog keeps checksums, and force the pages at sync
 * level >= 1 (msync; level 2 also fsyncs the file).
 *
 * Threads: one writer (the archive's conductor); readers in other processes (the recordings tool)
 * may map it read-only. Pointers into the mapping (aa_archive_catalog_entry_t's descriptor and its
 * var fields) stay valid until the next add (which may grow and remap the file) or close.
 * Errors: -1 with aa_errcode()/aa_errmsg() set.
 */
#ifndef AA_ARCHIVE_CATALOG_H
#define AA_ARCHIVE_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocols/aa_archive_codecs.h"
#include "archive/aa_archive_checksum.h"

#define AA_ARCHIVE_CATALOG_FILE_NAME "archive.catalog"

/* CDEF BEGIN */

/* the catalog's semantic version (3.1.0) and the major a catalog must have to be opened */
#define AA_ARCHIVE_CATALOG_VERSION 196864
#define AA_ARCHIVE_CATALOG_MAJOR_VERSION 3
#define AA_ARCHIVE_CATALOG_HEADER_LENGTH 32
#define AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH 32
#define AA_ARCHIVE_CATALOG_ALIGNMENT 64
#define AA_ARCHIVE_CATALOG_CAPACITY_DEFAULT 1048576
#define AA_ARCHIVE_CATALOG_CAPACITY_MAX 2147483647

/* aa_archive_catalog_open flags */
#define AA_ARCHIVE_CATALOG_CREATE 1
#define AA_ARCHIVE_CATALOG_READ_ONLY 2

typedef struct aa_archive_catalog_stct aa_archive_catalog_t;

/* One entry: where it is, its header, and its descriptor decoded in place. */
typedef struct aa_archive_catalog_entry_stct
{
    int64_t recording_id;
    int32_t offset;            /* of the descriptor header in the file */
    int32_t length;            /* the header's length: descriptor bytes including padding */
    int32_t state;             /* AA_ARCHIVE_RECORDING_INVALID / VALID / DELETED */
    int32_t checksum;          /* the header's checksum field (0 when the catalog keeps none) */
    const uint8_t *descriptor; /* the descriptor's bytes in the mapping (encoded_length of them) */
    int32_t encoded_length;    /* 80 + 3 var fields, without the padding */
    aa_archive_recording_descriptor_t fields; /* decoded; var fields point into the mapping */
}
aa_archive_catalog_entry_t;

typedef struct aa_archive_catalog_info_stct
{
    int32_t version;
    int32_t alignment;
    int64_t next_recording_id;
    int64_t capacity;          /* the file's mapped length */
    int32_t next_entry_offset; /* where the next entry goes */
    int32_t entry_count;       /* entries of any state */
    int32_t valid_count;
    int32_t repaired_entries;  /* 1 when a torn or uncommitted entry was cut off when opened */
    int32_t sync_level;
    int32_t checksum_type;
}
aa_archive_catalog_info_t;

/* Opens <archive_dir>/archive.catalog. flags: AA_ARCHIVE_CATALOG_CREATE creates a missing file
 * (allocated, capacity bytes; the directory synced at sync_level >= 1); AA_ARCHIVE_CATALOG_READ_ONLY
 * maps it read-only (tools: no repair, every update refused). An existing file is mapped at
 * max(its length, capacity). capacity: 32 .. 2^31-1 (0 = 1 MiB). checksum_type
 * (AA_ARCHIVE_CHECKSUM_*): the checksum written into descriptor headers. Fails on a catalog whose
 * major version is not 3, a header length other than 32, or an alignment that is not a power of 2
 * >= 32, naming what was found. */
int aa_archive_catalog_open(
    aa_archive_catalog_t **catalog, const char *archive_dir, int64_t capacity, int32_t sync_level,
    int32_t checksum_type, int32_t flags);
/* Unmaps and closes (forcing the pages at sync_level >= 1); NULL is ignored. */
int aa_archive_catalog_close(aa_archive_catalog_t *catalog);
void aa_archive_catalog_info(aa_archive_catalog_t *catalog, aa_archive_catalog_info_t *info);

/* Appends a recording: descriptor's fields are written as given except recording_id, which is
 * assigned (nextRecordingId); Aeron writes control_session_id and correlation_id as 0 (listings
 * overwrite them) and a new recording has stop_position -1, stop_timestamp -1. Strings longer
 * than the catalog can hold fail. Returns the new recording id, or -1. */
int64_t aa_archive_catalog_add(aa_archive_catalog_t *catalog, const aa_archive_recording_descriptor_t *descriptor);

/* The entry of a recording in any state: 1 (found, *entry filled), 0 (no such id), -1. */
int aa_archive_catalog_find(aa_archive_catalog_t *catalog, int64_t recording_id, aa_archive_catalog_entry_t *entry);
/* The index-th entry in file order (0 .. entry_count - 1), any state: 1, or 0 past the end. */
int aa_archive_catalog_entry(aa_archive_catalog_t *catalog, int32_t index, aa_archive_catalog_entry_t *entry);

/* The index (for aa_archive_catalog_entry) of the first entry whose recording id is >=
 * recording_id, or entry_count when there is none: where a listing from an id starts. */
int32_t aa_archive_catalog_lower_bound(aa_archive_catalog_t *catalog, int64_t recording_id);

/* Field updates of a VALID recording (-1 with AA_ERROR_CODE_INVALID_ARGUMENT for an unknown or
 * not VALID id). stop: the recording stopped (stop position, then stop timestamp). */
int aa_archive_catalog_update_stop(aa_archive_catalog_t *catalog, int64_t recording_id, int64_t stop_position, int64_t stop_timestamp);
int aa_archive_catalog_update_stop_position(aa_archive_catalog_t *catalog, int64_t recording_id, int64_t stop_position);
int aa_archive_catalog_update_start_position(aa_archive_catalog_t *catalog, int64_t recording_id, int64_t start_position);
/* Extend: the recording is active again: stop position -1, stop timestamp -1, the new image's
 * session id, and the control session and correlation ids of the extend request. */
int aa_archive_catalog_extend(
    aa_archive_catalog_t *catalog, int64_t recording_id, int64_t control_session_id, int64_t correlation_id,
    int32_t session_id);
/* Sets an entry's state (any current state; purge: DELETED; the tools: INVALID / VALID). */
int aa_archive_catalog_change_state(aa_archive_catalog_t *catalog, int64_t recording_id, int32_t state);

/* A listing's reply for a VALID recording: the RecordingDescriptor message (8-byte SBE header,
 * then the catalog's descriptor bytes verbatim with control_session_id and correlation_id
 * overwritten) into buffer. Its length; 0 when the id is not VALID; -1 when buffer is too small. */
int64_t aa_archive_catalog_encode_descriptor(
    aa_archive_catalog_t *catalog, int64_t recording_id, int64_t control_session_id, int64_t correlation_id,
    uint8_t *buffer, size_t capacity);
/* The checksum of an entry's descriptor bytes (header length of them) with checksum_type, to
 * compare with entry->checksum (verify). */
int32_t aa_archive_catalog_compute_checksum(
    aa_archive_catalog_t *catalog, const aa_archive_catalog_entry_t *entry, int32_t checksum_type);
/* Forces the mapping to disk (msync; fsync too at sync level 2) whatever the sync level. */
int aa_archive_catalog_sync(aa_archive_catalog_t *catalog);

/* CDEF END */

#endif
