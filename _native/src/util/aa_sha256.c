#include <string.h>

#include "util/aa_sha256.h"

static const uint32_t aa_sha256_k[64] =
{
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t aa_rotr(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void aa_sha256_block(aa_sha256_t *sha, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
    {
        w[i] = ((uint32_t)p[4 * i] << 24) | ((uint32_t)p[4 * i + 1] << 16) | ((uint32_t)p[4 * i + 2] << 8) |
            (uint32_t)p[4 * i + 3];
    }
    for (int i = 16; i < 64; i++)
    {
        uint32_t s0 = aa_rotr(w[i - 15], 7) ^ aa_rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = aa_rotr(w[i - 2], 17) ^ aa_rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = sha->state[0], b = sha->state[1], c = sha->state[2], d = sha->state[3];
    uint32_t e = sha->state[4], f = sha->state[5], g = sha->state[6], h = sha->state[7];
    for (int i = 0; i < 64; i++)
    {
        uint32_t s1 = aa_rotr(e, 6) ^ aa_rotr(e, 11) ^ aa_rotr(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + s1 + ch + aa_sha256_k[i] + w[i];
        uint32_t s0 = aa_rotr(a, 2) ^ aa_rotr(a, 13) ^ aa_rotr(a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = s0 + maj;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    sha->state[0] += a;
    sha->state[1] += b;
    sha->state[2] += c;
    sha->state[3] += d;
    sha->state[4] += e;
    sha->state[5] += f;
    sha->state[6] += g;
    sha->state[7] += h;
}

void aa_sha256_init(aa_sha256_t *sha)
{
    static const uint32_t initial[8] =
    {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    };
    memcpy(sha->state, initial, sizeof(initial));
    sha->length = 0;
    sha->block_used = 0;
}

void aa_sha256_update(aa_sha256_t *sha, const void *data, size_t length)
{
    const uint8_t *p = data;
    sha->length += length;
    while (length > 0)
    {
        size_t n = AA_SHA256_BLOCK_LENGTH - sha->block_used;
        if (n > length)
        {
            n = length;
        }
        memcpy(sha->block + sha->block_used, p, n);
        sha->block_used += n;
        p += n;
        length -= n;
        if (AA_SHA256_BLOCK_LENGTH == sha->block_used)
        {
            aa_sha256_block(sha, sha->block);
            sha->block_used = 0;
        }
    }
}

void aa_sha256_final(aa_sha256_t *sha, uint8_t digest[AA_SHA256_DIGEST_LENGTH])
{
    uint64_t bits = sha->length * 8;
    uint8_t pad = 0x80;
    aa_sha256_update(sha, &pad, 1);
    pad = 0;
    while (sha->block_used != AA_SHA256_BLOCK_LENGTH - 8)
    {
        aa_sha256_update(sha, &pad, 1);
    }
    uint8_t length_bytes[8];
    for (int i = 0; i < 8; i++)
    {
        length_bytes[i] = (uint8_t)(bits >> (56 - 8 * i));
    }
    aa_sha256_update(sha, length_bytes, 8);
    for (int i = 0; i < 8; i++)
    {
        digest[4 * i] = (uint8_t)(sha->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(sha->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(sha->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)sha->state[i];
    }
    memset(sha, 0, sizeof(*sha));
}

void aa_sha256(const void *data, size_t length, uint8_t digest[AA_SHA256_DIGEST_LENGTH])
{
    aa_sha256_t sha;
    aa_sha256_init(&sha);
    aa_sha256_update(&sha, data, length);
    aa_sha256_final(&sha, digest);
}

void aa_hmac_sha256_parts(
    const uint8_t *key, size_t key_length, const void *const *parts, const size_t *lengths, size_t count,
    uint8_t mac[AA_SHA256_DIGEST_LENGTH])
{
    uint8_t block[AA_SHA256_BLOCK_LENGTH];
    memset(block, 0, sizeof(block));
    if (key_length > AA_SHA256_BLOCK_LENGTH)
    {
        aa_sha256(key, key_length, block);   /* RFC 2104: a longer key is hashed first */
    }
    else if (key_length > 0)
    {
        memcpy(block, key, key_length);
    }
    uint8_t pad[AA_SHA256_BLOCK_LENGTH];
    aa_sha256_t sha;
    for (size_t i = 0; i < sizeof(pad); i++)
    {
        pad[i] = block[i] ^ 0x36;
    }
    aa_sha256_init(&sha);
    aa_sha256_update(&sha, pad, sizeof(pad));
    for (size_t i = 0; i < count; i++)
    {
        aa_sha256_update(&sha, parts[i], lengths[i]);
    }
    uint8_t inner[AA_SHA256_DIGEST_LENGTH];
    aa_sha256_final(&sha, inner);
    for (size_t i = 0; i < sizeof(pad); i++)
    {
        pad[i] = block[i] ^ 0x5c;
    }
    aa_sha256_init(&sha);
    aa_sha256_update(&sha, pad, sizeof(pad));
    aa_sha256_update(&sha, inner, sizeof(inner));
    aa_sha256_final(&sha, mac);
    memset(block, 0, sizeof(block));
    memset(pad, 0, sizeof(pad));
}

void aa_hmac_sha256(
    const uint8_t *key, size_t key_length, const void *data, size_t length, uint8_t mac[AA_SHA256_DIGEST_LENGTH])
{
    const void *parts[1] = { data };
    size_t lengths[1] = { length };
    aa_hmac_sha256_parts(key, key_length, parts, lengths, 1, mac);
}

bool aa_constant_time_equals(const uint8_t *a, const uint8_t *b, size_t length)
{
    volatile uint8_t difference = 0;
    for (size_t i = 0; i < length; i++)
    {
        difference |= (uint8_t)(a[i] ^ b[i]);
    }
    return 0 == difference;
}
