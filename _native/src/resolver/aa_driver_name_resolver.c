#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "resolver/aa_driver_name_resolver.h"
#include "resolver/aa_driver_name_resolver_policy.h"
#include "resolver/aa_name_resolver.h"
#include "util/aa_udp_address.h"
#include "protocols/aa_resolution_frame.h"
#include "uri/aa_uri.h"
#include "util/aa_array.h"
#include "util/aa_cidr.h"
#include "util/aa_error.h"

typedef struct aa_dnr_cache_entry_stct
{
    char name[AA_RESOLUTION_NAME_MAX_LENGTH + 1];
    int32_t name_length;
    int8_t res_type;
    uint8_t address[16];
    uint16_t port;
    int64_t time_of_last_activity_ms;
}
aa_dnr_cache_entry_t;

typedef struct aa_dnr_neighbor_stct
{
    struct sockaddr_storage address;
    int64_t time_of_last_activity_ms;
}
aa_dnr_neighbor_t;

typedef struct aa_dnr_bootstrap_stct
{
    char text[AA_URI_MAX_VALUE_LENGTH];
    char host[AA_URI_MAX_VALUE_LENGTH];
    uint16_t port;
    bool is_literal;
    bool is_resolved;              /* guarded by the mutex for names (the lookup thread writes) */
    struct sockaddr_storage address;
}
aa_dnr_bootstrap_t;

struct aa_driver_name_resolver_stct
{
    char name[AA_RESOLUTION_NAME_MAX_LENGTH + 1];
    int32_t name_length;
    int fd;
    struct sockaddr_storage bound_address;
    aa_driver_name_resolver_config_t config;
    volatile int64_t dummy_counter;

    pthread_mutex_t mutex;         /* guards cache (changes on the conductor, copies on any thread) and bootstraps */
    aa_dnr_cache_entry_t *cache;
    size_t cache_count;
    size_t cache_capacity;

    aa_dnr_neighbor_t *neighbors;  /* conductor only */
    size_t neighbor_count;
    size_t neighbor_capacity;

    aa_dnr_bootstrap_t bootstraps[AA_DRIVER_NAME_RESOLVER_MAX_BOOTSTRAP];
    size_t bootstrap_count;
    bool has_named_bootstrap;
    pthread_t lookup_thread;
    pthread_cond_t lookup_cond;
    bool lookup_thread_started;
    bool closing;

    int64_t next_work_ms;
    int64_t next_self_ms;
    int64_t next_gossip_ms;

    aa_cidr_list_t allowed_networks;   /* empty: every source */
    uint8_t hmac_key[AA_DNR_HMAC_KEY_MAX_LENGTH];
    size_t hmac_key_length;            /* 0: frames neither signed nor checked */
    size_t frame_capacity;             /* what entries may fill of send_buffer (the trailer's room kept) */
    aa_dnr_rate_limit_t gossip_limit;
    size_t gossip_start;               /* the neighbour the next gossip round starts with */
    uint8_t send_buffer[AA_DRIVER_NAME_RESOLVER_FRAME_LENGTH];
    uint8_t receive_buffer[65536];
};

static void aa_dnr_log(aa_driver_name_resolver_t *r, int32_t code, const char *message)
{
    if (NULL != r->config.log_error)
    {
        r->config.log_error(r->config.log_error_clientd, code, message);
    }
}

/* ---- addresses ---- */

static int8_t aa_dnr_type_of(const struct sockaddr_storage *address)
{
    return AF_INET6 == address->ss_family ? AA_RESOLUTION_TYPE_NAME_TO_IP6 : AA_RESOLUTION_TYPE_NAME_TO_IP4;
}

static void aa_dnr_address_bytes(const struct sockaddr_storage *address, uint8_t *bytes)
{
    memset(bytes, 0, 16);
    if (AF_INET6 == address->ss_family)
    {
        memcpy(bytes, &((const struct sockaddr_in6 *)address)->sin6_addr, 16);
    }
    else
    {
        memcpy(bytes, &((const struct sockaddr_in *)address)->sin_addr, 4);
    }
}

static void aa_dnr_address_from(int8_t res_type, const uint8_t *bytes, uint16_t port, struct sockaddr_storage *address)
{
    memset(address, 0, sizeof(*address));
    if (AA_RESOLUTION_TYPE_NAME_TO_IP6 == res_type)
    {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)address;
        in6->sin6_family = AF_INET6;
        memcpy(&in6->sin6_addr, bytes, 16);
        in6->sin6_port = htons(port);
    }
    else
    {
        struct sockaddr_in *in4 = (struct sockaddr_in *)address;
        in4->sin_family = AF_INET;
        memcpy(&in4->sin_addr, bytes, 4);
        in4->sin_port = htons(port);
    }
}

