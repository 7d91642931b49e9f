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

/* Name resolvers turn the host names of endpoint=, control= and interface= into addresses
 * (reference 8.1). One per driver, chosen by name from the strategy registry (util/aa_registry.h,
 * kind AA_STRATEGY_KIND_NAME_RESOLVER; the entry's table is an aa_name_resolver_table_t) with the
 * driver option AERON_NAME_RESOLVER_SUPPLIER ("default") and its AERON_NAME_RESOLVER_INIT_ARGS.
 *
 * Threads: lookup and resolve run on the driver's resolver executor thread(s)
 * (AERON_DRIVER_ASYNC_EXECUTOR_THREADS, media/aa_name_resolver_executor.h), never on the conductor,
 * sender or receiver, and may block; with more than one executor thread they run concurrently, so a
 * resolver whose state changes guards it itself. do_work runs on the conductor and never blocks; a
 * resolver whose state do_work shares with lookup/resolve synchronises it (a mutex held only to copy
 * an entry). Errors: -1 and AA_SET_ERR (AA_ERROR_CODE_UNKNOWN_HOST for a name that does not resolve).
 *
 * Flow (aa_name_resolver_resolve_host_and_port): lookup the value of key (NULL lookup: identity),
 * split host and port ([...] is IPv6), parse an address literal directly, else resolve the host.
 * Built in: "default" (getaddrinfo, IPv4 preferred unless the channel's other address is IPv6; no
 * init args) and "csv_table" (a static table, media/aa_csv_table_name_resolver.c). */
typedef struct aa_name_resolver_stct aa_name_resolver_t;

/* Maps name (the value of URI parameter key: "endpoint", "control", "interface", or the resolver's
 * own keys) to "host[:port]" (brackets for an IPv6 host) in out, NUL-terminated. is_re_lookup: asked
 * again because the channel fell silent (reference 8.3). Returns 0, or -1 with an error. */
typedef int (*aa_name_resolver_lookup_func_t)(
    void *state, const char *key, const char *name, bool is_re_lookup, char *out, size_t out_length);

/* Resolves host (a name, never an address literal; no brackets) into *address with port 0,
 * preferring family (AF_INET, AF_INET6, or AF_UNSPEC meaning IPv4 first). key is the URI parameter
 * for errors. Returns 0, or -1 with AA_ERROR_CODE_UNKNOWN_HOST and a message naming key and host. */
typedef int (*aa_name_resolver_resolve_func_t)(
    void *state, const char *key, const char *host, int family, bool is_re_resolution, struct sockaddr_storage *address);

/* Periodic work on the driver CONDUCTOR thread (every duty cycle); never blocks. now_ms is the
 * driver clock's epoch time. Returns the amount of work done (0 when idle), or -1 with an error (the
 * conductor logs it and goes on). */
typedef int (*aa_name_resolver_do_work_func_t)(void *state, int64_t now_ms);

struct aa_name_resolver_stct
{
    const char *name;
    aa_name_resolver_lookup_func_t lookup;      /* NULL: identity */
    aa_name_resolver_resolve_func_t resolve;    /* required */
    aa_name_resolver_do_work_func_t do_work;    /* NULL: none */
    void (*close)(aa_name_resolver_t *resolver);    /* releases the resolver and its state; NULL: nothing */
    void *state;
};

struct aa_driver_context_stct;
struct aa_counters_manager_stct;
struct aa_distinct_error_log_stct;
struct aa_clock_stct;
typedef struct aa_name_resolutions_stct aa_name_resolutions_t;

/* What a resolver gets from its driver when it is built. Every pointer outlives the resolver. In a
 * tool or test without a driver, driver_context, counters, error_log and resolutions are NULL. */
