/*
 * Aeron Archive control-protocol codecs (reference: aeron-archive-codecs.md): sans-I/O SBE encoders
 * and decoders for every message of schema 101 version 14 (control requests and responses, the
 * catalog's header, descriptor header and descriptor, recording signals and events) and for the
 * archive mark file's header (schema 100 version 2, template 200). No I/O, no allocation, any
 * buffer alignment; little-endian hosts only (as the rest of the library).
 *
 * The layouts are generated at build time from the SBE schemas protocols/aeron-archive-codecs.xml and
 * protocols/aeron-archive-mark-codecs.xml by _native/gen_codecs.py: aa_archive_codecs_gen.h (schema
 * ids and versions, enum values, template ids, block lengths, the message structs and their union,
 * included here) and the codec's layout tables. A change to the protocol is a change to a schema.
 * One generic representation, aa_archive_message_t: template_id selects the member of its union,
 * one struct per message with the schema's fields in declaration order (snake_case names; integer
 * fields as int64_t/int32_t/int8_t, enums as int32_t, var-data fields as aa_archive_var_t).
 *
 * Encoding: set template_id and the member's fields, then aa_archive_encode() (8-byte message
 * header + block + var data) or aa_archive_encode_body() (block + var data, no header: the catalog
 * stores descriptors so). Encoders always write the current schema's block length and version
 * (14, or 2 for the mark file), zero the block's padding, and write every var field as a uint32
 * length then the bytes (a NULL data pointer with length 0 is an empty field).
 *
 * Decoding: aa_archive_decode() checks the header (at least 8 bytes, a known template, the schema
 * id of that template, the header's block length within the buffer) and decodes the fields, taking
 * var data at the header's block length (not ours), as SBE's rules say: a field whose sinceVersion
 * is above the header's version reads as that field's null value, a var field added after the
 * header's version reads as empty; a block length too short for a field the header's version has
 * is an error, a longer one is skipped. Var fields point INTO the decoded buffer (no copy; they are
 * valid as long as that buffer is); a var length above 2^30 or past the buffer's end is an error.
 * Enum values are passed through as decoded (the service checks the values it acts on).
 * Every function returns -1 with aa_errcode()/aa_errmsg() set (AA_ERROR_CODE_MALFORMED_COMMAND for
 * malformed or truncated input, AA_ERROR_CODE_INVALID_ARGUMENT for a bad argument or a buffer too
 * small to encode into) and never reads or writes outside [buffer, buffer + length/capacity).
 */
#ifndef AA_ARCHIVE_CODECS_H
#define AA_ARCHIVE_CODECS_H

#include <stddef.h>
#include <stdint.h>

#include "protocols/aa_archive_codecs_gen.h"

#define AA_ARCHIVE_MARK_FILE_NAME "archive-mark.dat"

/* CDEF BEGIN */

/* CDEF INCLUDE protocols/aa_archive_codecs_gen.h */

/* the client protocol version (semver major << 16 | minor << 8 | patch) sent in AuthConnect and
 * ControlResponse.version: 1.12.0, as Aeron's Java client; a different major is rejected */
#define AA_ARCHIVE_PROTOCOL_SEMANTIC_VERSION 68608
#define AA_ARCHIVE_PROTOCOL_MAJOR_VERSION 1

/* The mark file `archive-mark.dat` (reference 1): the MarkFileHeader message (8-byte SBE header,
 * schema 100 v2, template 200, then its 128-byte block and 4 var strings) at offset 0 of an
 * 8 KiB header area, then the error log (errorBufferLength bytes). Its version is the archive's
 * semantic version, 3.1.0 (the catalog's). File offsets of the fields updated in place: */
#define AA_ARCHIVE_MARK_FILE_HEADER_LENGTH 8192
#define AA_ARCHIVE_MARK_FILE_VERSION 196864
#define AA_ARCHIVE_MARK_FILE_VERSION_OFFSET 8
#define AA_ARCHIVE_MARK_FILE_ACTIVITY_TIMESTAMP_OFFSET 16
#define AA_ARCHIVE_MARK_FILE_START_TIMESTAMP_OFFSET 24
#define AA_ARCHIVE_MARK_FILE_PID_OFFSET 32
#define AA_ARCHIVE_MARK_FILE_ARCHIVE_ID_OFFSET 64
/* activity ticks every second; a start is refused while the file was active this recently */
#define AA_ARCHIVE_MARK_FILE_ACTIVITY_INTERVAL_MS 1000
#define AA_ARCHIVE_MARK_FILE_LIVENESS_TIMEOUT_MS 10000

