/* SHA-256 against the FIPS 180-4 examples (one block, two blocks, a million 'a', empty), fed whole and
 * in odd pieces; HMAC-SHA256 against RFC 4231's test cases 1-7 (case 5 truncated to 128 bits as the
 * RFC gives it; cases 6 and 7 hash a key longer than a block); the constant-time comparison. */
#include <string.h>

#include "aa_test.h"
#include "util/aa_sha256.h"

static void hex(const uint8_t *bytes, size_t length, char *out)
{
    for (size_t i = 0; i < length; i++)
    {
        sprintf(out + 2 * i, "%02x", bytes[i]);
    }
    out[2 * length] = '\0';
}

static void check_sha256(const uint8_t *data, size_t length, const char *expected)
{
    uint8_t digest[AA_SHA256_DIGEST_LENGTH];
    char text[2 * AA_SHA256_DIGEST_LENGTH + 1];
    aa_sha256(data, length, digest);
    hex(digest, sizeof(digest), text);
    AA_CHECK(0 == strcmp(text, expected));
    /* the same bytes in pieces of 1, 7, 64 and 65 bytes */
    size_t pieces[] = { 1, 7, 64, 65 };
    for (size_t p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++)
    {
        aa_sha256_t sha;
        aa_sha256_init(&sha);
        for (size_t offset = 0; offset < length; offset += pieces[p])
        {
            size_t n = length - offset < pieces[p] ? length - offset : pieces[p];
            aa_sha256_update(&sha, data + offset, n);
        }
        aa_sha256_final(&sha, digest);
        hex(digest, sizeof(digest), text);
        AA_CHECK(0 == strcmp(text, expected));
    }
}

static void should_hash_the_fips_180_4_examples(void)
{
    check_sha256((const uint8_t *)"abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_sha256((const uint8_t *)two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    check_sha256((const uint8_t *)"", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    static uint8_t million[1000000];
    memset(million, 'a', sizeof(million));
    uint8_t digest[AA_SHA256_DIGEST_LENGTH];
    char text[2 * AA_SHA256_DIGEST_LENGTH + 1];
    aa_sha256(million, sizeof(million), digest);
    hex(digest, sizeof(digest), text);
    AA_CHECK(0 == strcmp(text, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

static void check_hmac(const uint8_t *key, size_t key_length, const char *data, size_t data_length, const char *expected)
{
    uint8_t mac[AA_SHA256_DIGEST_LENGTH];
    char text[2 * AA_SHA256_DIGEST_LENGTH + 1];
    aa_hmac_sha256(key, key_length, data, data_length, mac);
    hex(mac, sizeof(mac), text);
    AA_CHECK(0 == strncmp(text, expected, strlen(expected)));
}

static void should_match_the_rfc_4231_hmac_vectors(void)
{
    uint8_t key[131];
    uint8_t data[50];
    memset(key, 0x0b, 20);
    check_hmac(key, 20, "Hi There", 8, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    const char *jefe = "what do ya want for nothing?";
    check_hmac((const uint8_t *)"Jefe", 4, jefe, strlen(jefe),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(key, 0xaa, 20);
    memset(data, 0xdd, 50);
    check_hmac(key, 20, (const char *)data, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    for (int i = 0; i < 25; i++)
    {
        key[i] = (uint8_t)(i + 1);
    }
    memset(data, 0xcd, 50);
    check_hmac(key, 25, (const char *)data, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    memset(key, 0x0c, 20);
    check_hmac(key, 20, "Test With Truncation", 20, "a3b6167473100ee06e0c796c2955552b");
    memset(key, 0xaa, 131);
    const char *six = "Test Using Larger Than Block-Size Key - Hash Key First";
    check_hmac(key, 131, six, strlen(six), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    const char *seven = "This is a test using a larger than block-size key and a larger than block-size data. The key "
        "needs to be hashed before being used by the HMAC algorithm.";
    check_hmac(key, 131, seven, strlen(seven), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
    /* the MAC of parts is the MAC of their concatenation */
    const void *parts[2] = { seven, seven + 10 };
    size_t lengths[2] = { 10, strlen(seven) - 10 };
    uint8_t whole[AA_SHA256_DIGEST_LENGTH], split[AA_SHA256_DIGEST_LENGTH];
    aa_hmac_sha256(key, 131, seven, strlen(seven), whole);
    aa_hmac_sha256_parts(key, 131, parts, lengths, 2, split);
    AA_CHECK(0 == memcmp(whole, split, sizeof(whole)));
}

static void should_compare_every_byte(void)
{
    uint8_t a[32], b[32];
    memset(a, 7, sizeof(a));
    memcpy(b, a, sizeof(b));
    AA_CHECK(aa_constant_time_equals(a, b, sizeof(a)));
    for (size_t i = 0; i < sizeof(a); i++)
    {
        b[i] ^= 0x80;
        AA_CHECK(!aa_constant_time_equals(a, b, sizeof(a)));
        b[i] ^= 0x80;
    }
    AA_CHECK(aa_constant_time_equals(a, b, 0));
}

int main(void)
{
    printf("test_util_sha256\n");
    AA_RUN(should_hash_the_fips_180_4_examples);
    AA_RUN(should_match_the_rfc_4231_hmac_vectors);
    AA_RUN(should_compare_every_byte);
    return 0;
}