static bool aa_dnr_bytes_are_wildcard(int8_t res_type, const uint8_t *bytes)
{
    size_t n = AA_RESOLUTION_TYPE_NAME_TO_IP6 == res_type ? 16 : 4;
    for (size_t i = 0; i < n; i++)
    {
        if (0 != bytes[i])
        {
            return false;
        }
    }
    return true;
}

static bool aa_dnr_is_literal(const char *host)
{
    struct in6_addr any;
    return 1 == inet_pton(AF_INET, host, &any) || 1 == inet_pton(AF_INET6, host, &any);
}

/* ---- neighbours (conductor only) ---- */

static aa_dnr_neighbor_t *aa_dnr_neighbor_find(aa_driver_name_resolver_t *r, const struct sockaddr_storage *address)
{
    for (size_t i = 0; i < r->neighbor_count; i++)
    {
        if (aa_udp_address_equals(&r->neighbors[i].address, address))
        {
            return &r->neighbors[i];
        }
    }
    return NULL;
}

static void aa_dnr_count(volatile int64_t *counter)
{
    __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static int aa_dnr_neighbor_add(aa_driver_name_resolver_t *r, const struct sockaddr_storage *address, int64_t activity_ms)
{
    if (r->config.neighbors_max > 0 && (int64_t)r->neighbor_count >= r->config.neighbors_max)
    {
        aa_dnr_count(r->config.cap_refused_counter);
        return 0;   /* the cap: known neighbours keep their place */
    }
    if (aa_array_ensure_capacity((void **)&r->neighbors, &r->neighbor_capacity, r->neighbor_count, sizeof(aa_dnr_neighbor_t)) < 0)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory adding a resolver neighbour");
        return -1;
    }
    r->neighbors[r->neighbor_count].address = *address;
    r->neighbors[r->neighbor_count].time_of_last_activity_ms = activity_ms;
    r->neighbor_count++;
    return 0;
}

/* ---- cache (changed on the conductor under the mutex) ---- */

static aa_dnr_cache_entry_t *aa_dnr_cache_find(
    aa_driver_name_resolver_t *r, const char *name, size_t name_length, int8_t res_type)
{
    for (size_t i = 0; i < r->cache_count; i++)
    {
        aa_dnr_cache_entry_t *e = &r->cache[i];
        if (e->res_type == res_type && (size_t)e->name_length == name_length && 0 == memcmp(e->name, name, name_length))
        {
            return e;
        }
    }
    return NULL;
}

static int aa_dnr_cache_upsert(
    aa_driver_name_resolver_t *r, const aa_resolution_entry_t *entry, const uint8_t *address, int64_t activity_ms)
{
    pthread_mutex_lock(&r->mutex);
    aa_dnr_cache_entry_t *e = aa_dnr_cache_find(r, (const char *)entry->name, (size_t)entry->name_length, entry->res_type);
    if (NULL == e)
    {
        if (r->config.cache_max_entries > 0 && (int64_t)r->cache_count >= r->config.cache_max_entries)
        {
            pthread_mutex_unlock(&r->mutex);
            aa_dnr_count(r->config.cap_refused_counter);
            return 0;   /* the cap: names already known keep being updated, new ones wait for room */
        }
        if (r->cache_count == r->cache_capacity)
        {
            size_t capacity = 0 == r->cache_capacity ? 8 : r->cache_capacity * 2;
            aa_dnr_cache_entry_t *grown = realloc(r->cache, capacity * sizeof(*grown));
            if (NULL == grown)
            {
                pthread_mutex_unlock(&r->mutex);
                AA_SET_ERR(ENOMEM, "%s", "out of memory adding a resolver cache entry");
                return -1;
            }
            r->cache = grown;
            r->cache_capacity = capacity;
        }
        e = &r->cache[r->cache_count++];
        memcpy(e->name, entry->name, (size_t)entry->name_length);
        e->name[entry->name_length] = '\0';
        e->name_length = entry->name_length;
        e->res_type = entry->res_type;
    }
    else if (activity_ms < e->time_of_last_activity_ms)
    {
        /* older news than the cache holds (stale gossip about a peer that has moved since) */
        pthread_mutex_unlock(&r->mutex);
        return 0;
    }
    memcpy(e->address, address, 16);
    e->port = entry->udp_port;
    e->time_of_last_activity_ms = activity_ms;
    pthread_mutex_unlock(&r->mutex);
    return 1;
}

