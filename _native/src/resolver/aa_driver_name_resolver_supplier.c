/*
 * The "driver" entry of the name resolver registry (aa_udp_channel.h): the gossip resolver of
 * aa_driver_name_resolver.h behind the resolver interface, with its counters and its records in the
 * resolutions table.
 *
 *   resolve   (executor)  the cache, then our own name, then the default resolver;
 *   lookup    identity (names map to themselves; the port stays the URI's);
 *   do_work   (conductor) the gossip (socket, timers), then once a second every cache entry into
 *             <aeron_dir>/name-resolutions.dat (key "neighbour", source "driver");
 * Counters (reference 3): "Resolver neighbors: bound <addr>[ bootstrap <list>]" (type 15), "Resolver
 * cache entries: name <name>" (type 16), "resolver-local-sockaddr: <addr>" (type 14, ACTIVE while
 * bound); invalid RES frames count in the "Invalid packets" system counter, refusals of the rules of
 * aa_driver_name_resolver.h in the "Resolver ..." system counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolver/aa_driver_name_resolver.h"
#include "resolver/aa_name_resolutions.h"
#include "resolver/aa_name_resolver.h"
#include "util/aa_udp_address.h"
#include "concurrent/aa_atomic.h"
#include "concurrent/aa_counters.h"
#include "concurrent/aa_error_log.h"
#include "concurrent/aa_system_counters.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

#define AA_COUNTER_TYPE_RESOLVER_NEIGHBORS 15
#define AA_COUNTER_TYPE_RESOLVER_CACHE_ENTRIES 16
#define AA_DRIVER_NAME_RESOLVER_RECORD_INTERVAL_MS 1000

typedef struct aa_driver_name_resolver_adapter_stct
{
    aa_name_resolver_t resolver;
    aa_driver_name_resolver_t *gossip;
    aa_name_resolver_context_t context;
    int32_t neighbors_counter_id;
    int32_t cache_entries_counter_id;
    int32_t local_sockaddr_counter_id;
    int64_t next_record_ms;
    volatile int64_t unused_counter;
}
aa_driver_name_resolver_adapter_t;

static void aa_dnr_adapter_log_error(void *clientd, int32_t code, const char *message)
{
    aa_driver_name_resolver_adapter_t *a = clientd;
    if (NULL != a->context.error_log)
    {
        int64_t now_ms = NULL != a->context.clock ? aa_clock_epoch_time(a->context.clock) : 0;
        aa_distinct_error_log_record(a->context.error_log, now_ms, code, message);
    }
    if (NULL != a->context.system_counters)
    {
        __atomic_fetch_add(a->context.system_counters[AA_SYSTEM_COUNTER_ERRORS], 1, __ATOMIC_RELAXED);
    }
}

static int aa_dnr_adapter_resolve(
    void *state, const char *key, const char *host, int family, bool is_re_resolution, struct sockaddr_storage *address)
{
    aa_driver_name_resolver_adapter_t *a = state;
    if (1 == aa_driver_name_resolver_find(a->gossip, host, family, address))
    {
        return 0;
    }
    aa_name_resolver_t *fallback = NULL != a->context.default_resolver ? a->context.default_resolver : aa_name_resolver_default();
    if (fallback->resolve(fallback->state, key, host, family, is_re_resolution, address) < 0)
    {
        AA_APPEND_ERR("the driver name resolver knows no driver named '%s' (not announced, or gone for 10 s), and "
            "the default resolver cannot resolve it either", host);
        return -1;
    }
    return 0;
}

static void aa_dnr_adapter_record(aa_driver_name_resolver_adapter_t *a, int64_t now_ms)
{
    if (NULL == a->context.resolutions)
    {
        return;
    }
    for (size_t i = 0; i < aa_driver_name_resolver_cache_count(a->gossip); i++)
    {
        const char *name;
        struct sockaddr_storage address;
        int64_t activity_ms;
        if (0 == aa_driver_name_resolver_cache_entry(a->gossip, i, &name, &address, &activity_ms))
        {
            aa_name_resolutions_record(a->context.resolutions, name, "neighbour", &address, "driver", now_ms);
        }
    }
}

static int aa_dnr_adapter_do_work(void *state, int64_t now_ms)
{
    aa_driver_name_resolver_adapter_t *a = state;
    int work = aa_driver_name_resolver_do_work(a->gossip, now_ms);
    if (now_ms >= a->next_record_ms)
    {
        a->next_record_ms = now_ms + AA_DRIVER_NAME_RESOLVER_RECORD_INTERVAL_MS;
        aa_dnr_adapter_record(a, now_ms);
    }
    return work;
}

static int64_t aa_dnr_adapter_now_ms(const aa_driver_name_resolver_adapter_t *a)
{
    return NULL != a->context.clock ? aa_clock_epoch_time(a->context.clock) : 0;
}

static void aa_dnr_adapter_close(aa_name_resolver_t *resolver)
{
    aa_driver_name_resolver_adapter_t *a = resolver->state;
    aa_driver_name_resolver_close(a->gossip);
    if (NULL != a->context.counters)
    {
        int64_t now_ms = aa_dnr_adapter_now_ms(a);
        int32_t ids[] = { a->neighbors_counter_id, a->cache_entries_counter_id, a->local_sockaddr_counter_id };
        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
        {
            if (ids[i] >= 0)
            {
                aa_counters_manager_free(a->context.counters, now_ms, ids[i]);
            }
        }
    }
    free(a);
}

static int32_t aa_dnr_adapter_counter(
    aa_driver_name_resolver_adapter_t *a, int32_t type_id, const uint8_t *key, size_t key_length, const char *label)
{
    size_t label_length = strlen(label);
    if (label_length >= AA_COUNTER_LABEL_MAX_LENGTH)
    {
        label_length = AA_COUNTER_LABEL_MAX_LENGTH - 1;
    }
    return aa_counters_manager_allocate(
        a->context.counters, aa_dnr_adapter_now_ms(a), type_id, key, key_length, label, label_length);
}

static int aa_dnr_adapter_allocate_counters(aa_driver_name_resolver_adapter_t *a)
{
    char label[AA_COUNTER_LABEL_MAX_LENGTH + 64];
    char described[AA_COUNTER_LABEL_MAX_LENGTH];
    aa_driver_name_resolver_describe(a->gossip, described, sizeof(described));
    snprintf(label, sizeof(label), "Resolver neighbors: %s", described);
    a->neighbors_counter_id = aa_dnr_adapter_counter(a, AA_COUNTER_TYPE_RESOLVER_NEIGHBORS, NULL, 0, label);
    snprintf(label, sizeof(label), "Resolver cache entries: name %s", aa_driver_name_resolver_name(a->gossip));
    a->cache_entries_counter_id = aa_dnr_adapter_counter(a, AA_COUNTER_TYPE_RESOLVER_CACHE_ENTRIES, NULL, 0, label);

    /* as the endpoints' local-sockaddr counters: key = status counter id (-1: none) + length + address */
    char address[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    int address_length = aa_udp_address_format(address, sizeof(address), aa_driver_name_resolver_bound_address(a->gossip));
    uint8_t key[2 * sizeof(int32_t) + AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    int32_t none = -1, length32 = address_length < 0 ? 0 : address_length;
    memcpy(key, &none, sizeof(int32_t));
    memcpy(key + sizeof(int32_t), &length32, sizeof(int32_t));
    memcpy(key + 2 * sizeof(int32_t), address, (size_t)length32);
    snprintf(label, sizeof(label), "resolver-local-sockaddr: %s", address);
    a->local_sockaddr_counter_id = aa_dnr_adapter_counter(
        a, AA_COUNTER_TYPE_LOCAL_SOCKADDR, key, 2 * sizeof(int32_t) + (size_t)length32, label);
    if (a->neighbors_counter_id < 0 || a->cache_entries_counter_id < 0 || a->local_sockaddr_counter_id < 0)
    {
        AA_APPEND_ERR("%s", "allocating the driver name resolver's counters");
        return -1;
    }
    aa_put_int64_release(aa_counters_manager_addr(a->context.counters, a->local_sockaddr_counter_id),
        AA_CHANNEL_ENDPOINT_STATUS_ACTIVE);
    return 0;
}

int aa_driver_name_resolver_supplier(
    aa_name_resolver_t **resolver, const char *init_args, const aa_name_resolver_context_t *context, void *clientd)
{
    (void)clientd;
    *resolver = NULL;
    if (NULL != init_args && '\0' != *init_args)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "the driver name resolver takes no init args (AERON_NAME_RESOLVER_INIT_ARGS), got '%s': configure it with "
            "AERON_DRIVER_RESOLVER_NAME, AERON_DRIVER_RESOLVER_INTERFACE and AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR",
            init_args);
        return -1;
    }
    if (NULL == context || NULL == context->driver_options)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "the driver name resolver runs inside a media driver only (it needs the driver's options)");
        return -1;
    }
    aa_driver_name_resolver_adapter_t *a = calloc(1, sizeof(*a));
    if (NULL == a)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating the driver name resolver");
        return -1;
    }
    a->resolver = (aa_name_resolver_t){ .name = "driver", .resolve = aa_dnr_adapter_resolve,
        .do_work = aa_dnr_adapter_do_work, .close = aa_dnr_adapter_close, .state = a };
    a->context = *context;
    a->neighbors_counter_id = a->cache_entries_counter_id = a->local_sockaddr_counter_id = -1;

    const aa_driver_resolver_options_t *options = context->driver_options;
    aa_driver_name_resolver_config_t config;
    memset(&config, 0, sizeof(config));
    config.name = options->name;
    config.interface = options->interface;
    config.bootstrap_neighbors = options->bootstrap_neighbors;
    config.allowed_networks = options->allowed_networks;
    config.hmac_key_file = options->hmac_key_file;
    config.cache_max_entries = options->cache_max_entries;
    config.neighbors_max = options->neighbors_max;
    config.gossip_rate_limit = options->gossip_rate_limit;
    volatile int64_t **system = context->system_counters;
    config.invalid_packets_counter = NULL != system ? system[AA_SYSTEM_COUNTER_INVALID_PACKETS] : &a->unused_counter;
    config.source_refused_counter = NULL != system ? system[AA_SYSTEM_COUNTER_RESOLVER_SOURCE_REFUSED] : NULL;
    config.entry_refused_counter = NULL != system ? system[AA_SYSTEM_COUNTER_RESOLVER_ENTRY_REFUSED] : NULL;
    config.cap_refused_counter = NULL != system ? system[AA_SYSTEM_COUNTER_RESOLVER_CAP_REFUSED] : NULL;
    config.gossip_throttled_counter = NULL != system ? system[AA_SYSTEM_COUNTER_RESOLVER_GOSSIP_THROTTLED] : NULL;
    config.unauthenticated_counter = NULL != system ? system[AA_SYSTEM_COUNTER_RESOLVER_UNAUTHENTICATED] : NULL;
    config.log_error = aa_dnr_adapter_log_error;
    config.log_error_clientd = a;
    if (aa_driver_name_resolver_init(&a->gossip, &config) < 0)
    {
        free(a);
        return -1;
    }
    if (NULL != context->counters)
    {
        if (aa_dnr_adapter_allocate_counters(a) < 0)
        {
            aa_dnr_adapter_close(&a->resolver);
            return -1;
        }
        aa_driver_name_resolver_set_counters(a->gossip,
            aa_counters_manager_addr(context->counters, a->neighbors_counter_id),
            aa_counters_manager_addr(context->counters, a->cache_entries_counter_id));
    }
    *resolver = &a->resolver;
    return 0;
}
