/*
 * Socket addresses of UDP channels: format, compare, ports, multicast and wildcard tests, and the
 * default resolver's getaddrinfo lookup. Used by the name resolvers (resolver/), the media layer and
 * the tools.
 */
#ifndef AA_UDP_ADDRESS_H
#define AA_UDP_ADDRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

/* "[" + 45 characters of IPv6 text + "]:" + 5 port digits */
#define AA_UDP_ADDRESS_FORMAT_MAX_LENGTH 64

/* Resolves host (no brackets) and port into *address, preferring family (AF_INET, AF_INET6 or
 * AF_UNSPEC meaning IPv4 first), with getaddrinfo: the default resolver. BLOCKING for names. key
 * names the URI parameter in errors. */
int aa_udp_channel_resolve_host(
    const char *key, const char *host, int32_t port, int family, struct sockaddr_storage *address);
/* "a.b.c.d:port" or "[v6]:port"; returns the length written or -1. */
int aa_udp_address_format(char *buffer, size_t length, const struct sockaddr_storage *address);
void aa_udp_address_set_port(struct sockaddr_storage *address, uint16_t port);
socklen_t aa_udp_address_length(const struct sockaddr_storage *address);
uint16_t aa_udp_address_port(const struct sockaddr_storage *address);
bool aa_udp_address_is_multicast(const struct sockaddr_storage *address);
bool aa_udp_address_is_wildcard(const struct sockaddr_storage *address);
bool aa_udp_address_equals(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
/* 0.0.0.0:port or [::]:port */
void aa_udp_address_wildcard(struct sockaddr_storage *address, int family, uint16_t port);

#endif
