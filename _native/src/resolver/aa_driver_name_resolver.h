/*
 * The driver-name (gossip) resolver (reference 8.2), byte-compatible with Aeron's C and Java
 * drivers: drivers name themselves (AERON_DRIVER_RESOLVER_NAME, default the host name), announce
 * their name and resolver address to their neighbours in RES frames (protocols/aa_resolution_frame.h)
 * and share what they have learnt, so a channel can name a driver (endpoint=pod-1:40123) without DNS.
 *
 * Own UDP socket bound to AERON_DRIVER_RESOLVER_INTERFACE (host:port; a wildcard host announces
 * 0.0.0.0 / ::, and peers then take the datagram's source address). Bootstrap neighbours
 * (AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR, a comma list of host:port, at most
 * AA_DRIVER_NAME_RESOLVER_MAX_BOOTSTRAP): EVERY one is contacted (Aeron's C uses only the first that
 * resolves, reference 12.4); names among them are resolved with the default resolver (getaddrinfo)
 * on a thread of this resolver, never on the conductor, again every 10 s.
 *
 * Timers (reference 8.2), driven by the now_ms given to do_work (a test clock in tests):
 *   every 10 ms          poll the socket, evict cache entries and neighbours silent for 10 s;
 *   every 1 s            self announcement: one SELF entry, age 0, to every neighbour and every
 *                        resolved bootstrap neighbour that is not one yet;
 *   every 2 s            cache gossip: every cache entry, age now - last activity, in frames of at
 *                        most 1408 bytes (Java's MTU bound), to every neighbour.
 * On a frame: a frame that does not validate as a whole is counted in "Invalid packets" and none of
 * its entries is applied. Each entry other than our own (name and port) upserts the cache, keyed by
 * (name, type), with last activity now - age; an entry older than what the cache holds does not
 * replace it (so stale gossip about a restarted peer cannot undo its fresh announcement). An address
 * that is not a neighbour yet becomes one (gossip discovers peers transitively); an existing
 * neighbour's activity is refreshed by SELF entries only.
 *
 * Whom it believes (docs/security.md, "Name resolution (gossip)"), checked in this order, each refusal
 * counted in its own counter and nothing of a refused frame applied:
 *   - allowed networks (config allowed_networks, a CIDR list; empty: every source, as Aeron): a frame
 *     whose source lies outside is refused whole; an entry naming an address outside them is refused;
 *   - validation as a whole ("Invalid packets");
 *   - with a shared key (config hmac_key_file): a frame without the HMAC trailer of
 *     protocols/aa_resolution_frame.h, with a MAC that does not match, or signed more than
 *     AA_DRIVER_NAME_RESOLVER_HMAC_MAX_SKEW_MS away from now is refused; the entries of a signed frame
 *     date from its signature's time (min(now, signed) - age), so a replayed frame is no fresher than
 *     the original;
 *   - a SELF entry must come from the address it claims (a wildcard claim takes the source address);
 *   - caps: a new name beyond cache_max_entries, a new neighbour beyond neighbors_max is refused
 *     (entries already known are always updated, so an honest cluster keeps its members whatever a
 *     flood of new names does; a refused neighbour's entry is still cached);
 *   - what it forwards (the cache gossip) spends gossip_rate_limit bytes a second at most (a token
 *     bucket holding one gossip interval's worth); frames beyond it are not sent, and the next round
 *     starts with the next neighbour. Self announcements (one small frame per neighbour a second,
 *     bounded by the neighbour cap) are not limited.
 *
 * Threads: do_work (socket, timers, cache and neighbour changes, counters) on the driver conductor
 * only, never blocking; aa_driver_name_resolver_resolve from any thread (the resolver executor): it
 * copies the cache entry under the mutex that guards the cache, which do_work holds only while it
 * changes an entry.
 */
#ifndef AA_DRIVER_NAME_RESOLVER_H
#define AA_DRIVER_NAME_RESOLVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

#include "resolver/aa_name_resolver.h"
#include "util/aa_udp_address.h"

#define AA_DRIVER_NAME_RESOLVER_SELF_INTERVAL_MS 1000
#define AA_DRIVER_NAME_RESOLVER_GOSSIP_INTERVAL_MS 2000
#define AA_DRIVER_NAME_RESOLVER_TIMEOUT_MS 10000
#define AA_DRIVER_NAME_RESOLVER_WORK_INTERVAL_MS 10
#define AA_DRIVER_NAME_RESOLVER_BOOTSTRAP_RERESOLVE_MS 10000
#define AA_DRIVER_NAME_RESOLVER_MAX_BOOTSTRAP 20
/* frames sent stay within Aeron's default MTU, so Java peers take them whole */
#define AA_DRIVER_NAME_RESOLVER_FRAME_LENGTH 1408
/* how far a signed frame's timestamp may be from the receiver's clock (clocks kept by NTP) */
#define AA_DRIVER_NAME_RESOLVER_HMAC_MAX_SKEW_MS 30000

typedef struct aa_driver_name_resolver_stct aa_driver_name_resolver_t;

