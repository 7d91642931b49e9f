/*
 * Name resolution (reference 8): the resolver interface every resolver implements, what a driver
 * hands a resolver it builds, the resolver registry's entries and the resolution flow of one URI
 * value. The resolvers (default, csv_table, the driver's gossip resolver, resolvers written in Python
 * through aa_name_resolver_proxy), the executor that runs lookups off the conductor and the
 * resolutions table all live in this folder; the media layer's UDP channels resolve through it.
 */
#ifndef AA_NAME_RESOLVER_H
#define AA_NAME_RESOLVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

#include "uri/aa_uri.h"

/* Name resolvers turn the host names of endpoint=, control= and interface= into addresses
 * (reference 8.1). One per driver, chosen by name from the strategy registry (util/aa_registry.h,
 * kind AA_STRATEGY_KIND_NAME_RESOLVER; the entry's table is an aa_name_resolver_table_t) with the
 * driver option AERON_NAME_RESOLVER_SUPPLIER ("default") and its AERON_NAME_RESOLVER_INIT_ARGS.
 *
 * Threads: lookup and resolve run on the driver's resolver executor thread(s)
 * (AERON_DRIVER_ASYNC_EXECUTOR_THREADS, resolver/aa_name_resolver_executor.h), never on the conductor,
 * sender or receiver, and may block; with more than one executor thread they run concurrently, so a
 * resolver whose state changes guards it itself. do_work runs on the conductor and never blocks; a
 * resolver whose state do_work shares with lookup/resolve synchronises it (a mutex held only to copy
 * an entry). Errors: -1 and AA_SET_ERR (AA_ERROR_CODE_UNKNOWN_HOST for a name that does not resolve).
 *
 * Flow (aa_name_resolver_resolve_host_and_port): lookup the value of key (NULL lookup: identity),
 * split host and port ([...] is IPv6), parse an address literal directly, else resolve the host.
 * Built in: "default" (getaddrinfo, IPv4 preferred unless the channel's other address is IPv6; no
 * init args) and "csv_table" (a static table, resolver/aa_csv_table_name_resolver.c). */
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

struct aa_counters_manager_stct;
struct aa_distinct_error_log_stct;
struct aa_clock_stct;
typedef struct aa_name_resolutions_stct aa_name_resolutions_t;

/* The driver options the driver's own resolver reads; each string outlives the resolver. */
typedef struct aa_driver_resolver_options_stct
{
    const char *name;                   /* AERON_DRIVER_RESOLVER_NAME */
    const char *interface;              /* AERON_DRIVER_RESOLVER_INTERFACE */
    const char *bootstrap_neighbors;    /* AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR */
    const char *allowed_networks;       /* AERON_DRIVER_RESOLVER_ALLOWED_NETWORKS */
    const char *hmac_key_file;          /* AERON_DRIVER_RESOLVER_HMAC_KEY_FILE */
    int64_t cache_max_entries;          /* AERON_DRIVER_RESOLVER_CACHE_MAX_ENTRIES */
    int64_t neighbors_max;              /* AERON_DRIVER_RESOLVER_NEIGHBORS_MAX */
    int64_t gossip_rate_limit;          /* AERON_DRIVER_RESOLVER_GOSSIP_RATE_LIMIT */
}
aa_driver_resolver_options_t;

/* What a resolver gets from its driver when it is built. Every pointer outlives the resolver. In a
 * tool or test without a driver, driver_options, counters, error_log and resolutions are NULL. */
typedef struct aa_name_resolver_context_stct
{
    /* The driver's resolver options (AERON_DRIVER_RESOLVER_*, driver/aa_driver_context.h). */
    const aa_driver_resolver_options_t *driver_options;
    /* To allocate counters (aa_counters.h): CONDUCTOR thread only (supplier, do_work, close). */
    struct aa_counters_manager_stct *counters;
    /* The driver's system counters (aa_system_counters.h ids), e.g. invalid packets; any thread. */
    volatile int64_t **system_counters;
    /* The driver's distinct error log (aa_error_log.h): thread-safe, timestamps in epoch ms. */
    struct aa_distinct_error_log_stct *error_log;
    /* The resolution results table (resolver/aa_name_resolutions.h): CONDUCTOR thread only. */
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
/* A zeroed resolver owning a zeroed state of state_size bytes (its `state`), for a supplier to fill
 * in; NULL with "out of memory creating <what>" set. */
aa_name_resolver_t *aa_name_resolver_new(size_t state_size, const char *what);
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

#endif
