#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "util/aa_udp_address.h"
#include "util/aa_error.h"

socklen_t aa_udp_address_length(const struct sockaddr_storage *address)
{
    if (AF_INET == address->ss_family)
    {
        return (socklen_t)sizeof(struct sockaddr_in);
    }
    if (AF_INET6 == address->ss_family)
    {
        return (socklen_t)sizeof(struct sockaddr_in6);
    }
    return 0;
}

uint16_t aa_udp_address_port(const struct sockaddr_storage *address)
{
    if (AF_INET == address->ss_family)
    {
        return ntohs(((const struct sockaddr_in *)address)->sin_port);
    }
    if (AF_INET6 == address->ss_family)
    {
        return ntohs(((const struct sockaddr_in6 *)address)->sin6_port);
    }
    return 0;
}

void aa_udp_address_set_port(struct sockaddr_storage *address, uint16_t port)
{
    if (AF_INET == address->ss_family)
    {
        ((struct sockaddr_in *)address)->sin_port = htons(port);
    }
    else if (AF_INET6 == address->ss_family)
    {
        ((struct sockaddr_in6 *)address)->sin6_port = htons(port);
    }
}

bool aa_udp_address_is_multicast(const struct sockaddr_storage *address)
{
    if (AF_INET == address->ss_family)
    {
        return IN_MULTICAST(ntohl(((const struct sockaddr_in *)address)->sin_addr.s_addr));
    }
    if (AF_INET6 == address->ss_family)
    {
        return IN6_IS_ADDR_MULTICAST(&((const struct sockaddr_in6 *)address)->sin6_addr);
    }
    return false;
}

bool aa_udp_address_is_wildcard(const struct sockaddr_storage *address)
{
    if (AF_INET == address->ss_family)
    {
        return INADDR_ANY == ((const struct sockaddr_in *)address)->sin_addr.s_addr;
    }
    if (AF_INET6 == address->ss_family)
    {
        return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)address)->sin6_addr);
    }
    return true;
}

bool aa_udp_address_equals(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
    {
        return false;
    }
    if (AF_INET == a->ss_family)
    {
        const struct sockaddr_in *a4 = (const struct sockaddr_in *)a;
        const struct sockaddr_in *b4 = (const struct sockaddr_in *)b;
        return a4->sin_port == b4->sin_port && a4->sin_addr.s_addr == b4->sin_addr.s_addr;
    }
    if (AF_INET6 == a->ss_family)
    {
        const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
        const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)b;
        return a6->sin6_port == b6->sin6_port && a6->sin6_scope_id == b6->sin6_scope_id &&
            0 == memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr));
    }
    return false;
}

int aa_udp_address_format(char *buffer, size_t length, const struct sockaddr_storage *address)
{
    char host[INET6_ADDRSTRLEN];
    int n = -1;
    if (AF_INET == address->ss_family &&
        NULL != inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, host, sizeof(host)))
    {
        n = snprintf(buffer, length, "%s:%u", host, (unsigned)aa_udp_address_port(address));
    }
    else if (AF_INET6 == address->ss_family &&
        NULL != inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, host, sizeof(host)))
    {
        n = snprintf(buffer, length, "[%s]:%u", host, (unsigned)aa_udp_address_port(address));
    }
    if (n < 0 || (size_t)n >= length)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s", "cannot format the socket address (unknown family or short buffer)");
        return -1;
    }
    return n;
}

void aa_udp_address_wildcard(struct sockaddr_storage *address, int family, uint16_t port)
{
    memset(address, 0, sizeof(*address));
    if (AF_INET6 == family)
    {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)address;
        a6->sin6_family = AF_INET6;
        a6->sin6_addr = in6addr_any;
        a6->sin6_port = htons(port);
    }
    else
    {
        struct sockaddr_in *a4 = (struct sockaddr_in *)address;
        a4->sin_family = AF_INET;
        a4->sin_addr.s_addr = htonl(INADDR_ANY);
        a4->sin_port = htons(port);
    }
}

int aa_udp_channel_resolve_host(
    const char *key, const char *host, int32_t port, int family, struct sockaddr_storage *address)
{
    memset(address, 0, sizeof(*address));
    struct sockaddr_in *a4 = (struct sockaddr_in *)address;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)address;
    if (1 == inet_pton(AF_INET, host, &a4->sin_addr))
    {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        return 0;
    }
    if (1 == inet_pton(AF_INET6, host, &a6->sin6_addr))
    {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        return 0;
    }

    struct addrinfo hints;
    struct addrinfo *results = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    int rc = getaddrinfo(host, NULL, &hints, &results);
    if (0 != rc)
    {
        AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST, "channel parameter %s: cannot resolve host '%s': %s",
            key, host, EAI_SYSTEM == rc ? strerror(errno) : gai_strerror(rc));
        return -1;
    }
    const struct addrinfo *chosen = NULL;
    int preferred = AF_UNSPEC == family ? AF_INET : family;
    for (const struct addrinfo *ai = results; NULL != ai; ai = ai->ai_next)
    {
        if (preferred == ai->ai_family)
        {
            chosen = ai;
            break;
        }
        if (NULL == chosen && (AF_INET == ai->ai_family || AF_INET6 == ai->ai_family))
        {
            chosen = ai;
        }
    }
    if (NULL == chosen || chosen->ai_addrlen > sizeof(*address))
    {
        freeaddrinfo(results);
        AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST, "channel parameter %s: host '%s' has no IPv4 or IPv6 address",
            key, host);
        return -1;
    }
    memcpy(address, chosen->ai_addr, chosen->ai_addrlen);
    aa_udp_address_set_port(address, (uint16_t)port);
    freeaddrinfo(results);
    return 0;
}
