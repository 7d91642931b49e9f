/*
 * UDP channels (reference 7.1): an aeron:udp URI resolved into the addresses a transport binds,
 * sends to and joins, its canonical form, socket buffer sizes and multicast TTL.
 *
 * aa_udp_channel_parse resolves host names through a name resolver (below; "default" uses
 * getaddrinfo) and looks interfaces up with getifaddrs, so it BLOCKS for as long as the resolver
 * takes. Call it from the driver conductor only (when a publication or subscription is added), never
 * from the sender or receiver duty cycle. Address literals (127.0.0.1:40123, [::1]:40123) are never
 * sent to a resolver.
 *
 * Addresses, whatever the role:
 *   remote_data     endpoint=: where a publication sends data; the address a unicast subscription
 *                   binds; the group of a multicast channel. Wildcard (port 0) without endpoint=.
 *   remote_control  unicast: remote_data. Multicast: the group with its last byte + 1 (reference 4.1).
 *   local_data      control= when given (MDC: a publication's control address, a subscription's
 *                   publisher address), else interface= (port from interface=, default 0), else
 *                   the wildcard address of remote_data's family with port 0.
 *   local_control   the same as local_data.
 */
#ifndef AA_UDP_CHANNEL_H
#define AA_UDP_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

#include "../_native/src/uri/aa_uri.h"

/* Driver defaults (reference 11): aeron.socket.so_rcvbuf, so_sndbuf (0 = OS default), multicast ttl (0 = OS default). */
#define AA_UDP_SOCKET_SO_RCVBUF_DEFAULT (128 * 1024)
#define AA_UDP_SOCKET_SO_SNDBUF_DEFAULT 0
#define AA_UDP_SOCKET_MULTICAST_TTL_DEFAULT 0

/* "UDP-" + two addresses as written in the URI (at most 255 characters each) + "#<tag>" or "-<n>" */
#define AA_UDP_CHANNEL_CANONICAL_FORM_MAX_LENGTH 560
/* "[" + 45 characters of IPv6 text + "]:" + 5 port digits */
#define AA_UDP_ADDRESS_FORMAT_MAX_LENGTH 64

typedef enum aa_udp_channel_control_mode_enum
{
    AA_UDP_CHANNEL_CONTROL_MODE_NONE,
    AA_UDP_CHANNEL_CONTROL_MODE_DYNAMIC,
    AA_UDP_CHANNEL_CONTROL_MODE_MANUAL,
    AA_UDP_CHANNEL_CONTROL_MODE_RESPONSE
}
aa_udp_channel_control_mode_t;

/* Name resolvers turn the host names of endpoint=, control= and interface= into addresses. One
 * per driver, chosen by name from the strategy registry (util/aa_registry.h, kind
 * AA_STRATEGY_KIND_NAME_RESOLVER; the entry's table is an aa_name_resolver_table_t) with the
 * driver option AERON_NAME_RESOLVER_SUPPLIER ("default") and its AERON_NAME_RESOLVER_INIT_ARGS.
 * resolve runs on the driver conductor only and may block. Built in: "default" (getaddrinfo,
 * IPv4 preferred unless the channel's other address is IPv6; no init args). Driver-name lookup,
 * re-resolution and periodic work (issue 15) add their callbacks here with their callers. */
typedef struct aa_name_resolver_stct aa_name_resolver_t;

/* Resolves host (a name, never an address literal; no brackets) into *address with port 0,
 * preferring family (AF_INET, AF_INET6, or AF_UNSPEC meaning IPv4 first). key is the URI parameter
 * for errors. Returns 0, or -1 with AA_ERROR_CODE_UNKNOWN_HOST and a message naming key and host. */
typedef int (*aa_name_resolver_resolve_func_t)(
    void *state, const char *key, const char *host, int family, struct sockaddr_storage *address);

