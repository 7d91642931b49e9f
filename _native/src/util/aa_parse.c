#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

#include "util/aa_parse.h"

int64_t aa_parse_duration_ns(const char *text)
{
    if (NULL == text || '\0' == *text)
    {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    if (0 != errno || end == text || value < 0)
    {
        return -1;
    }
    double scale = 1.0;
    if ('\0' == *end || 0 == strcasecmp(end, "ns"))
    {
        scale = 1.0;
    }
    else if (0 == strcasecmp(end, "us"))
    {
        scale = 1e3;
    }
    else if (0 == strcasecmp(end, "ms"))
    {
        scale = 1e6;
    }
    else if (0 == strcasecmp(end, "s"))
    {
        scale = 1e9;
    }
    else
    {
        return -1;
    }
    double ns = value * scale;
    if (ns > (double)INT64_MAX)
    {
        return -1;
    }
    return (int64_t)(ns + 0.5);
}

int64_t aa_parse_size(const char *text)
{
    if (NULL == text || '\0' == *text)
    {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (0 != errno || end == text || value < 0)
    {
        return -1;
    }
    int64_t scale = 1;
    if ('\0' != *end)
    {
        switch (*end)
        {
            case 'k': case 'K': scale = 1024; break;
            case 'm': case 'M': scale = 1024 * 1024; break;
            case 'g': case 'G': scale = 1024 * 1024 * 1024; break;
            default: return -1;
        }
        if ('\0' != end[1])
        {
            return -1;
        }
    }
    if (value > INT64_MAX / scale)
    {
        return -1;
    }
    return value * scale;
}
