#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "media/aa_udp_channel.h"
#include "util/aa_udp_address.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"

static uint64_t aa_udp_channel_unique_id = 0;

static bool aa_udp_address_prefix_matches(
    const struct sockaddr_storage *a, const struct sockaddr *b, int32_t prefix_length)
{
    const uint8_t *pa;
    const uint8_t *pb;
    int32_t bits;
    if (AF_INET == a->ss_family)
    {
        pa = (const uint8_t *)&((const struct sockaddr_in *)a)->sin_addr;
        pb = (const uint8_t *)&((const struct sockaddr_in *)b)->sin_addr;
        bits = 32;
    }
    else
    {
        pa = (const uint8_t *)&((const struct sockaddr_in6 *)a)->sin6_addr;
        pb = (const uint8_t *)&((const struct sockaddr_in6 *)b)->sin6_addr;
        bits = 128;
    }
    if (prefix_length >= 0 && prefix_length < bits)
    {
        bits = prefix_length;
    }
    for (int32_t i = 0; i < bits; i += 8)
    {
        int32_t remaining = bits - i;
        uint8_t mask = remaining >= 8 ? 0xFF : (uint8_t)(0xFF << (8 - remaining));
        if ((pa[i / 8] & mask) != (pb[i / 8] & mask))
        {
            return false;
        }
    }
    return true;
}

/* Finds the local interface whose address lies in address/prefix_length (an exact match first). */
static int aa_udp_channel_find_interface(
    const struct sockaddr_storage *address, int32_t prefix_length, struct sockaddr_storage *found, unsigned int *index)
{
    struct ifaddrs *interfaces = NULL;
    if (getifaddrs(&interfaces) < 0)
    {
        AA_SET_ERR(errno, "cannot list the network interfaces: %s", strerror(errno));
        return -1;
    }
    const struct ifaddrs *match = NULL;
    for (const struct ifaddrs *ifa = interfaces; NULL != ifa; ifa = ifa->ifa_next)
    {
        if (NULL == ifa->ifa_addr || address->ss_family != ifa->ifa_addr->sa_family || 0 == (ifa->ifa_flags & IFF_UP))
        {
            continue;
        }
        if (aa_udp_address_prefix_matches(address, ifa->ifa_addr, -1))
        {
            match = ifa;
            break;
        }
        if (NULL == match && aa_udp_address_prefix_matches(address, ifa->ifa_addr, prefix_length))
        {
            match = ifa;
        }
    }
    int rc = -1;
    if (NULL != match)
    {
        uint16_t port = aa_udp_address_port(address);
        memset(found, 0, sizeof(*found));
        memcpy(found, match->ifa_addr,
            AF_INET == address->ss_family ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
        aa_udp_address_set_port(found, port);
        *index = if_nametoindex(match->ifa_name);
        rc = 0;
    }
    freeifaddrs(interfaces);
    return rc;
}

static int aa_udp_channel_resolve_param(
    aa_udp_channel_t *channel, aa_name_resolver_t *resolver, const char *key, bool is_interface, int family,
    struct sockaddr_storage *address, aa_uri_address_t *parts)
{
    return aa_name_resolver_resolve_value(
        resolver, key, aa_uri_find_param(&channel->uri, key), is_interface, family, false, address, parts);
}

static int aa_udp_channel_resolve_interface(aa_udp_channel_t *channel, aa_name_resolver_t *resolver, int family)
{
    aa_uri_address_t parts;
    struct sockaddr_storage given;
    if (aa_udp_channel_resolve_param(channel, resolver, "interface", true, family, &given, &parts) < 0)
    {
        return -1;
    }
    int32_t max_prefix = AF_INET == given.ss_family ? 32 : 128;
    if (parts.has_prefix && parts.prefix_length > max_prefix)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel parameter interface=%s: an %s prefix is at most /%d",
            aa_uri_find_param(&channel->uri, "interface"), AF_INET == given.ss_family ? "IPv4" : "IPv6", max_prefix);
        return -1;
    }
    channel->local_data = given;
    channel->interface_index = 0;
    if (aa_udp_address_is_wildcard(&given))
    {
        return 0;
    }
    struct sockaddr_storage found;
    unsigned int index = 0;
    int32_t prefix = parts.has_prefix ? parts.prefix_length : max_prefix;
    if (0 == aa_udp_channel_find_interface(&given, prefix, &found, &index))
    {
        channel->local_data = found;
        channel->interface_index = index;
        return 0;
    }
    if (parts.has_prefix || channel->is_multicast)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter interface=%s: no local network interface has an address in %s/%d; give an address "
            "of one of this host's interfaces, or its subnet (e.g. interface=192.168.1.10 or interface=192.168.1.0/24; "
            "`ip -brief address` lists them)",
            aa_uri_find_param(&channel->uri, "interface"), parts.host, prefix);
        return -1;
    }
    return 0;
}