typedef struct aa_driver_name_resolver_config_stct
{
    const char *name;                 /* this driver's name; NULL or "": the host name */
    const char *interface;            /* host:port to bind (required; port 0: an ephemeral one) */
    const char *bootstrap_neighbors;  /* comma list of host:port; NULL or "": none */
    /* Counters the resolver keeps current (NULL: none): neighbours, cache entries, the driver's
     * "Invalid packets" system counter (bumped, atomically: other threads count there too). */
    volatile int64_t *neighbors_counter;
    volatile int64_t *cache_entries_counter;
    volatile int64_t *invalid_packets_counter;
    /* Who is believed and how much is forwarded (above; 0 or NULL: no limit, no key, every network). */
    const char *allowed_networks;     /* CIDR list (util/aa_cidr.h) */
    const char *hmac_key_file;        /* path of the shared key */
    int64_t cache_max_entries;
    int64_t neighbors_max;
    int64_t gossip_rate_limit;        /* bytes a second of cache gossip */
    /* Their system counters, bumped atomically (NULL: none): frames from outside the allowed
     * networks, entries refused for their address (SELF not from it, or outside the networks), new
     * names or neighbours refused by a cap, gossip frames held back by the rate limit, frames
     * unsigned or badly signed (with a key). */
    volatile int64_t *source_refused_counter;
    volatile int64_t *entry_refused_counter;
    volatile int64_t *cap_refused_counter;
    volatile int64_t *gossip_throttled_counter;
    volatile int64_t *unauthenticated_counter;
    /* Where failures of the background work go (sends, bootstrap lookups); NULL: dropped. Called on
     * the conductor or the bootstrap thread; must be thread-safe. */
    void (*log_error)(void *clientd, int32_t code, const char *message);
    void *log_error_clientd;
}
aa_driver_name_resolver_config_t;

/* Binds the socket (a name in interface is resolved here, blocking) and starts the bootstrap lookup
 * thread when a bootstrap neighbour is named by host name. Returns 0, or -1 with an error naming the
 * option at fault. */
int aa_driver_name_resolver_init(aa_driver_name_resolver_t **resolver, const aa_driver_name_resolver_config_t *config);
void aa_driver_name_resolver_close(aa_driver_name_resolver_t *resolver);

/* Points the neighbours and cache entries counters somewhere else (allocated once the bound address
 * is known, for their labels). Conductor thread. */
void aa_driver_name_resolver_set_counters(
    aa_driver_name_resolver_t *resolver, volatile int64_t *neighbors_counter, volatile int64_t *cache_entries_counter);

/* Conductor duty cycle: returns the work done (datagrams handled, frames sent). */
int aa_driver_name_resolver_do_work(aa_driver_name_resolver_t *resolver, int64_t now_ms);

/* Handles one received datagram (do_work calls it for each; tests call it directly; from NULL: a
 * source unknown, for tests only: no source checks). Returns the number of entries applied, or -1
 * for a frame refused whole (invalid, from outside the allowed networks, unsigned or badly signed:
 * counted). */
int aa_driver_name_resolver_on_datagram(
    aa_driver_name_resolver_t *resolver, const uint8_t *buffer, size_t length, const struct sockaddr_storage *from,
    int64_t now_ms);

/* name -> *address (port 0) from the cache, preferring family (AF_INET6: IPv6 entries first; else
 * IPv4 first); our own name -> our interface address (a
 * wildcard one too, as Aeron's Java: a subscription binds it, and a send to it stays on this host). Returns 1 when found,
 * 0 when the caller should fall back to the default resolver. Any thread. */
int aa_driver_name_resolver_find(
    aa_driver_name_resolver_t *resolver, const char *name, int family, struct sockaddr_storage *address);

/* What the resolver is: its name, bound address (the resolver-local-sockaddr counter), counts. */
const char *aa_driver_name_resolver_name(const aa_driver_name_resolver_t *resolver);
const struct sockaddr_storage *aa_driver_name_resolver_bound_address(const aa_driver_name_resolver_t *resolver);
size_t aa_driver_name_resolver_neighbor_count(const aa_driver_name_resolver_t *resolver);
size_t aa_driver_name_resolver_cache_count(const aa_driver_name_resolver_t *resolver);
/* "bound <addr>[ bootstrap <list>]" as the neighbours counter's label says it (after "Resolver neighbors: "). */
int aa_driver_name_resolver_describe(const aa_driver_name_resolver_t *resolver, char *buffer, size_t length);

/* Cache entry i (0 <= i < cache count) for tools and the resolutions table: name, address with port
 * (the peer's resolver port), last activity. Conductor thread. Returns 0, or -1 past the end. */
int aa_driver_name_resolver_cache_entry(
    const aa_driver_name_resolver_t *resolver, size_t index, const char **name, struct sockaddr_storage *address,
    int64_t *time_of_last_activity_ms);

/* The registry's "driver" entry (aa_driver_name_resolver_supplier.c): the resolver interface of
 * aa_udp_channel.h over this resolver, configured by the driver context's AERON_DRIVER_RESOLVER_*
 * options (no init args), with its counters; the default resolver answers names it does not know. */
int aa_driver_name_resolver_supplier(
    aa_name_resolver_t **resolver, const char *init_args, const aa_name_resolver_context_t *context, void *clientd);

#endif
