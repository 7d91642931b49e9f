/* CRC-32 and CRC-32C: slicing-by-8 tables, and the SSE4.2 crc32 instruction for CRC-32C on x86-64. */
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "archive/aa_archive_checksum.h"
#include "util/aa_error.h"

static uint32_t g_crc32_table[8][256];
static uint32_t g_crc32c_table[8][256];
static pthread_once_t g_tables_once = PTHREAD_ONCE_INIT;

static void aa_crc_build(uint32_t table[8][256], uint32_t polynomial)
{
    for (uint32_t i = 0; i < 256; i++)
    {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
        {
            c = (c & 1) ? (c >> 1) ^ polynomial : c >> 1;
        }
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
    {
        for (int t = 1; t < 8; t++)
        {
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xFF];
        }
    }
}

static void aa_crc_build_tables(void)
{
    aa_crc_build(g_crc32_table, 0xEDB88320u);
    aa_crc_build(g_crc32c_table, 0x82F63B78u);
}

static uint32_t aa_crc_slice8(uint32_t table[8][256], uint32_t crc, const uint8_t *p, size_t length)
{
    crc = ~crc;
    while (length >= 8)
    {
        uint64_t word;
        memcpy(&word, p, 8);
        word ^= crc;
        crc = table[7][word & 0xFF] ^ table[6][(word >> 8) & 0xFF] ^ table[5][(word >> 16) & 0xFF] ^
            table[4][(word >> 24) & 0xFF] ^ table[3][(word >> 32) & 0xFF] ^ table[2][(word >> 40) & 0xFF] ^
            table[1][(word >> 48) & 0xFF] ^ table[0][word >> 56];
        p += 8;
        length -= 8;
    }
    while (length-- > 0)
    {
        crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xFF];
    }
    return ~crc;
}

uint32_t aa_crc32(uint32_t crc, const uint8_t *data, size_t length)
{
    pthread_once(&g_tables_once, aa_crc_build_tables);
    return aa_crc_slice8(g_crc32_table, crc, data, length);
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t aa_crc32c_sse42(uint32_t crc, const uint8_t *p, size_t length)
{
    uint64_t c = ~crc;
    while (length >= 8)
    {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length-- > 0)
    {
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    }
    return ~c32;
}
#endif

uint32_t aa_crc32c(uint32_t crc, const uint8_t *data, size_t length)
{
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
    {
        return aa_crc32c_sse42(crc, data, length);
    }
#endif
    pthread_once(&g_tables_once, aa_crc_build_tables);
    return aa_crc_slice8(g_crc32c_table, crc, data, length);
}

int32_t aa_archive_checksum(int32_t type, const uint8_t *data, size_t length)
{
    switch (type)
    {
        case AA_ARCHIVE_CHECKSUM_CRC32:
            return (int32_t)aa_crc32(0, data, length);
        case AA_ARCHIVE_CHECKSUM_CRC32C:
            return (int32_t)aa_crc32c(0, data, length);
        default:
            return 0;
    }
}

int32_t aa_archive_checksum_parse(const char *name)
{
    static const struct
    {
        const char *name;
        int32_t type;
    }
    names[] =
    {
        { "none", AA_ARCHIVE_CHECKSUM_NONE },
        { "", AA_ARCHIVE_CHECKSUM_NONE },
        { "crc-32", AA_ARCHIVE_CHECKSUM_CRC32 },
        { "crc32", AA_ARCHIVE_CHECKSUM_CRC32 },
        { "io.aeron.archive.checksum.Crc32", AA_ARCHIVE_CHECKSUM_CRC32 },
        { "crc-32c", AA_ARCHIVE_CHECKSUM_CRC32C },
        { "crc32c", AA_ARCHIVE_CHECKSUM_CRC32C },
        { "io.aeron.archive.checksum.Crc32c", AA_ARCHIVE_CHECKSUM_CRC32C },
    };
    if (NULL != name)
    {
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        {
            if (0 == strcasecmp(name, names[i].name))
            {
                return names[i].type;
            }
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "unknown archive checksum '%s': use none, crc-32 or crc-32c",
        NULL == name ? "(null)" : name);
    return -1;
}

const char *aa_archive_checksum_name(int32_t type)
{
    switch (type)
    {
        case AA_ARCHIVE_CHECKSUM_NONE:
            return "none";
        case AA_ARCHIVE_CHECKSUM_CRC32:
            return "crc-32";
        case AA_ARCHIVE_CHECKSUM_CRC32C:
            return "crc-32c";
        default:
            return NULL;
    }
}
