/*
 * Name resolvers (aa_udp_channel.h): the registry of resolvers, the built-in "default" resolver
 * (getaddrinfo) and the resolution flow of reference 8.1 (lookup, split, literal or resolve).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolver/aa_name_resolver.h"
#include "util/aa_udp_address.h"
#include "resolver/aa_csv_table_name_resolver.h"
#include "resolver/aa_driver_name_resolver.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"

static int aa_default_name_resolver_resolve(
    void *state, const char *key, const char *host, int family, bool is_re_resolution, struct sockaddr_storage *address)
{
    (void)state;
    (void)is_re_resolution;
    return aa_udp_channel_resolve_host(key, host, 0, family, address);
}

static void aa_default_name_resolver_close(aa_name_resolver_t *resolver)
{
    free(resolver);
}

static int aa_default_name_resolver_supplier(
    aa_name_resolver_t **resolver, const char *init_args, const aa_name_resolver_context_t *context, void *clientd)
{
    (void)context;
    (void)clientd;
    if (NULL != init_args && '\0' != *init_args)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "the default name resolver takes no init args (AERON_NAME_RESOLVER_INIT_ARGS), got '%s'", init_args);
        return -1;
    }
    aa_name_resolver_t *r = calloc(1, sizeof(aa_name_resolver_t));
    if (NULL == r)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating the default name resolver");
        return -1;
    }
    r->name = "default";
    r->resolve = aa_default_name_resolver_resolve;
    r->close = aa_default_name_resolver_close;
    *resolver = r;
    return 0;
}

static const aa_name_resolver_table_t aa_default_name_resolver_table = { aa_default_name_resolver_supplier };
static const aa_name_resolver_table_t aa_csv_table_name_resolver_table = { aa_csv_table_name_resolver_supplier };
static const aa_name_resolver_table_t aa_driver_name_resolver_table = { aa_driver_name_resolver_supplier };

/* Used when a caller gives no resolver (tools, tests) and as every resolver's fallback. */
static aa_name_resolver_t aa_default_name_resolver =
{
    "default", NULL, aa_default_name_resolver_resolve, NULL, NULL, NULL
};

aa_name_resolver_t *aa_name_resolver_new(size_t state_size, const char *what)
{
    aa_name_resolver_t *r = calloc(1, sizeof(aa_name_resolver_t));
    void *state = calloc(1, state_size);
    if (NULL == r || NULL == state)
    {
        free(r);
        free(state);
        AA_SET_ERR(ENOMEM, "out of memory creating %s", what);
        return NULL;
    }
    r->state = state;
    return r;
}

aa_name_resolver_t *aa_name_resolver_default(void)
{
    return &aa_default_name_resolver;
}

static int aa_name_resolver_register_all(void)
{
    return aa_registry_register(AA_STRATEGY_KIND_NAME_RESOLVER, "default", &aa_default_name_resolver_table, NULL,
            "the system resolver (getaddrinfo), on the driver's resolver executor thread; no init args") < 0 ||
        aa_registry_register(AA_STRATEGY_KIND_NAME_RESOLVER, "csv_table", &aa_csv_table_name_resolver_table, NULL,
            "a static table: init args are a CSV file path or rows 'name,host[:port][,re-resolution host[:port]]' "
            "separated by '|' or new lines; names not in it go to the default resolver") < 0 ||
        aa_registry_register(AA_STRATEGY_KIND_NAME_RESOLVER, "driver", &aa_driver_name_resolver_table, NULL,
            "driver names learnt by gossip with other drivers (Aeron's driver name resolver), configured by "
            "AERON_DRIVER_RESOLVER_NAME / _INTERFACE / _BOOTSTRAP_NEIGHBOR and chosen when the interface is set; "
            "no init args") < 0 ? -1 : 0;
}

int aa_name_resolver_register_builtins(void)
{
    static aa_registry_builtins_t builtins = AA_REGISTRY_BUILTINS_INIT;
    return aa_registry_register_builtins(&builtins, aa_name_resolver_register_all, "name resolvers");
}

static aa_clock_t aa_name_resolver_system_clock;
static pthread_once_t aa_name_resolver_system_clock_once = PTHREAD_ONCE_INIT;

static void aa_name_resolver_system_clock_init(void)
{
    aa_name_resolver_system_clock = aa_clock_system();
}