static int aa_dnr_evict(aa_driver_name_resolver_t *r, int64_t now_ms)
{
    int evicted = 0;
    pthread_mutex_lock(&r->mutex);
    for (size_t i = r->cache_count; i-- > 0;)
    {
        if (r->cache[i].time_of_last_activity_ms + AA_DRIVER_NAME_RESOLVER_TIMEOUT_MS <= now_ms)
        {
            r->cache[i] = r->cache[--r->cache_count];
            evicted++;
        }
    }
    pthread_mutex_unlock(&r->mutex);
    for (size_t i = r->neighbor_count; i-- > 0;)
    {
        if (r->neighbors[i].time_of_last_activity_ms + AA_DRIVER_NAME_RESOLVER_TIMEOUT_MS <= now_ms)
        {
            r->neighbors[i] = r->neighbors[--r->neighbor_count];
            evicted++;
        }
    }
    return evicted;
}

/* ---- receiving ---- */

/* The source's address as an entry would carry it: its type and bytes (an IPv4 address an IPv6
 * socket saw as ::ffff:a.b.c.d is IPv4). */
static int8_t aa_dnr_source_bytes(const struct sockaddr_storage *from, uint8_t *bytes)
{
    memset(bytes, 0, 16);
    if (AF_INET6 == from->ss_family)
    {
        const struct in6_addr *in6 = &((const struct sockaddr_in6 *)from)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(in6))
        {
            memcpy(bytes, &in6->s6_addr[12], 4);
            return AA_RESOLUTION_TYPE_NAME_TO_IP4;
        }
        memcpy(bytes, in6->s6_addr, 16);
        return AA_RESOLUTION_TYPE_NAME_TO_IP6;
    }
    memcpy(bytes, &((const struct sockaddr_in *)from)->sin_addr, 4);
    return AA_RESOLUTION_TYPE_NAME_TO_IP4;
}

/* Whether the frame may be read at all (docs/security.md, "Name resolution (gossip)"): the source's
 * network, the frame as a whole, its signature. Sets *base_ms, the time its entries' ages count from. */
static bool aa_dnr_frame_accepted(
    aa_driver_name_resolver_t *r, const uint8_t *buffer, size_t length, const struct sockaddr_storage *from,
    int64_t now_ms, int64_t *base_ms)
{
    *base_ms = now_ms;
    if (NULL != from && r->allowed_networks.count > 0 && !aa_cidr_list_contains_address(&r->allowed_networks, from))
    {
        aa_dnr_count(r->config.source_refused_counter);
        return false;
    }
    if (aa_resolution_frame_validate(buffer, length) < 0)
    {
        aa_dnr_count(r->config.invalid_packets_counter);
        return false;
    }
    if (r->hmac_key_length > 0)
    {
        int64_t signed_ms = 0;
        if (1 != aa_resolution_frame_verify(buffer, length, r->hmac_key, r->hmac_key_length, &signed_ms) ||
            signed_ms < now_ms - AA_DRIVER_NAME_RESOLVER_HMAC_MAX_SKEW_MS ||
            signed_ms > now_ms + AA_DRIVER_NAME_RESOLVER_HMAC_MAX_SKEW_MS)
        {
            aa_dnr_count(r->config.unauthenticated_counter);
            return false;
        }
        *base_ms = signed_ms < now_ms ? signed_ms : now_ms;
    }
    return true;
}

int aa_driver_name_resolver_on_datagram(
    aa_driver_name_resolver_t *r, const uint8_t *buffer, size_t length, const struct sockaddr_storage *from,
    int64_t now_ms)
{
    int64_t base_ms;
    if (!aa_dnr_frame_accepted(r, buffer, length, from, now_ms, &base_ms))
    {
        return -1;
    }
    uint8_t source[16];
    int8_t source_type = NULL != from ? aa_dnr_source_bytes(from, source) : 0;
    int applied = 0;
    size_t offset = AA_RESOLUTION_FRAME_HEADER_LENGTH;
    aa_resolution_entry_t entry;
    while (aa_resolution_frame_next(buffer, length, &offset, &entry) > 0)
    {
        bool is_self = 0 != (entry.res_flags & AA_RESOLUTION_FLAG_SELF);
        if (entry.name_length == r->name_length && 0 == memcmp(entry.name, r->name, (size_t)r->name_length) &&
            entry.udp_port == aa_udp_address_port(&r->bound_address))
        {
            continue;   /* ourselves, told back to us */
        }
        uint8_t address[16];
        memcpy(address, entry.address, sizeof(address));
        size_t address_length = AA_RESOLUTION_TYPE_NAME_TO_IP6 == entry.res_type ? 16 : 4;
        if (is_self && aa_dnr_bytes_are_wildcard(entry.res_type, address))
        {
            /* a peer bound to a wildcard: it is where its datagram came from */
            if (NULL == from || source_type != entry.res_type)
            {
                continue;
            }
            memcpy(address, source, 16);
        }
        else if (aa_dnr_bytes_are_wildcard(entry.res_type, address))
        {
            continue;   /* gossip about a wildcard address names no one */
        }
        else if (is_self && NULL != from &&
            (source_type != entry.res_type || 0 != memcmp(address, source, address_length)))
        {
            aa_dnr_count(r->config.entry_refused_counter);
            continue;   /* a SELF entry speaks for its sender only: it must come from the address it claims */
        }
        if (r->allowed_networks.count > 0 && !aa_cidr_list_contains(&r->allowed_networks,
            AA_RESOLUTION_TYPE_NAME_TO_IP6 == entry.res_type ? AF_INET6 : AF_INET, address))
        {
            aa_dnr_count(r->config.entry_refused_counter);
            continue;   /* no name may point outside the allowed networks */
        }
        int64_t activity_ms = base_ms - entry.age_in_ms;
        int upserted = aa_dnr_cache_upsert(r, &entry, address, activity_ms);
        if (upserted < 0)
        {
            return -1;
        }
        if (0 == upserted)
        {
            continue;   /* stale, or a new name beyond the cap: neither the cache nor the neighbours learn from it */
        }
        struct sockaddr_storage neighbor;
        aa_dnr_address_from(entry.res_type, address, entry.udp_port, &neighbor);
        aa_dnr_neighbor_t *known = aa_dnr_neighbor_find(r, &neighbor);
        if (NULL == known)
        {
            if (aa_dnr_neighbor_add(r, &neighbor, is_self ? now_ms : activity_ms) < 0)
            {
                return -1;
            }
        }
        else if (is_self)
        {
            known->time_of_last_activity_ms = now_ms;
        }
        applied++;
    }
    return applied;
}