/* The multicast control address is the data group with its last byte + 1; that byte must be odd. */
static int aa_udp_channel_multicast_control(aa_udp_channel_t *channel)
{
    uint8_t *last;
    channel->remote_control = channel->remote_data;
    if (AF_INET == channel->remote_data.ss_family)
    {
        last = (uint8_t *)&((struct sockaddr_in *)&channel->remote_control)->sin_addr + 3;
    }
    else
    {
        last = (uint8_t *)&((struct sockaddr_in6 *)&channel->remote_control)->sin6_addr + 15;
    }
    if (0 == (*last & 1))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter endpoint=%s: a multicast data address must end in an odd byte (e.g. 224.0.1.1); "
            "the control address is that + 1", aa_uri_find_param(&channel->uri, "endpoint"));
        return -1;
    }
    *last = (uint8_t)(*last + 1);
    return 0;
}

static int aa_udp_channel_canonicalise(aa_udp_channel_t *channel)
{
    char local[AA_URI_MAX_VALUE_LENGTH];
    char remote[AA_URI_MAX_VALUE_LENGTH];
    char suffix[32] = "";
    if (!channel->is_multicast && channel->has_explicit_control)
    {
        snprintf(local, sizeof(local), "%s", aa_uri_find_param(&channel->uri, "control"));
    }
    else if (aa_udp_address_format(local, sizeof(local), &channel->local_data) < 0)
    {
        return -1;
    }
    if (!channel->is_multicast && channel->has_explicit_endpoint)
    {
        snprintf(remote, sizeof(remote), "%s", aa_uri_find_param(&channel->uri, "endpoint"));
    }
    else if (aa_udp_address_format(remote, sizeof(remote), &channel->remote_data) < 0)
    {
        return -1;
    }
    /* response channels on one control address share one endpoint: the response publications of every
     * requester its one socket (bound to control=), the response subscriptions one receive socket */
    const bool is_shared_response = AA_UDP_CHANNEL_CONTROL_MODE_RESPONSE == channel->control_mode &&
        channel->has_explicit_control && !channel->has_explicit_endpoint && 0 != aa_udp_address_port(&channel->local_control);
    if (channel->has_wildcard_port && !is_shared_response)
    {
        if (channel->has_tag)
        {
            snprintf(suffix, sizeof(suffix), "#%" PRId64, channel->tag_id);
        }
        else
        {
            snprintf(suffix, sizeof(suffix), "-%" PRIu64, __atomic_fetch_add(&aa_udp_channel_unique_id, 1, __ATOMIC_RELAXED));
        }
    }
    snprintf(channel->canonical_form, sizeof(channel->canonical_form), "UDP-%s-%s%s", local, remote, suffix);
    return 0;
}

static int aa_udp_channel_read_settings(aa_udp_channel_t *channel, const aa_udp_channel_defaults_t *defaults)
{
    int64_t rcvbuf = defaults->socket_rcvbuf_length;
    int64_t sndbuf = defaults->socket_sndbuf_length;
    int64_t window = 0;
    int32_t ttl = defaults->multicast_ttl;
    if (aa_uri_get_size(&channel->uri, "so-rcvbuf", &rcvbuf) < 0 ||
        aa_uri_get_size(&channel->uri, "so-sndbuf", &sndbuf) < 0 ||
        aa_uri_get_size(&channel->uri, "rcv-wnd", &window) < 0 ||
        aa_uri_get_int32(&channel->uri, "ttl", &ttl) < 0)
    {
        return -1;
    }
    channel->socket_rcvbuf_length = (int32_t)rcvbuf;
    channel->socket_sndbuf_length = (int32_t)sndbuf;
    channel->receiver_window_length = (int32_t)window;
    channel->multicast_ttl = ttl;

    const char *mode = aa_uri_find_param(&channel->uri, "control-mode");
    channel->control_mode = NULL == mode ? AA_UDP_CHANNEL_CONTROL_MODE_NONE :
        0 == strcmp(mode, "dynamic") ? AA_UDP_CHANNEL_CONTROL_MODE_DYNAMIC :
        0 == strcmp(mode, "manual") ? AA_UDP_CHANNEL_CONTROL_MODE_MANUAL : AA_UDP_CHANNEL_CONTROL_MODE_RESPONSE;

    aa_uri_tags_t tags;
    if (aa_uri_get_tags(&channel->uri, &tags) < 0)
    {
        return -1;
    }
    channel->has_tag = tags.has_channel_tag;
    channel->tag_id = tags.channel_tag;
    return 0;
}