struct aa_name_resolver_stct
{
    const char *name;
    aa_name_resolver_resolve_func_t resolve;
    void (*close)(aa_name_resolver_t *resolver);    /* releases the resolver and its state */
    void *state;
};

typedef struct aa_name_resolver_table_stct
{
    /* Builds a resolver from init_args (NULL or "" when none; fail with AA_SET_ERR on arguments it
     * does not take) and the registry entry's clientd. */
    int (*supplier)(aa_name_resolver_t **resolver, const char *init_args, void *clientd);
}
aa_name_resolver_table_t;

/* Registers the built-in resolvers (once). */
int aa_name_resolver_register_builtins(void);
/* Builds the resolver registered as name (an alias brings its options as init args). */
int aa_name_resolver_create(aa_name_resolver_t **resolver, const char *name, const char *init_args);
void aa_name_resolver_close(aa_name_resolver_t *resolver);

/* What a channel gets when its URI does not say (the driver context's values). */
typedef struct aa_udp_channel_defaults_stct
{
    int32_t socket_rcvbuf_length;
    int32_t socket_sndbuf_length;
    int32_t multicast_ttl;
    aa_name_resolver_t *resolver;   /* NULL: the built-in default resolver */
}
aa_udp_channel_defaults_t;

typedef struct aa_udp_channel_stct
{
    aa_uri_t uri;
    bool has_explicit_endpoint;
    bool has_explicit_control;
    bool has_explicit_interface;
    bool is_multicast;
    bool has_wildcard_port;
    bool has_tag;
    int64_t tag_id;
    aa_udp_channel_control_mode_t control_mode;
    struct sockaddr_storage remote_data;
    struct sockaddr_storage remote_control;
    struct sockaddr_storage local_data;
    struct sockaddr_storage local_control;
    unsigned int interface_index;       /* 0: let the kernel choose */
    int32_t socket_rcvbuf_length;       /* 0: OS default */
    int32_t socket_sndbuf_length;       /* 0: OS default */
    int32_t multicast_ttl;              /* 0: OS default */
    int32_t receiver_window_length;     /* rcv-wnd=, 0 when absent */
    char canonical_form[AA_UDP_CHANNEL_CANONICAL_FORM_MAX_LENGTH];
}
aa_udp_channel_t;

/* Parses and resolves an aeron:udp (or aeron-spy:aeron:udp) channel. BLOCKING (see above).
 * defaults may be NULL for the reference-11 values. Returns 0 and *channel (free with
 * aa_udp_channel_delete), or -1 with the error naming the parameter and what went wrong. */
int aa_udp_channel_parse(aa_udp_channel_t **channel, const char *uri, const aa_udp_channel_defaults_t *defaults);
void aa_udp_channel_delete(aa_udp_channel_t *channel);
/* Channels with equal canonical forms share one receive endpoint. */
bool aa_udp_channel_equals(const aa_udp_channel_t *a, const aa_udp_channel_t *b);

/* Resolves host (no brackets) and port into *address, preferring family (AF_INET, AF_INET6 or
 * AF_UNSPEC meaning IPv4 first), with getaddrinfo: the default resolver. BLOCKING for names. key
 * names the URI parameter in errors. */
int aa_udp_channel_resolve_host(
    const char *key, const char *host, int32_t port, int family, struct sockaddr_storage *address);
/* "a.b.c.d:port" or "[v6]:port"; returns the length written or -1. */
int aa_udp_address_format(char *buffer, size_t length, const struct sockaddr_storage *address);
socklen_t aa_udp_address_length(const struct sockaddr_storage *address);
uint16_t aa_udp_address_port(const struct sockaddr_storage *address);
bool aa_udp_address_is_multicast(const struct sockaddr_storage *address);
bool aa_udp_address_is_wildcard(const struct sockaddr_storage *address);
bool aa_udp_address_equals(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
/* 0.0.0.0:port or [::]:port */
void aa_udp_address_wildcard(struct sockaddr_storage *address, int family, uint16_t port);

#endif