/* ---- sending ---- */

static void aa_dnr_send(aa_driver_name_resolver_t *r, const uint8_t *frame, size_t length, const struct sockaddr_storage *to)
{
    if (to->ss_family != r->bound_address.ss_family)
    {
        return;   /* an IPv4 socket cannot reach an IPv6 neighbour and the reverse */
    }
    ssize_t sent = sendto(r->fd, frame, length, 0, (const struct sockaddr *)to, aa_udp_address_length(to));
    if (sent < 0 && EAGAIN != errno && EWOULDBLOCK != errno && ECONNREFUSED != errno && EHOSTUNREACH != errno &&
        ENETUNREACH != errno)
    {
        char text[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH], message[256];
        aa_udp_address_format(text, sizeof(text), to);
        snprintf(message, sizeof(message), "driver name resolver: sendto %s failed: %s", text, strerror(errno));
        aa_dnr_log(r, AA_ERROR_CODE_GENERIC_ERROR, message);
    }
}

/* Signs the frame of length bytes in send_buffer when there is a key: the datagram's length. */
static size_t aa_dnr_seal(aa_driver_name_resolver_t *r, int32_t length, int64_t now_ms)
{
    if (0 == r->hmac_key_length)
    {
        return (size_t)length;
    }
    int32_t sealed = aa_resolution_frame_sign(
        r->send_buffer, sizeof(r->send_buffer), length, r->hmac_key, r->hmac_key_length, now_ms);
    return sealed < 0 ? 0 : (size_t)sealed;   /* cannot happen: frame_capacity keeps the trailer's room */
}

static int aa_dnr_send_to_bootstraps(aa_driver_name_resolver_t *r, const uint8_t *frame, size_t length)
{
    int sent = 0;
    pthread_mutex_lock(&r->mutex);
    for (size_t i = 0; i < r->bootstrap_count; i++)
    {
        aa_dnr_bootstrap_t *b = &r->bootstraps[i];
        if (b->is_resolved && NULL == aa_dnr_neighbor_find(r, &b->address) &&
            !aa_udp_address_equals(&b->address, &r->bound_address))
        {
            aa_dnr_send(r, frame, length, &b->address);
            sent++;
        }
    }
    pthread_mutex_unlock(&r->mutex);
    return sent;
}

/* To every neighbour from the round's first one on; with limited, each send spends its bytes from the
 * gossip budget, and a send the budget cannot pay is not made (counted). */
static int aa_dnr_send_to_neighbors(
    aa_driver_name_resolver_t *r, const uint8_t *frame, size_t length, bool limited, int64_t now_ms)
{
    int sent = 0;
    for (size_t k = 0; k < r->neighbor_count; k++)
    {
        size_t i = (r->gossip_start + k) % r->neighbor_count;
        if (limited && !aa_dnr_rate_limit_take(&r->gossip_limit, (int64_t)length, now_ms))
        {
            aa_dnr_count(r->config.gossip_throttled_counter);
            continue;
        }
        aa_dnr_send(r, frame, length, &r->neighbors[i].address);
        sent++;
    }
    return sent;
}

