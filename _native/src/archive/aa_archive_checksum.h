/*
 * Checksums of the archive (reference 4): CRC-32 (zlib's, java.util.zip.CRC32) and CRC-32C
 * (Castagnoli, java.util.zip.CRC32C; SSE4.2 instructions where the CPU has them), as the
 * `record.checksum`/`replay.checksum` options name them. The archive stores each value as the
 * int32 with the CRC's bits (Java's Checksum.compute returns an int).
 */
#ifndef AA_ARCHIVE_CHECKSUM_H
#define AA_ARCHIVE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* CDEF BEGIN */

#define AA_ARCHIVE_CHECKSUM_NONE 0
#define AA_ARCHIVE_CHECKSUM_CRC32 1
#define AA_ARCHIVE_CHECKSUM_CRC32C 2

/* The CRC of length bytes, continuing from crc (0 to start): standard initial value and final
 * xor, so aa_crc32c(0, "123456789", 9) == 0xE3069283 and aa_crc32(0, "123456789", 9) == 0xCBF43926. */
uint32_t aa_crc32(uint32_t crc, const uint8_t *data, size_t length);
uint32_t aa_crc32c(uint32_t crc, const uint8_t *data, size_t length);

/* The checksum of a type (AA_ARCHIVE_CHECKSUM_*) as the archive stores it; 0 for NONE. */
int32_t aa_archive_checksum(int32_t type, const uint8_t *data, size_t length);

/* "crc-32" / "crc-32c" / "none" (case-insensitive; also "crc32", "crc32c", Java's class names
 * "io.aeron.archive.checksum.Crc32" and "...Crc32c") -> the type, or -1 (error set naming the choices). */
int32_t aa_archive_checksum_parse(const char *name);
/* The type's name ("none", "crc-32", "crc-32c"), NULL when unknown. */
const char *aa_archive_checksum_name(int32_t type);

/* CDEF END */

#endif