typedef struct aa_name_resolver_context_stct
{
    /* The driver's options (aa_driver_context.h): the resolver name, interface, bootstrap neighbours. */
    const struct aa_driver_context_stct *driver_context;
    /* To allocate counters (aa_counters.h): CONDUCTOR thread only (supplier, do_work, close). */
    struct aa_counters_manager_stct *counters;
    /* The driver's system counters (aa_system_counters.h ids), e.g. invalid packets; any thread. */
    volatile int64_t **system_counters;
    /* The driver's distinct error log (aa_error_log.h): thread-safe, timestamps in epoch ms. */
    struct aa_distinct_error_log_stct *error_log;
    /* The resolution results table (media/aa_name_resolutions.h): CONDUCTOR thread only. */
    aa_name_resolutions_t *resolutions;
    /* The "default" resolver to fall back to (getaddrinfo); lives as long as the process. */
    aa_name_resolver_t *default_resolver;
    /* The driver's clocks (aa_clock.h: nano_time ns, epoch_time ms); any thread. */
    const struct aa_clock_stct *clock;
}
aa_name_resolver_context_t;

typedef struct aa_name_resolver_table_stct
{
    /* Builds a resolver from init_args (NULL or "" when none; fail with AA_SET_ERR on arguments it
     * does not take), the driver's context (see above) and the registry entry's clientd. Runs on the
     * conductor while the driver starts. */
    int (*supplier)(
        aa_name_resolver_t **resolver, const char *init_args, const aa_name_resolver_context_t *context, void *clientd);
}
aa_name_resolver_table_t;

/* Registers the built-in resolvers (once). */
int aa_name_resolver_register_builtins(void);
/* Builds the resolver registered as name (an alias brings its options as init args). context may be
 * NULL (tools, tests): resolvers then get one with only the default resolver and the system clock. */
int aa_name_resolver_create(
    aa_name_resolver_t **resolver, const char *name, const char *init_args, const aa_name_resolver_context_t *context);
void aa_name_resolver_close(aa_name_resolver_t *resolver);
/* The built-in default resolver (static, never closed). */
aa_name_resolver_t *aa_name_resolver_default(void);
/* True when host is an IPv4 or IPv6 literal (no brackets): it never goes to a resolver. */
bool aa_name_resolver_is_literal(const char *host);

/* The resolution flow of reference 8.1 for one URI value: value ("host", "host:port", "[v6]:port")
 * looked up (key names the URI parameter) and resolved with resolver (NULL: the default), port 0 when
 * none, into *address. allow_prefix: interface= may end in /prefix (the prefix is ignored here).
 * BLOCKING for names: executor threads, tools and tests only. Returns 0, or -1 with an error. */
int aa_name_resolver_resolve_host_and_port(
    aa_name_resolver_t *resolver, const char *key, const char *value, int family, bool is_re_resolution,
    struct sockaddr_storage *address);
/* The same for a value already read from a URI, also handing back its parts (host, port, prefix):
 * prefix_allowed for interface=, where the port is optional too. */
int aa_name_resolver_resolve_value(
    aa_name_resolver_t *resolver, const char *key, const char *value, bool prefix_allowed, int family,
    bool is_re_resolution, struct sockaddr_storage *address, aa_uri_address_t *parts);

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
    bool is_remote_unresolved;          /* endpoint= waits for its name: remote_data is a placeholder */
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
void aa_udp_address_set_port(struct sockaddr_storage *address, uint16_t port);
socklen_t aa_udp_address_length(const struct sockaddr_storage *address);
uint16_t aa_udp_address_port(const struct sockaddr_storage *address);
bool aa_udp_address_is_multicast(const struct sockaddr_storage *address);
bool aa_udp_address_is_wildcard(const struct sockaddr_storage *address);
bool aa_udp_address_equals(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
/* 0.0.0.0:port or [::]:port */
void aa_udp_address_wildcard(struct sockaddr_storage *address, int family, uint16_t port);

/* Channel endpoint status values (reference 3: snd-channel / rcv-channel). */
#define AA_CHANNEL_ENDPOINT_STATUS_INITIALIZING 0
#define AA_CHANNEL_ENDPOINT_STATUS_ACTIVE 1
#define AA_CHANNEL_ENDPOINT_STATUS_CLOSING 2
#define AA_CHANNEL_ENDPOINT_STATUS_ERRORED (-1)

#endif