static int aa_dnr_announce_self(aa_driver_name_resolver_t *r, int64_t now_ms)
{
    aa_resolution_entry_t self;
    memset(&self, 0, sizeof(self));
    self.res_type = aa_dnr_type_of(&r->bound_address);
    self.res_flags = AA_RESOLUTION_FLAG_SELF;
    self.udp_port = aa_udp_address_port(&r->bound_address);
    self.age_in_ms = 0;
    aa_dnr_address_bytes(&r->bound_address, self.address);
    self.name = (const uint8_t *)r->name;
    self.name_length = r->name_length;
    aa_resolution_frame_begin(r->send_buffer, r->frame_capacity);
    int32_t length = aa_resolution_frame_append(r->send_buffer, r->frame_capacity, &self);
    if (length < 0)
    {
        return 0;
    }
    size_t datagram = aa_dnr_seal(r, length, now_ms);
    return aa_dnr_send_to_neighbors(r, r->send_buffer, datagram, false, now_ms) +
        aa_dnr_send_to_bootstraps(r, r->send_buffer, datagram);
}

static int aa_dnr_gossip(aa_driver_name_resolver_t *r, int64_t now_ms)
{
    if (0 == r->neighbor_count || 0 == r->cache_count)
    {
        return 0;
    }
    int sent = 0;
    int32_t length = aa_resolution_frame_begin(r->send_buffer, r->frame_capacity);
    /* the conductor is the only writer of the cache: reading it here needs no lock */
    for (size_t i = 0; i < r->cache_count; i++)
    {
        const aa_dnr_cache_entry_t *e = &r->cache[i];
        aa_resolution_entry_t entry;
        memset(&entry, 0, sizeof(entry));
        entry.res_type = e->res_type;
        entry.udp_port = e->port;
        int64_t age = now_ms - e->time_of_last_activity_ms;
        entry.age_in_ms = (int32_t)(age < 0 ? 0 : age > INT32_MAX ? INT32_MAX : age);
        memcpy(entry.address, e->address, 16);
        entry.name = (const uint8_t *)e->name;
        entry.name_length = e->name_length;
        int32_t entry_length = aa_resolution_entry_length(e->res_type, e->name_length);
        if (length + entry_length > (int32_t)r->frame_capacity && length > AA_RESOLUTION_FRAME_HEADER_LENGTH)
        {
            sent += aa_dnr_send_to_neighbors(r, r->send_buffer, aa_dnr_seal(r, length, now_ms), true, now_ms);
            length = aa_resolution_frame_begin(r->send_buffer, r->frame_capacity);
        }
        int32_t appended = aa_resolution_frame_append(r->send_buffer, r->frame_capacity, &entry);
        if (appended > 0)
        {
            length = appended;
        }
    }
    if (length > AA_RESOLUTION_FRAME_HEADER_LENGTH)
    {
        sent += aa_dnr_send_to_neighbors(r, r->send_buffer, aa_dnr_seal(r, length, now_ms), true, now_ms);
    }
    r->gossip_start = r->neighbor_count > 0 ? (r->gossip_start + 1) % r->neighbor_count : 0;
    return sent;
}

static int aa_dnr_poll(aa_driver_name_resolver_t *r, int64_t now_ms)
{
    int work = 0;
    for (int i = 0; i < 16; i++)
    {
        struct sockaddr_storage from;
        socklen_t from_length = sizeof(from);
        memset(&from, 0, sizeof(from));
        ssize_t received = recvfrom(r->fd, r->receive_buffer, sizeof(r->receive_buffer), 0,
            (struct sockaddr *)&from, &from_length);
        if (received < 0)
        {
            break;   /* EAGAIN, or an ICMP error of an earlier send: nothing to read */
        }
        aa_driver_name_resolver_on_datagram(r, r->receive_buffer, (size_t)received, &from, now_ms);
        work++;
    }
    return work;
}

int aa_driver_name_resolver_do_work(aa_driver_name_resolver_t *r, int64_t now_ms)
{
    int work = aa_dnr_poll(r, now_ms);
    if (now_ms < r->next_work_ms)
    {
        *r->config.neighbors_counter = (int64_t)r->neighbor_count;
        *r->config.cache_entries_counter = (int64_t)r->cache_count;
        return work;
    }
    r->next_work_ms = now_ms + AA_DRIVER_NAME_RESOLVER_WORK_INTERVAL_MS;
    work += aa_dnr_evict(r, now_ms);
    if (now_ms >= r->next_self_ms)
    {
        r->next_self_ms = now_ms + AA_DRIVER_NAME_RESOLVER_SELF_INTERVAL_MS;
        work += aa_dnr_announce_self(r, now_ms);
    }
    if (now_ms >= r->next_gossip_ms)
    {
        r->next_gossip_ms = now_ms + AA_DRIVER_NAME_RESOLVER_GOSSIP_INTERVAL_MS;
        work += aa_dnr_gossip(r, now_ms);
    }
    *r->config.neighbors_counter = (int64_t)r->neighbor_count;
    *r->config.cache_entries_counter = (int64_t)r->cache_count;
    return work;
}