/* On ERROR, ControlResponse.relevantId holds one of these (ArchiveException's codes). */
#define AA_ARCHIVE_ERROR_GENERIC 0
#define AA_ARCHIVE_ERROR_ACTIVE_LISTING 1
#define AA_ARCHIVE_ERROR_ACTIVE_RECORDING 2
#define AA_ARCHIVE_ERROR_ACTIVE_SUBSCRIPTION 3
#define AA_ARCHIVE_ERROR_UNKNOWN_SUBSCRIPTION 4
#define AA_ARCHIVE_ERROR_UNKNOWN_RECORDING 5
#define AA_ARCHIVE_ERROR_UNKNOWN_REPLAY 6
#define AA_ARCHIVE_ERROR_MAX_REPLAYS 7
#define AA_ARCHIVE_ERROR_MAX_RECORDINGS 8
#define AA_ARCHIVE_ERROR_INVALID_EXTENSION 9
#define AA_ARCHIVE_ERROR_AUTHENTICATION_REJECTED 10
#define AA_ARCHIVE_ERROR_STORAGE_SPACE 11
#define AA_ARCHIVE_ERROR_UNKNOWN_REPLICATION 12
#define AA_ARCHIVE_ERROR_UNAUTHORISED_ACTION 13
#define AA_ARCHIVE_ERROR_REPLICATION_CONNECTION_FAILURE 14
#define AA_ARCHIVE_ERROR_EMPTY_RECORDING 15
#define AA_ARCHIVE_ERROR_INVALID_POSITION 16

/* the archive's null position and timestamp */
#define AA_ARCHIVE_NULL_POSITION -1
#define AA_ARCHIVE_NULL_TIMESTAMP -1

/* The header at the start of buffer: 0, or -1 when length < 8. Checks nothing else. */
int aa_archive_decode_header(const uint8_t *buffer, size_t length, aa_archive_header_t *header);

/* Decodes the message at the start of buffer (header + block + var data) into msg; returns the
 * number of bytes it spans (trailing bytes after it are left alone), or -1 on an unknown template,
 * a wrong schema id, or malformed/truncated input (see the top of this file). */
int64_t aa_archive_decode(const uint8_t *buffer, size_t length, aa_archive_message_t *msg);

/* Decodes a block + var data without a message header (a catalog descriptor: template_id 22,
 * block_length 80, version 14), as a header with these values would; returns the bytes spanned. */
int64_t aa_archive_decode_body(
    const uint8_t *buffer, size_t length, int32_t template_id, int32_t block_length, int32_t version,
    aa_archive_message_t *msg);

/* The length aa_archive_encode would write for msg (header included), or -1 (unknown template, a
 * var field over AA_ARCHIVE_VAR_DATA_MAX_LENGTH or with NULL data and a non-zero length). */
int64_t aa_archive_encoded_length(const aa_archive_message_t *msg);

/* Encodes msg (header + block + var data) at the start of buffer; returns the bytes written, or -1
 * when capacity is too small (nothing useful written) or msg is invalid (as above). */
int64_t aa_archive_encode(uint8_t *buffer, size_t capacity, const aa_archive_message_t *msg);

/* As aa_archive_encode without the 8-byte header (catalog descriptors). */
int64_t aa_archive_encode_body(uint8_t *buffer, size_t capacity, const aa_archive_message_t *msg);

/* The schema's name of a template ("ReplayRequest"), or NULL when the id is not a template. */
const char *aa_archive_template_name(int32_t template_id);
/* The block length of the current schema of a template, or -1 when unknown. */
int32_t aa_archive_template_block_length(int32_t template_id);
/* The schema id of a template (101, or 100 for the mark file header), or -1 when unknown. */
int32_t aa_archive_template_schema_id(int32_t template_id);
/* The number of fixed fields (pads excluded) and var fields of a template, -1 when unknown. */
int32_t aa_archive_template_field_count(int32_t template_id);
int32_t aa_archive_template_var_count(int32_t template_id);

/* Names for logs and errors: "OK", "ERROR", ...; "INVALID_POSITION", ...; "START", ...; NULL when
 * the value is not one of the enum's. */
const char *aa_archive_response_code_name(int32_t code);
const char *aa_archive_error_code_name(int64_t error_code);
const char *aa_archive_signal_name(int32_t signal);

/* CDEF END */

#endif
