/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), small and dependency-free, for the signed
 * resolution frames of the driver name resolver (docs/architecture.md, "Driver names"), and a
 * constant-time comparison of MACs. Tested against the FIPS 180-4 examples and RFC 4231's vectors
 * (_native/tests/test_util_sha256.c).
 */
#ifndef AA_SHA256_H
#define AA_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AA_SHA256_DIGEST_LENGTH 32
#define AA_SHA256_BLOCK_LENGTH 64

typedef struct aa_sha256_stct
{
    uint32_t state[8];
    uint64_t length;                        /* bytes hashed so far */
    uint8_t block[AA_SHA256_BLOCK_LENGTH];
    size_t block_used;
}
aa_sha256_t;

void aa_sha256_init(aa_sha256_t *sha);
void aa_sha256_update(aa_sha256_t *sha, const void *data, size_t length);
void aa_sha256_final(aa_sha256_t *sha, uint8_t digest[AA_SHA256_DIGEST_LENGTH]);
void aa_sha256(const void *data, size_t length, uint8_t digest[AA_SHA256_DIGEST_LENGTH]);

/* HMAC-SHA256 over the concatenation of parts (count of them), any key length. */
void aa_hmac_sha256_parts(
    const uint8_t *key, size_t key_length, const void *const *parts, const size_t *lengths, size_t count,
    uint8_t mac[AA_SHA256_DIGEST_LENGTH]);
void aa_hmac_sha256(
    const uint8_t *key, size_t key_length, const void *data, size_t length, uint8_t mac[AA_SHA256_DIGEST_LENGTH]);

/* true when a and b hold the same length bytes; the time taken does not depend on where they differ. */
bool aa_constant_time_equals(const uint8_t *a, const uint8_t *b, size_t length);

#endif