/* ---- lookups ---- */

int aa_driver_name_resolver_find(
    aa_driver_name_resolver_t *r, const char *name, int family, struct sockaddr_storage *address)
{
    size_t name_length = strlen(name);
    int8_t first = AF_INET6 == family ? AA_RESOLUTION_TYPE_NAME_TO_IP6 : AA_RESOLUTION_TYPE_NAME_TO_IP4;
    int8_t second = AF_INET6 == family ? AA_RESOLUTION_TYPE_NAME_TO_IP4 : AA_RESOLUTION_TYPE_NAME_TO_IP6;
    int found = 0;
    uint8_t bytes[16];
    pthread_mutex_lock(&r->mutex);
    const aa_dnr_cache_entry_t *e = aa_dnr_cache_find(r, name, name_length, first);
    if (NULL == e && AF_UNSPEC == family)
    {
        e = aa_dnr_cache_find(r, name, name_length, second);
    }
    if (NULL != e)
    {
        aa_dnr_address_from(e->res_type, e->address, 0, address);
        found = 1;
    }
    pthread_mutex_unlock(&r->mutex);
    if (!found && name_length == (size_t)r->name_length && 0 == memcmp(name, r->name, name_length) &&
        (AF_UNSPEC == family || family == r->bound_address.ss_family))
    {
        aa_dnr_address_bytes(&r->bound_address, bytes);
        aa_dnr_address_from(aa_dnr_type_of(&r->bound_address), bytes, 0, address);
        found = 1;
    }
    return found;
}

void aa_driver_name_resolver_set_counters(
    aa_driver_name_resolver_t *r, volatile int64_t *neighbors_counter, volatile int64_t *cache_entries_counter)
{
    r->config.neighbors_counter = NULL != neighbors_counter ? neighbors_counter : &r->dummy_counter;
    r->config.cache_entries_counter = NULL != cache_entries_counter ? cache_entries_counter : &r->dummy_counter;
}

const char *aa_driver_name_resolver_name(const aa_driver_name_resolver_t *r)
{
    return r->name;
}

const struct sockaddr_storage *aa_driver_name_resolver_bound_address(const aa_driver_name_resolver_t *r)
{
    return &r->bound_address;
}

size_t aa_driver_name_resolver_neighbor_count(const aa_driver_name_resolver_t *r)
{
    return r->neighbor_count;
}

size_t aa_driver_name_resolver_cache_count(const aa_driver_name_resolver_t *r)
{
    return r->cache_count;
}

int aa_driver_name_resolver_cache_entry(
    const aa_driver_name_resolver_t *r, size_t index, const char **name, struct sockaddr_storage *address,
    int64_t *time_of_last_activity_ms)
{
    if (index >= r->cache_count)
    {
        return -1;
    }
    const aa_dnr_cache_entry_t *e = &r->cache[index];
    *name = e->name;
    aa_dnr_address_from(e->res_type, e->address, e->port, address);
    *time_of_last_activity_ms = e->time_of_last_activity_ms;
    return 0;
}