int aa_name_resolver_create(
    aa_name_resolver_t **resolver, const char *name, const char *init_args, const aa_name_resolver_context_t *context)
{
    aa_name_resolver_context_t standalone;
    aa_strategy_t entry;
    *resolver = NULL;
    if (NULL == context)
    {
        memset(&standalone, 0, sizeof(standalone));
        pthread_once(&aa_name_resolver_system_clock_once, aa_name_resolver_system_clock_init);
        standalone.default_resolver = &aa_default_name_resolver;
        standalone.clock = &aa_name_resolver_system_clock;
        context = &standalone;
    }
    if (aa_name_resolver_register_builtins() < 0 ||
        aa_registry_lookup(AA_STRATEGY_KIND_NAME_RESOLVER, NULL == name || '\0' == *name ? "default" : name, &entry) < 0)
    {
        AA_APPEND_ERR("%s", "AERON_NAME_RESOLVER_SUPPLIER");
        return -1;
    }
    bool has_args = NULL != init_args && '\0' != *init_args;
    if (NULL != entry.options && has_args)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "name resolver '%s' is an alias of %s with init args '%s' already; set no AERON_NAME_RESOLVER_INIT_ARGS, or "
            "name %s", entry.name, entry.target, entry.options, entry.target);
        return -1;
    }
    const aa_name_resolver_table_t *table = entry.table;
    aa_err_clear();
    if (table->supplier(resolver, has_args ? init_args : entry.options, context, entry.clientd) < 0)
    {
        if ('\0' == aa_errmsg()[0])
        {
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "name resolver '%s' refused init args '%s'", entry.name,
                has_args ? init_args : (NULL != entry.options ? entry.options : ""));
        }
        *resolver = NULL;
        AA_APPEND_ERR("creating name resolver '%s'", entry.name);
        return -1;
    }
    if (NULL == (*resolver)->resolve)
    {
        aa_name_resolver_close(*resolver);
        *resolver = NULL;
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "name resolver '%s' gave no resolve function", entry.name);
        return -1;
    }
    return 0;
}

void aa_name_resolver_close(aa_name_resolver_t *resolver)
{
    if (NULL != resolver && resolver != &aa_default_name_resolver && NULL != resolver->close)
    {
        resolver->close(resolver);
    }
}

bool aa_name_resolver_is_literal(const char *host)
{
    struct in6_addr literal;
    return 1 == inet_pton(AF_INET, host, &literal) || 1 == inet_pton(AF_INET6, host, &literal);
}

/* Literals are parsed here; names go to the resolver. */
static int aa_name_resolver_resolve_address(
    aa_name_resolver_t *resolver, const char *key, const char *host, int32_t port, int family, bool is_re_resolution,
    struct sockaddr_storage *address)
{
    if (aa_name_resolver_is_literal(host))
    {
        return aa_udp_channel_resolve_host(key, host, port, family, address);
    }
    memset(address, 0, sizeof(*address));
    aa_err_clear();
    if (resolver->resolve(resolver->state, key, host, family, is_re_resolution, address) < 0)
    {
        if ('\0' == aa_errmsg()[0])    /* a resolver built apart from this library cannot set errors */
        {
            AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST, "channel parameter %s: name resolver '%s' cannot resolve '%s'",
                key, resolver->name, host);
        }
        return -1;
    }
    if (AF_INET != address->ss_family && AF_INET6 != address->ss_family)
    {
        AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST, "channel parameter %s: name resolver '%s' gave no IPv4 or IPv6 address for '%s'",
            key, resolver->name, host);
        return -1;
    }
    aa_udp_address_set_port(address, (uint16_t)port);
    return 0;
}

int aa_name_resolver_resolve_value(
    aa_name_resolver_t *resolver, const char *key, const char *value, bool prefix_allowed, int family,
    bool is_re_resolution, struct sockaddr_storage *address, aa_uri_address_t *parts)
{
    char looked_up[AA_URI_MAX_VALUE_LENGTH];
    if (NULL == resolver)
    {
        resolver = &aa_default_name_resolver;
    }
    if (aa_uri_parse_address(key, value, !prefix_allowed, prefix_allowed, parts) < 0)
    {
        return -1;
    }
    if (aa_name_resolver_is_literal(parts->host))
    {
        return aa_udp_channel_resolve_host(key, parts->host, parts->has_port ? parts->port : 0, family, address);
    }
    if (NULL != resolver->lookup)
    {
        looked_up[0] = '\0';
        aa_err_clear();
        if (resolver->lookup(resolver->state, key, value, is_re_resolution, looked_up, sizeof(looked_up)) < 0)
        {
            if ('\0' == aa_errmsg()[0])
            {
                AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST, "channel parameter %s: name resolver '%s' cannot look up '%s'",
                    key, resolver->name, value);
            }
            return -1;
        }
        looked_up[sizeof(looked_up) - 1] = '\0';
        if ('\0' == looked_up[0])
        {
            AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST, "channel parameter %s: name resolver '%s' looked '%s' up to nothing",
                key, resolver->name, value);
            return -1;
        }
        if (0 != strcmp(looked_up, value))
        {
            aa_uri_address_t mapped;
            if (aa_uri_parse_address(key, looked_up, false, prefix_allowed, &mapped) < 0)
            {
                AA_APPEND_ERR("name resolver '%s' looked '%s' up", resolver->name, value);
                return -1;
            }
            if (!mapped.has_port)    /* a name mapped to a host keeps the port the URI gave */
            {
                mapped.has_port = parts->has_port;
                mapped.port = parts->port;
            }
            if (!mapped.has_prefix)
            {
                mapped.has_prefix = parts->has_prefix;
                mapped.prefix_length = parts->prefix_length;
            }
            *parts = mapped;
        }
    }
    return aa_name_resolver_resolve_address(
        resolver, key, parts->host, parts->has_port ? parts->port : 0, family, is_re_resolution, address);
}

int aa_name_resolver_resolve_host_and_port(
    aa_name_resolver_t *resolver, const char *key, const char *value, int family, bool is_re_resolution,
    struct sockaddr_storage *address)
{
    aa_uri_address_t parts;
    return aa_name_resolver_resolve_value(
        resolver, key, value, 0 == strcmp(key, "interface"), family, is_re_resolution, address, &parts);
}