static int aa_udp_channel_resolve(aa_udp_channel_t *channel, aa_name_resolver_t *resolver)
{
    aa_uri_address_t parts;
    int family = AF_UNSPEC;
    channel->has_explicit_endpoint = NULL != aa_uri_find_param(&channel->uri, "endpoint");
    channel->has_explicit_control = NULL != aa_uri_find_param(&channel->uri, "control");
    channel->has_explicit_interface = NULL != aa_uri_find_param(&channel->uri, "interface");

    if (channel->has_explicit_endpoint)
    {
        if (aa_udp_channel_resolve_param(channel, resolver, "endpoint", false, AF_UNSPEC, &channel->remote_data, &parts) < 0)
        {
            return -1;
        }
        family = channel->remote_data.ss_family;
        channel->is_multicast = aa_udp_address_is_multicast(&channel->remote_data);
    }
    if (channel->has_explicit_control)
    {
        if (aa_udp_channel_resolve_param(channel, resolver, "control", false, family, &channel->local_data, &parts) < 0)
        {
            return -1;
        }
        if (AF_UNSPEC == family)
        {
            family = channel->local_data.ss_family;
        }
    }
    if (AF_UNSPEC == family)
    {
        family = AF_INET;
    }
    if (!channel->has_explicit_endpoint)
    {
        aa_udp_address_wildcard(&channel->remote_data, family, 0);
    }

    if (channel->is_multicast)
    {
        if (channel->has_explicit_control)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel parameter control=%s: a multicast channel takes its control address from the endpoint; "
                "control= is for unicast (multi-destination-cast) channels", aa_uri_find_param(&channel->uri, "control"));
            return -1;
        }
        if (aa_udp_channel_multicast_control(channel) < 0)
        {
            return -1;
        }
    }
    else
    {
        channel->remote_control = channel->remote_data;
    }

    if (channel->has_explicit_interface)
    {
        struct sockaddr_storage control = channel->local_data;
        if (aa_udp_channel_resolve_interface(channel, resolver, family) < 0)
        {
            return -1;
        }
        if (channel->has_explicit_control)
        {
            channel->local_data = control;
        }
    }
    else if (!channel->has_explicit_control)
    {
        aa_udp_address_wildcard(&channel->local_data, family, 0);
    }
    channel->local_control = channel->local_data;

    channel->has_wildcard_port = 0 == aa_udp_address_port(&channel->remote_data) ||
        (channel->has_explicit_control && 0 == aa_udp_address_port(&channel->local_control));
    return 0;
}

/* Resolves channel->uri (parsed) into the rest of *channel. */
static int aa_udp_channel_build(aa_udp_channel_t *channel, const aa_udp_channel_defaults_t *defaults)
{
    static const aa_udp_channel_defaults_t reference_defaults =
    {
        AA_UDP_SOCKET_SO_RCVBUF_DEFAULT, AA_UDP_SOCKET_SO_SNDBUF_DEFAULT, AA_UDP_SOCKET_MULTICAST_TTL_DEFAULT, NULL
    };
    if (AA_URI_MEDIA_UDP != channel->uri.media)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel %s is not a UDP channel (aeron:udp?endpoint=host:port)",
            channel->uri.text);
        return -1;
    }
    if (NULL == defaults)
    {
        defaults = &reference_defaults;
    }
    if (aa_udp_channel_read_settings(channel, defaults) < 0 ||
        aa_udp_channel_resolve(channel, NULL != defaults->resolver ? defaults->resolver : aa_name_resolver_default()) < 0 ||
        aa_udp_channel_canonicalise(channel) < 0)
    {
        AA_APPEND_ERR("channel %s", channel->uri.text);
        return -1;
    }
    return 0;
}

static aa_udp_channel_t *aa_udp_channel_new(void)
{
    aa_udp_channel_t *channel = calloc(1, sizeof(aa_udp_channel_t));
    if (NULL == channel)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory parsing a UDP channel");
    }
    return channel;
}

int aa_udp_channel_from_uri(aa_udp_channel_t **out, const aa_uri_t *uri, const aa_udp_channel_defaults_t *defaults)
{
    *out = NULL;
    aa_udp_channel_t *channel = aa_udp_channel_new();
    if (NULL == channel)
    {
        return -1;
    }
    channel->uri = *uri;
    if (aa_udp_channel_build(channel, defaults) < 0)
    {
        free(channel);
        return -1;
    }
    *out = channel;
    return 0;
}

int aa_udp_channel_parse(aa_udp_channel_t **out, const char *uri, const aa_udp_channel_defaults_t *defaults)
{
    *out = NULL;
    aa_udp_channel_t *channel = aa_udp_channel_new();
    if (NULL == channel)
    {
        return -1;
    }
    if (aa_uri_parse(uri, &channel->uri) < 0 || aa_udp_channel_build(channel, defaults) < 0)
    {
        free(channel);
        return -1;
    }
    *out = channel;
    return 0;
}

void aa_udp_channel_delete(aa_udp_channel_t *channel)
{
    free(channel);
}

bool aa_udp_channel_equals(const aa_udp_channel_t *a, const aa_udp_channel_t *b)
{
    return a == b || (NULL != a && NULL != b && 0 == strcmp(a->canonical_form, b->canonical_form));
}