int aa_driver_name_resolver_describe(const aa_driver_name_resolver_t *r, char *buffer, size_t length)
{
    char bound[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    aa_udp_address_format(bound, sizeof(bound), &r->bound_address);
    int n = snprintf(buffer, length, "bound %s", bound);
    for (size_t i = 0; i < r->bootstrap_count && n >= 0 && (size_t)n < length; i++)
    {
        n += snprintf(buffer + n, length - (size_t)n, "%s%s", 0 == i ? " bootstrap " : ",", r->bootstraps[i].text);
    }
    return n;
}

/* ---- bootstrap neighbours named by host name: looked up off the conductor ---- */

static void *aa_dnr_lookup_thread(void *arg)
{
    aa_driver_name_resolver_t *r = arg;
    pthread_mutex_lock(&r->mutex);
    while (!r->closing)
    {
        for (size_t i = 0; i < r->bootstrap_count && !r->closing; i++)
        {
            aa_dnr_bootstrap_t *b = &r->bootstraps[i];
            if (b->is_literal)
            {
                continue;
            }
            char host[AA_URI_MAX_VALUE_LENGTH];
            memcpy(host, b->host, sizeof(host));
            uint16_t port = b->port;
            pthread_mutex_unlock(&r->mutex);
            struct sockaddr_storage address;
            int rc = aa_udp_channel_resolve_host(
                "AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR", host, port, r->bound_address.ss_family, &address);
            if (rc < 0)
            {
                aa_dnr_log(r, AA_ERROR_CODE_UNKNOWN_HOST, aa_errmsg());
            }
            pthread_mutex_lock(&r->mutex);
            if (rc == 0)
            {
                b->address = address;
                b->is_resolved = true;
            }
        }
        /* again in 10 s (reference 8.2): a bootstrap pod that restarts moves */
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += AA_DRIVER_NAME_RESOLVER_BOOTSTRAP_RERESOLVE_MS / 1000;
        while (!r->closing && 0 == pthread_cond_timedwait(&r->lookup_cond, &r->mutex, &deadline))
        {
        }
    }
    pthread_mutex_unlock(&r->mutex);
    return NULL;
}

static int aa_dnr_parse_bootstraps(aa_driver_name_resolver_t *r, const char *list)
{
    if (NULL == list)
    {
        return 0;
    }
    const char *p = list;
    while ('\0' != *p)
    {
        const char *end = strchr(p, ',');
        size_t n = NULL == end ? strlen(p) : (size_t)(end - p);
        while (n > 0 && (' ' == *p))
        {
            p++;
            n--;
        }
        while (n > 0 && ' ' == p[n - 1])
        {
            n--;
        }
        if (n > 0)
        {
            if (r->bootstrap_count == AA_DRIVER_NAME_RESOLVER_MAX_BOOTSTRAP || n >= AA_URI_MAX_VALUE_LENGTH)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                    "AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR: at most %d neighbours of host:port, got '%s'",
                    AA_DRIVER_NAME_RESOLVER_MAX_BOOTSTRAP, list);
                return -1;
            }
            aa_dnr_bootstrap_t *b = &r->bootstraps[r->bootstrap_count];
            memcpy(b->text, p, n);
            b->text[n] = '\0';
            aa_uri_address_t parts;
            if (aa_uri_parse_address("AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR", b->text, true, false, &parts) < 0)
            {
                return -1;
            }
            snprintf(b->host, sizeof(b->host), "%s", parts.host);
            b->port = (uint16_t)parts.port;
            b->is_literal = aa_dnr_is_literal(b->host);
            if (b->is_literal)
            {
                if (aa_udp_channel_resolve_host("AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR", b->host, b->port, AF_UNSPEC,
                    &b->address) < 0)
                {
                    return -1;
                }
                b->is_resolved = true;
            }
            else
            {
                r->has_named_bootstrap = true;
            }
            r->bootstrap_count++;
        }
        p = NULL == end ? p + n : end + 1;
        if (NULL == end)
        {
            break;
        }
    }
    return 0;
}

/* ---- lifecycle ---- */

