/*
 * Lists of networks in CIDR notation, IPv4 and IPv6 ("10.0.0.0/8,fd00::/8,192.0.2.7"; a bare address
 * is one host), and whether an address lies in one of them. An IPv4 address seen by an IPv6 socket
 * (::ffff:a.b.c.d) matches the IPv4 networks. The driver name resolver takes the frames of its
 * allowed networks only (docs/architecture.md, "Driver names").
 */
#ifndef AA_CIDR_H
#define AA_CIDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define AA_CIDR_LIST_MAX 64

typedef struct aa_cidr_stct
{
    int family;             /* AF_INET or AF_INET6 */
    uint8_t address[16];    /* network order; the first 4 bytes for IPv4; host bits cleared */
    int prefix_length;      /* 0..32 or 0..128 */
}
aa_cidr_t;

typedef struct aa_cidr_list_stct
{
    aa_cidr_t networks[AA_CIDR_LIST_MAX];
    size_t count;           /* 0: the list is empty */
}
aa_cidr_list_t;

/* Parses a comma list (spaces around items allowed; NULL or "" gives an empty list). Returns 0, or -1
 * with an error that names option_name, the item at fault and the accepted form. */
int aa_cidr_list_parse(const char *option_name, const char *text, aa_cidr_list_t *list);

/* true when bytes (network order; 4 for AF_INET, 16 for AF_INET6) lie in one of the networks. */
bool aa_cidr_list_contains(const aa_cidr_list_t *list, int family, const uint8_t *bytes);

/* The same for a socket address (IPv4-mapped IPv6 addresses count as IPv4). */
bool aa_cidr_list_contains_address(const aa_cidr_list_t *list, const struct sockaddr_storage *address);

#endif
