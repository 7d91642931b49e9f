#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "util/aa_cidr.h"
#include "util/aa_error.h"

static int aa_cidr_parse_one(const char *option_name, const char *item, aa_cidr_t *cidr)
{
    char host[INET6_ADDRSTRLEN + 1];
    const char *slash = strchr(item, '/');
    size_t host_length = NULL == slash ? strlen(item) : (size_t)(slash - item);
    memset(cidr, 0, sizeof(*cidr));
    if (host_length > 0 && host_length < sizeof(host))
    {
        memcpy(host, item, host_length);
        host[host_length] = '\0';
        if (1 == inet_pton(AF_INET, host, cidr->address))
        {
            cidr->family = AF_INET;
        }
        else if (1 == inet_pton(AF_INET6, host, cidr->address))
        {
            cidr->family = AF_INET6;
        }
    }
    int max_prefix = AF_INET6 == cidr->family ? 128 : 32;
    cidr->prefix_length = max_prefix;
    if (0 != cidr->family && NULL != slash)
    {
        char *end = NULL;
        errno = 0;
        long prefix = strtol(slash + 1, &end, 10);
        if ('\0' == slash[1] || '\0' != *end || 0 != errno || prefix < 0 || prefix > max_prefix ||
            !(slash[1] >= '0' && slash[1] <= '9'))
        {
            cidr->family = 0;
        }
        else
        {
            cidr->prefix_length = (int)prefix;
        }
    }
    if (0 == cidr->family)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "%s: '%s' is not a network: give an IPv4 or IPv6 address with an optional prefix length, "
            "e.g. 10.0.0.0/8,fd00::/8,192.0.2.7", option_name, item);
        return -1;
    }
    int bytes = max_prefix / 8;
    for (int i = 0; i < bytes; i++)
    {
        int bits = cidr->prefix_length - 8 * i;
        uint8_t mask = bits >= 8 ? 0xFF : bits <= 0 ? 0 : (uint8_t)(0xFF << (8 - bits));
        cidr->address[i] &= mask;
    }
    return 0;
}

int aa_cidr_list_parse(const char *option_name, const char *text, aa_cidr_list_t *list)
{
    memset(list, 0, sizeof(*list));
    if (NULL == text)
    {
        return 0;
    }
    const char *p = text;
    while ('\0' != *p)
    {
        const char *end = strchr(p, ',');
        size_t n = NULL == end ? strlen(p) : (size_t)(end - p);
        const char *start = p;
        while (n > 0 && ' ' == *start)
        {
            start++;
            n--;
        }
        while (n > 0 && ' ' == start[n - 1])
        {
            n--;
        }
        if (n > 0)
        {
            char item[128];
            if (list->count == AA_CIDR_LIST_MAX || n >= sizeof(item))
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: at most %d networks of up to %zu characters each, got '%s'",
                    option_name, AA_CIDR_LIST_MAX, sizeof(item) - 1, text);
                return -1;
            }
            memcpy(item, start, n);
            item[n] = '\0';
            if (aa_cidr_parse_one(option_name, item, &list->networks[list->count]) < 0)
            {
                return -1;
            }
            list->count++;
        }
        if (NULL == end)
        {
            break;
        }
        p = end + 1;
    }
    return 0;
}

bool aa_cidr_list_contains(const aa_cidr_list_t *list, int family, const uint8_t *bytes)
{
    for (size_t i = 0; i < list->count; i++)
    {
        const aa_cidr_t *c = &list->networks[i];
        if (c->family != family)
        {
            continue;
        }
        int full = c->prefix_length / 8, rest = c->prefix_length % 8;
        if (0 != memcmp(c->address, bytes, (size_t)full))
        {
            continue;
        }
        if (0 == rest || (bytes[full] & (uint8_t)(0xFF << (8 - rest))) == c->address[full])
        {
            return true;
        }
    }
    return false;
}

bool aa_cidr_list_contains_address(const aa_cidr_list_t *list, const struct sockaddr_storage *address)
{
    if (AF_INET == address->ss_family)
    {
        return aa_cidr_list_contains(list, AF_INET, (const uint8_t *)&((const struct sockaddr_in *)address)->sin_addr);
    }
    if (AF_INET6 == address->ss_family)
    {
        const struct in6_addr *in6 = &((const struct sockaddr_in6 *)address)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(in6))
        {
            return aa_cidr_list_contains(list, AF_INET, &in6->s6_addr[12]);
        }
        return aa_cidr_list_contains(list, AF_INET6, in6->s6_addr);
    }
    return false;
}