static int aa_dnr_bind(aa_driver_name_resolver_t *r, const char *interface)
{
    aa_uri_address_t parts;
    if (NULL == interface || '\0' == *interface ||
        aa_uri_parse_address("AERON_DRIVER_RESOLVER_INTERFACE", interface, false, false, &parts) < 0)
    {
        if (NULL == interface || '\0' == *interface)
        {
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
                "AERON_DRIVER_RESOLVER_INTERFACE: the driver name resolver needs host:port to bind, e.g. 0.0.0.0:8050");
        }
        return -1;
    }
    struct sockaddr_storage address;
    if (aa_udp_channel_resolve_host("AERON_DRIVER_RESOLVER_INTERFACE", parts.host, parts.has_port ? parts.port : 0,
        AF_UNSPEC, &address) < 0)
    {
        return -1;
    }
    r->fd = socket(address.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (r->fd < 0)
    {
        AA_SET_ERR(errno, "AERON_DRIVER_RESOLVER_INTERFACE: socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(r->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(r->fd, (const struct sockaddr *)&address, aa_udp_address_length(&address)) < 0)
    {
        AA_SET_ERR(errno, "AERON_DRIVER_RESOLVER_INTERFACE: cannot bind %s: %s", interface, strerror(errno));
        return -1;
    }
    socklen_t length = sizeof(r->bound_address);
    if (getsockname(r->fd, (struct sockaddr *)&r->bound_address, &length) < 0)
    {
        AA_SET_ERR(errno, "AERON_DRIVER_RESOLVER_INTERFACE: getsockname: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int aa_driver_name_resolver_init(aa_driver_name_resolver_t **resolver, const aa_driver_name_resolver_config_t *config)
{
    *resolver = NULL;
    aa_driver_name_resolver_t *r = calloc(1, sizeof(*r));
    if (NULL == r)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating the driver name resolver");
        return -1;
    }
    r->fd = -1;
    r->config = *config;
    if (NULL == r->config.neighbors_counter)
    {
        r->config.neighbors_counter = &r->dummy_counter;
    }
    if (NULL == r->config.cache_entries_counter)
    {
        r->config.cache_entries_counter = &r->dummy_counter;
    }
    volatile int64_t **counters[] = { &r->config.invalid_packets_counter, &r->config.source_refused_counter,
        &r->config.entry_refused_counter, &r->config.cap_refused_counter, &r->config.gossip_throttled_counter,
        &r->config.unauthenticated_counter };
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
    {
        if (NULL == *counters[i])
        {
            *counters[i] = &r->dummy_counter;
        }
    }
    r->frame_capacity = sizeof(r->send_buffer);
    /* the budget holds one gossip interval's worth, and at least one whole frame */
    int64_t burst = r->config.gossip_rate_limit * AA_DRIVER_NAME_RESOLVER_GOSSIP_INTERVAL_MS / 1000;
    aa_dnr_rate_limit_init(&r->gossip_limit, r->config.gossip_rate_limit,
        burst < AA_DRIVER_NAME_RESOLVER_FRAME_LENGTH ? AA_DRIVER_NAME_RESOLVER_FRAME_LENGTH : burst);
    pthread_mutex_init(&r->mutex, NULL);
    pthread_cond_init(&r->lookup_cond, NULL);

    if (NULL != config->name && '\0' != config->name[0])
    {
        snprintf(r->name, sizeof(r->name), "%s", config->name);
    }
    else if (gethostname(r->name, sizeof(r->name) - 1) < 0)
    {
        AA_SET_ERR(errno, "AERON_DRIVER_RESOLVER_NAME is not set and the host name is unknown: %s", strerror(errno));
        aa_driver_name_resolver_close(r);
        return -1;
    }
    r->name_length = (int32_t)strlen(r->name);
    if (!(r->name_length >= 1 && r->name_length <= AA_RESOLUTION_NAME_MAX_LENGTH &&
        aa_resolution_entry_length(AA_RESOLUTION_TYPE_NAME_TO_IP4, r->name_length) > 0) ||
        strpbrk(r->name, " \t\r\n") != NULL)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "AERON_DRIVER_RESOLVER_NAME '%s': a driver name is 1 to %d characters of printable ASCII without spaces",
            r->name, AA_RESOLUTION_NAME_MAX_LENGTH);
        aa_driver_name_resolver_close(r);
        return -1;
    }
    if (aa_cidr_list_parse("AERON_DRIVER_RESOLVER_ALLOWED_NETWORKS", config->allowed_networks,
        &r->allowed_networks) < 0)
    {
        aa_driver_name_resolver_close(r);
        return -1;
    }
    if (NULL != config->hmac_key_file && '\0' != config->hmac_key_file[0])
    {
        if (aa_dnr_hmac_key_load(config->hmac_key_file, r->hmac_key, sizeof(r->hmac_key), &r->hmac_key_length) < 0)
        {
            aa_driver_name_resolver_close(r);
            return -1;
        }
        r->frame_capacity = sizeof(r->send_buffer) - AA_RESOLUTION_HMAC_TRAILER_LENGTH;
    }
    r->config.allowed_networks = NULL;   /* the caller's strings are not kept */
    r->config.hmac_key_file = NULL;
    if (aa_dnr_bind(r, config->interface) < 0 || aa_dnr_parse_bootstraps(r, config->bootstrap_neighbors) < 0)
    {
        aa_driver_name_resolver_close(r);
        return -1;
    }
    if (r->has_named_bootstrap)
    {
        if (0 != pthread_create(&r->lookup_thread, NULL, aa_dnr_lookup_thread, r))
        {
            AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "cannot start the driver name resolver's bootstrap lookup thread");
            aa_driver_name_resolver_close(r);
            return -1;
        }
        r->lookup_thread_started = true;
    }
    *resolver = r;
    return 0;
}

void aa_driver_name_resolver_close(aa_driver_name_resolver_t *r)
{
    if (NULL == r)
    {
        return;
    }
    if (r->lookup_thread_started)
    {
        pthread_mutex_lock(&r->mutex);
        r->closing = true;
        pthread_cond_signal(&r->lookup_cond);
        pthread_mutex_unlock(&r->mutex);
        pthread_join(r->lookup_thread, NULL);
    }
    if (r->fd >= 0)
    {
        close(r->fd);
    }
    pthread_cond_destroy(&r->lookup_cond);
    pthread_mutex_destroy(&r->mutex);
    free(r->cache);
    free(r->neighbors);
    volatile uint8_t *key = r->hmac_key;   /* volatile: the clearing is not optimised away */
    for (size_t i = 0; i < sizeof(r->hmac_key); i++)
    {
        key[i] = 0;
    }
    free(r);
}
