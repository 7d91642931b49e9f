/* UDP channels: resolution, canonical forms (reference 7.1), multicast detection, socket settings,
 * and a channel built from a URI parsed once. Parsing only: nothing here opens a socket. The Makefile
 * links this test with -Wl,--wrap=aa_uri_parse: every parse goes through __wrap_aa_uri_parse, counted. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "media/aa_udp_channel.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"

static int uri_parses = 0;

int __real_aa_uri_parse(const char *uri, aa_uri_t *parsed);

int __wrap_aa_uri_parse(const char *uri, aa_uri_t *parsed)
{
    uri_parses++;
    return __real_aa_uri_parse(uri, parsed);
}

static aa_udp_channel_t *parse_ok(const char *uri, const aa_udp_channel_defaults_t *defaults)
{
    aa_udp_channel_t *channel = NULL;
    if (aa_udp_channel_parse(&channel, uri, defaults) < 0)
    {
        fprintf(stderr, "rejected %s: %s\n", uri, aa_errmsg());
        AA_CHECK(0);
    }
    return channel;
}

static void check_canonical(const char *uri, const char *expected)
{
    aa_udp_channel_t *channel = parse_ok(uri, NULL);
    if (0 != strcmp(channel->canonical_form, expected))
    {
        fprintf(stderr, "%s: canonical form %s, expected %s\n", uri, channel->canonical_form, expected);
        AA_CHECK(0);
    }
    aa_udp_channel_delete(channel);
}

static void check_canonical_prefix(const char *uri, const char *prefix)
{
    aa_udp_channel_t *channel = parse_ok(uri, NULL);
    if (0 != strncmp(channel->canonical_form, prefix, strlen(prefix)) ||
        strlen(channel->canonical_form) == strlen(prefix))
    {
        fprintf(stderr, "%s: canonical form %s, expected %s<n>\n", uri, channel->canonical_form, prefix);
        AA_CHECK(0);
    }
    aa_udp_channel_delete(channel);
}

static void check_rejected(const char *uri, int errcode, const char *fragment)
{
    aa_udp_channel_t *channel = (aa_udp_channel_t *)1;
    AA_CHECK_EQ(aa_udp_channel_parse(&channel, uri, NULL), -1);
    AA_CHECK(NULL == channel);
    if (NULL == strstr(aa_errmsg(), fragment))
    {
        fprintf(stderr, "message for %s lacks '%s': %s\n", uri, fragment, aa_errmsg());
        AA_CHECK(0);
    }
    AA_CHECK_EQ(aa_errcode(), errcode);
}

static void check_address(const struct sockaddr_storage *address, const char *expected)
{
    char text[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    AA_CHECK(aa_udp_address_format(text, sizeof(text), address) > 0);
    if (0 != strcmp(text, expected))
    {
        fprintf(stderr, "address %s, expected %s\n", text, expected);
        AA_CHECK(0);
    }
}

static void should_resolve_unicast_addresses(void)
{
    aa_udp_channel_t *channel = parse_ok("aeron:udp?endpoint=127.0.0.1:40456", NULL);
    AA_CHECK(channel->has_explicit_endpoint && !channel->has_explicit_control && !channel->is_multicast);
    check_address(&channel->remote_data, "127.0.0.1:40456");
    check_address(&channel->remote_control, "127.0.0.1:40456");
    check_address(&channel->local_data, "0.0.0.0:0");
    check_address(&channel->local_control, "0.0.0.0:0");
    AA_CHECK_EQ(channel->control_mode, AA_UDP_CHANNEL_CONTROL_MODE_NONE);
    aa_udp_channel_delete(channel);

    channel = parse_ok("aeron:udp?endpoint=localhost:40456|interface=127.0.0.1:40455", NULL);
    check_address(&channel->remote_data, "127.0.0.1:40456");
    check_address(&channel->local_data, "127.0.0.1:40455");
    AA_CHECK(channel->has_explicit_interface);
    AA_CHECK_EQ(channel->interface_index, if_nametoindex("lo"));
    aa_udp_channel_delete(channel);

    channel = parse_ok("aeron:udp?endpoint=127.0.0.1:40456|control=127.0.0.1:40457|control-mode=dynamic", NULL);
    AA_CHECK(channel->has_explicit_control);
    check_address(&channel->local_control, "127.0.0.1:40457");
    check_address(&channel->local_data, "127.0.0.1:40457");
    AA_CHECK_EQ(channel->control_mode, AA_UDP_CHANNEL_CONTROL_MODE_DYNAMIC);
    aa_udp_channel_delete(channel);

    channel = parse_ok("aeron:udp?endpoint=[::1]:40456", NULL);
    AA_CHECK_EQ(channel->remote_data.ss_family, AF_INET6);
    check_address(&channel->remote_data, "[::1]:40456");
    check_address(&channel->local_data, "[::]:0");
    aa_udp_channel_delete(channel);

    channel = parse_ok("aeron-spy:aeron:udp?endpoint=localhost:40456", NULL);
    AA_CHECK(channel->uri.is_spy);
    aa_udp_channel_delete(channel);
}

static void should_canonicalise_unicast(void)
{
    check_canonical("aeron:udp?endpoint=127.0.0.1:40456", "UDP-0.0.0.0:0-127.0.0.1:40456");
    check_canonical("aeron:udp?interface=127.0.0.1|endpoint=127.0.0.1:40456", "UDP-127.0.0.1:0-127.0.0.1:40456");
    check_canonical("aeron:udp?interface=127.0.0.1:40455|endpoint=127.0.0.1:40456", "UDP-127.0.0.1:40455-127.0.0.1:40456");
    /* names stay as written on unicast channels, so the form survives re-resolution */
    check_canonical("aeron:udp?interface=localhost|endpoint=localhost:40456", "UDP-127.0.0.1:0-localhost:40456");
    check_canonical("aeron:udp?endpoint=localhost:40456|control=localhost:40457", "UDP-localhost:40457-localhost:40456");
    check_canonical("aeron:udp?endpoint=[::1]:40456", "UDP-[::]:0-[::1]:40456");
    check_canonical("aeron:udp?interface=[::1]|endpoint=[::1]:40456", "UDP-[::1]:0-[::1]:40456");
    check_canonical("aeron:udp?interface=127.0.0.1:40455|endpoint=[::1]:40456", "UDP-127.0.0.1:40455-[::1]:40456");
}

static void should_make_wildcard_channels_unique_unless_tagged(void)
{
    check_canonical_prefix("aeron:udp?endpoint=127.0.0.1:0", "UDP-0.0.0.0:0-127.0.0.1:0-");
    check_canonical_prefix("aeron:udp?endpoint=127.0.0.1:9999|control=127.0.0.1:0", "UDP-127.0.0.1:0-127.0.0.1:9999-");
    check_canonical_prefix("aeron:udp?endpoint=[::1]:0", "UDP-[::]:0-[::1]:0-");
    check_canonical_prefix("aeron:udp?control-mode=manual", "UDP-0.0.0.0:0-0.0.0.0:0-");
    check_canonical("aeron:udp?tags=1001|endpoint=127.0.0.1:0", "UDP-0.0.0.0:0-127.0.0.1:0#1001");
    check_canonical("aeron:udp?tags=1001|endpoint=127.0.0.1:9999|control=127.0.0.1:0", "UDP-127.0.0.1:0-127.0.0.1:9999#1001");
    check_canonical("aeron:udp?tags=1001|endpoint=[::1]:0", "UDP-[::]:0-[::1]:0#1001");

    aa_udp_channel_t *a = parse_ok("aeron:udp?endpoint=127.0.0.1:0", NULL);
    aa_udp_channel_t *b = parse_ok("aeron:udp?endpoint=127.0.0.1:0", NULL);
    AA_CHECK(a->has_wildcard_port);
    AA_CHECK(!aa_udp_channel_equals(a, b));
    AA_CHECK(aa_udp_channel_equals(a, a));
    aa_udp_channel_delete(a);
    aa_udp_channel_delete(b);
}

/* Reference wave 3, section 2: the suffix only without endpoint= and control=, or with port 0 in either. */
static void should_suffix_only_channels_without_addresses_or_with_port_zero(void)
{
    check_canonical("aeron:udp?control=127.0.0.1:40457", "UDP-127.0.0.1:40457-0.0.0.0:0");
    check_canonical("aeron:udp?control=127.0.0.1:40457|tags=5", "UDP-127.0.0.1:40457-0.0.0.0:0");
    check_canonical("aeron:udp?tags=7", "UDP-0.0.0.0:0-0.0.0.0:0#7");
    check_canonical("aeron:udp?tags=7|endpoint=127.0.0.1:40456", "UDP-0.0.0.0:0-127.0.0.1:40456");
    check_canonical("aeron:udp?tags=7|endpoint=224.0.1.1:0", "UDP-0.0.0.0:0-224.0.1.1:0");
    check_canonical_prefix("aeron:udp?control=127.0.0.1:0|control-mode=dynamic", "UDP-127.0.0.1:0-0.0.0.0:0-");
}

static void check_tag_match(const char *uri, const char *endpoint_uri, int expected_rc, bool expected, const char *error)
{
    aa_udp_channel_t *channel = parse_ok(uri, NULL);
    aa_udp_channel_t *endpoint = parse_ok(endpoint_uri, NULL);
    bool matches = !expected;
    int rc = aa_udp_channel_matches_tag(channel, endpoint, &matches);
    if (rc != expected_rc || matches != expected || (NULL != error && NULL == strstr(aa_errmsg(), error)))
    {
        fprintf(stderr, "%s against %s: rc %d matches %d (%s)\n", uri, endpoint_uri, rc, matches, aa_errmsg());
        AA_CHECK(0);
    }
    aa_udp_channel_delete(channel);
    aa_udp_channel_delete(endpoint);
}

static void should_match_endpoints_by_channel_tag(void)
{
    const char *tagged = "aeron:udp?endpoint=127.0.0.1:40456|control=127.0.0.1:0|tags=1001";
    check_tag_match("aeron:udp?tags=1001", tagged, 0, true, NULL);
    check_tag_match("aeron:udp?tags=1001,7", tagged, 0, true, NULL);
    check_tag_match("aeron:udp?endpoint=127.0.0.1:40456|control=127.0.0.1:0|tags=1001", tagged, 0, true, NULL);
    check_tag_match("aeron:udp?tags=1002", tagged, 0, false, NULL);
    check_tag_match("aeron:udp?endpoint=127.0.0.1:40456|control=127.0.0.1:0", tagged, 0, false, NULL);
    check_tag_match("aeron:udp?tags=1001", "aeron:udp?endpoint=127.0.0.1:40456", 0, false, NULL);
    check_tag_match("aeron:udp?tags=1001|control-mode=manual", tagged, -1, false,
        "matching tag 1001 has mismatched control-mode: aeron:udp?tags=1001|control-mode=manual <> " );
    check_tag_match("aeron:udp?tags=1001|endpoint=127.0.0.1:40999", tagged, -1, false,
        "matching tag 1001 has mismatched endpoint or control: aeron:udp?tags=1001|endpoint=127.0.0.1:40999 <> ");
    check_tag_match("aeron:udp?tags=9|control-mode=manual", "aeron:udp?tags=9|control-mode=manual", 0, true, NULL);
}

static void check_offsets(const char *uri, int32_t snd, int32_t rcv, int32_t media)
{
    aa_udp_channel_t *channel = parse_ok(uri, NULL);
    AA_CHECK_EQ(channel->channel_snd_timestamp_offset, snd);
    AA_CHECK_EQ(channel->channel_rcv_timestamp_offset, rcv);
    AA_CHECK_EQ(channel->media_rcv_timestamp_offset, media);
    aa_udp_channel_delete(channel);
}

static void check_channel_rejected(const char *uri, const char *error)
{
    aa_udp_channel_t *channel = NULL;
    AA_CHECK_EQ(aa_udp_channel_parse(&channel, uri, NULL), -1);
    if (NULL == strstr(aa_errmsg(), error))
    {
        fprintf(stderr, "%s: '%s' lacks '%s'\n", uri, aa_errmsg(), error);
        AA_CHECK(0);
    }
}

static void should_read_timestamp_offsets_and_refuse_overlaps(void)
{
    const char *endpoint = "aeron:udp?endpoint=127.0.0.1:40456|";
    char uri[256];
    check_offsets("aeron:udp?endpoint=127.0.0.1:40456", AA_UDP_CHANNEL_TIMESTAMP_OFF, AA_UDP_CHANNEL_TIMESTAMP_OFF,
        AA_UDP_CHANNEL_TIMESTAMP_OFF);
    snprintf(uri, sizeof(uri), "%schannel-snd-ts-offset=0|channel-rcv-ts-offset=8|media-rcv-ts-offset=reserved", endpoint);
    check_offsets(uri, 0, 8, AA_UDP_CHANNEL_TIMESTAMP_RESERVED);
    aa_udp_channel_t *stamped = parse_ok(uri, NULL);
    aa_udp_channel_t *plain = parse_ok("aeron:udp?endpoint=127.0.0.1:40456|channel-snd-ts-offset=0", NULL);
    AA_CHECK(aa_udp_channel_has_receive_timestamps(stamped));
    AA_CHECK(!aa_udp_channel_has_receive_timestamps(plain));
    aa_udp_channel_delete(stamped);
    aa_udp_channel_delete(plain);
    snprintf(uri, sizeof(uri), "%schannel-snd-ts-offset=0|channel-rcv-ts-offset=7", endpoint);
    check_channel_rejected(uri, "channel-rcv-ts-offset and channel-snd-ts-offset overlap");
    snprintf(uri, sizeof(uri), "%smedia-rcv-ts-offset=16|channel-rcv-ts-offset=20", endpoint);
    check_channel_rejected(uri, "media-rcv-ts-offset and channel-rcv-ts-offset overlap");
    snprintf(uri, sizeof(uri), "%smedia-rcv-ts-offset=reserved|channel-snd-ts-offset=reserved", endpoint);
    check_channel_rejected(uri, "media-rcv-ts-offset and channel-snd-ts-offset overlap");
    check_channel_rejected("aeron:udp?endpoint=127.0.0.1:40456|tags=10x", "could not parse channel tag string: 10x");
    check_channel_rejected("aeron:udp?endpoint=127.0.0.1:40456|tags=-1", "could not parse channel tag string: -1");
}

static void should_compare_by_canonical_form(void)
{
    aa_udp_channel_t *a = parse_ok("aeron:udp?endpoint=localhost:9090", NULL);
    aa_udp_channel_t *b = parse_ok("aeron:udp?endpoint=localhost:9090|session-id=12|term-length=64k", NULL);
    aa_udp_channel_t *c = parse_ok("aeron:udp?endpoint=localhost:9091", NULL);
    aa_udp_channel_t *d = parse_ok("aeron:udp?endpoint=127.0.0.1:9090", NULL);
    AA_CHECK(aa_udp_channel_equals(a, b));
    AA_CHECK(!aa_udp_channel_equals(a, c));
    AA_CHECK(!aa_udp_channel_equals(a, d));
    AA_CHECK(!aa_udp_channel_equals(a, NULL));
    AA_CHECK(aa_udp_address_equals(&a->remote_data, &d->remote_data));
    aa_udp_channel_delete(a);
    aa_udp_channel_delete(b);
    aa_udp_channel_delete(c);
    aa_udp_channel_delete(d);
}

static void should_detect_multicast_and_derive_control(void)
{
    aa_udp_channel_t *channel = parse_ok("aeron:udp?endpoint=224.0.1.1:40456|interface=127.0.0.1", NULL);
    AA_CHECK(channel->is_multicast);
    check_address(&channel->remote_data, "224.0.1.1:40456");
    check_address(&channel->remote_control, "224.0.1.2:40456");
    AA_CHECK_EQ(channel->interface_index, if_nametoindex("lo"));
    AA_CHECK(0 == strcmp(channel->canonical_form, "UDP-127.0.0.1:0-224.0.1.1:40456"));
    aa_udp_channel_delete(channel);

    channel = parse_ok("aeron:udp?endpoint=224.0.1.1:40456|interface=127.0.0.0/8", NULL);
    check_address(&channel->local_data, "127.0.0.1:0");
    aa_udp_channel_delete(channel);

    channel = parse_ok("aeron:udp?endpoint=224.0.1.1:40456", NULL);
    AA_CHECK(0 == strcmp(channel->canonical_form, "UDP-0.0.0.0:0-224.0.1.1:40456"));
    AA_CHECK_EQ(channel->interface_index, 0);
    aa_udp_channel_delete(channel);

    channel = parse_ok("aeron:udp?endpoint=[FF01::FD]:40456", NULL);
    AA_CHECK(channel->is_multicast);
    check_address(&channel->remote_data, "[ff01::fd]:40456");
    check_address(&channel->remote_control, "[ff01::fe]:40456");
    AA_CHECK(0 == strcmp(channel->canonical_form, "UDP-[::]:0-[ff01::fd]:40456"));
    aa_udp_channel_delete(channel);

    check_rejected("aeron:udp?endpoint=224.0.1.2:40456", AA_ERROR_CODE_INVALID_CHANNEL, "odd byte");
    check_rejected("aeron:udp?endpoint=224.0.1.1:40456|control=127.0.0.1:1", AA_ERROR_CODE_INVALID_CHANNEL,
        "takes its control address from the endpoint");
    check_rejected("aeron:udp?endpoint=224.0.1.1:40456|interface=203.0.113.77", AA_ERROR_CODE_INVALID_CHANNEL,
        "no local network interface has an address in 203.0.113.77/32");
}

static void should_resolve_interfaces_by_prefix(void)
{
    aa_udp_channel_t *channel = parse_ok("aeron:udp?endpoint=127.0.0.1:40456|interface=127.0.0.0:40455/8", NULL);
    check_address(&channel->local_data, "127.0.0.1:40455");
    AA_CHECK_EQ(channel->interface_index, if_nametoindex("lo"));
    aa_udp_channel_delete(channel);
    check_rejected("aeron:udp?endpoint=127.0.0.1:1|interface=203.0.113.0/24", AA_ERROR_CODE_INVALID_CHANNEL,
        "no local network interface");
    check_rejected("aeron:udp?endpoint=127.0.0.1:1|interface=127.0.0.1/33", AA_ERROR_CODE_INVALID_CHANNEL, "at most /32");
}

static void should_take_socket_settings_from_uri_then_defaults(void)
{
    aa_udp_channel_t *channel = parse_ok("aeron:udp?endpoint=127.0.0.1:40456", NULL);
    AA_CHECK_EQ(channel->socket_rcvbuf_length, 128 * 1024);
    AA_CHECK_EQ(channel->socket_sndbuf_length, 0);
    AA_CHECK_EQ(channel->multicast_ttl, 0);
    AA_CHECK_EQ(channel->receiver_window_length, 0);
    aa_udp_channel_delete(channel);

    aa_udp_channel_defaults_t defaults = { 256 * 1024, 64 * 1024, 8 };
    channel = parse_ok("aeron:udp?endpoint=127.0.0.1:40456", &defaults);
    AA_CHECK_EQ(channel->socket_rcvbuf_length, 256 * 1024);
    AA_CHECK_EQ(channel->socket_sndbuf_length, 64 * 1024);
    AA_CHECK_EQ(channel->multicast_ttl, 8);
    aa_udp_channel_delete(channel);

    channel = parse_ok("aeron:udp?endpoint=127.0.0.1:40456|so-rcvbuf=64k|so-sndbuf=32k|ttl=4|rcv-wnd=16k", &defaults);
    AA_CHECK_EQ(channel->socket_rcvbuf_length, 64 * 1024);
    AA_CHECK_EQ(channel->socket_sndbuf_length, 32 * 1024);
    AA_CHECK_EQ(channel->multicast_ttl, 4);
    AA_CHECK_EQ(channel->receiver_window_length, 16 * 1024);
    aa_udp_channel_delete(channel);

    channel = parse_ok("aeron:udp?tags=7,9|control-mode=manual", NULL);
    AA_CHECK(channel->has_tag);
    AA_CHECK_EQ(channel->tag_id, 7);
    AA_CHECK_EQ(channel->control_mode, AA_UDP_CHANNEL_CONTROL_MODE_MANUAL);
    aa_udp_channel_delete(channel);
}

static void should_reject_bad_channels(void)
{
    check_rejected("aeron:ipc", AA_ERROR_CODE_INVALID_CHANNEL, "is not a UDP channel");
    check_rejected("aeron:udp?endpoint=localhost:1|mtu=1000", AA_ERROR_CODE_INVALID_CHANNEL, "multiple of 32");
    check_rejected("aeron:udp?endpoint=localhost:1|endpiont=x:1", AA_ERROR_CODE_INVALID_CHANNEL, "did you mean 'endpoint'");
    check_rejected("aeron:udp?endpoint=no-such-host.invalid:40123", AA_ERROR_CODE_UNKNOWN_HOST,
        "endpoint: cannot resolve host 'no-such-host.invalid'");
    AA_CHECK(NULL != strstr(aa_errmsg(), "channel aeron:udp?endpoint=no-such-host.invalid:40123"));
}

static void should_format_addresses(void)
{
    struct sockaddr_storage address;
    char text[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    AA_CHECK_EQ(aa_udp_channel_resolve_host("endpoint", "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", 65535, AF_UNSPEC,
        &address), 0);
    AA_CHECK(aa_udp_address_format(text, sizeof(text), &address) > 0);
    AA_CHECK(0 == strcmp(text, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"));
    AA_CHECK_EQ(aa_udp_address_format(text, 8, &address), -1);
    AA_CHECK_EQ(aa_udp_channel_resolve_host("endpoint", "localhost", 80, AF_UNSPEC, &address), 0);
    check_address(&address, "127.0.0.1:80");
    AA_CHECK_EQ(aa_udp_address_length(&address), sizeof(struct sockaddr_in));
    aa_udp_address_wildcard(&address, AF_INET6, 5);
    check_address(&address, "[::]:5");
    AA_CHECK(aa_udp_address_is_wildcard(&address));
    AA_CHECK(!aa_udp_address_is_multicast(&address));
}

/* A resolver that knows "pod-1" (IPv4) and "pod-2" (IPv6) and counts its calls. */
static int test_resolver_calls = 0;

static int test_resolve(
    void *state, const char *key, const char *host, int family, bool is_re_resolution, struct sockaddr_storage *address)
{
    (void)state;
    (void)family;
    (void)is_re_resolution;
    test_resolver_calls++;
    if (0 == strcmp(host, "pod-1"))
    {
        struct sockaddr_in *a4 = (struct sockaddr_in *)address;
        a4->sin_family = AF_INET;
        inet_pton(AF_INET, "10.1.2.3", &a4->sin_addr);
        return 0;
    }
    if (0 == strcmp(host, "pod-2"))
    {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)address;
        a6->sin6_family = AF_INET6;
        inet_pton(AF_INET6, "fd00::2", &a6->sin6_addr);
        return 0;
    }
    if (0 == strcmp(host, "says-why"))
    {
        AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST, "channel parameter %s: says-why is not in the table", key);
    }
    return -1;
}

static void test_resolver_close(aa_name_resolver_t *resolver)
{
    free(resolver);
}

static int test_resolver_supplier(
    aa_name_resolver_t **resolver, const char *init_args, const aa_name_resolver_context_t *context, void *clientd)
{
    AA_CHECK(NULL != clientd && 7 == *(int *)clientd);
    AA_CHECK(NULL != context && NULL != context->default_resolver && NULL != context->clock);
    if (NULL != init_args && 0 != strcmp(init_args, "ok"))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "test resolver: bad init args '%s'", init_args);
        return -1;
    }
    aa_name_resolver_t *r = calloc(1, sizeof(aa_name_resolver_t));
    AA_CHECK(NULL != r);
    r->name = "table";
    r->resolve = test_resolve;
    r->close = test_resolver_close;
    *resolver = r;
    return 0;
}

static const aa_name_resolver_table_t test_resolver_table = { test_resolver_supplier };

static void should_resolve_names_through_the_registered_resolver(void)
{
    static int clientd = 7;
    aa_name_resolver_t *resolver = NULL;
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, "table", NULL, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "unknown name resolver 'table'; registered: default, csv_table"));
    AA_CHECK_EQ(aa_registry_register(AA_STRATEGY_KIND_NAME_RESOLVER, "table", &test_resolver_table, &clientd, NULL), 0);
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, "table", "bad", NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "bad init args 'bad'"));
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, "table", "ok", NULL), 0);

    aa_udp_channel_defaults_t defaults = { 0, 0, 0, resolver };
    aa_udp_channel_t *channel = parse_ok("aeron:udp?endpoint=pod-1:40123", &defaults);
    check_address(&channel->remote_data, "10.1.2.3:40123");
    AA_CHECK(0 == strcmp(channel->canonical_form, "UDP-0.0.0.0:0-pod-1:40123"));
    aa_udp_channel_delete(channel);
    channel = parse_ok("aeron:udp?endpoint=pod-2:40124", &defaults);
    check_address(&channel->remote_data, "[fd00::2]:40124");
    aa_udp_channel_delete(channel);
    AA_CHECK_EQ(test_resolver_calls, 2);
    /* literals never reach the resolver */
    channel = parse_ok("aeron:udp?endpoint=127.0.0.1:40125", &defaults);
    aa_udp_channel_delete(channel);
    AA_CHECK_EQ(test_resolver_calls, 2);
    /* a failure says which resolver and name, or keeps the resolver's own message */
    AA_CHECK_EQ(aa_udp_channel_parse(&channel, "aeron:udp?endpoint=localhost:40126", &defaults), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_UNKNOWN_HOST);
    AA_CHECK(NULL != strstr(aa_errmsg(), "channel parameter endpoint: name resolver 'table' cannot resolve 'localhost'"));
    AA_CHECK_EQ(aa_udp_channel_parse(&channel, "aeron:udp?endpoint=says-why:40126", &defaults), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "says-why is not in the table"));
    aa_name_resolver_close(resolver);

    /* the default resolver takes no init args */
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, "default", "x", NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "takes no init args"));
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, NULL, NULL, NULL), 0);
    defaults.resolver = resolver;
    channel = parse_ok("aeron:udp?endpoint=localhost:40127", &defaults);
    check_address(&channel->remote_data, "127.0.0.1:40127");
    aa_udp_channel_delete(channel);
    aa_name_resolver_close(resolver);
}

static void should_map_names_with_the_csv_table_resolver(void)
{
    aa_name_resolver_t *resolver = NULL;
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, "csv_table", NULL, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "needs its table in AERON_NAME_RESOLVER_INIT_ARGS"));
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, "csv_table", "a,b,c,d", NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "row 'a,b,c,d' has 4 columns"));
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, "csv_table", "/nonexistent/table.csv", NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "cannot read file '/nonexistent/table.csv'"));

    AA_CHECK_EQ(aa_name_resolver_create(
        &resolver, "csv_table", "pod-1,127.0.0.2| # comment |pod-2:40200,127.0.0.3:40300,127.0.0.4:40400|alias,localhost",
        NULL), 0);
    struct sockaddr_storage address;
    static const struct { const char *uri_param; const char *host_and_port; bool is_re_resolution; const char *expected; }
    lookups[] =
    {
        /* a host row keeps the URI's port; a name:port row gives its own; re-lookups take the third column */
        { "endpoint", "pod-1:40123", false, "127.0.0.2:40123" },
        { "endpoint", "pod-2:40200", false, "127.0.0.3:40300" },
        { "endpoint", "pod-2:40200", true, "127.0.0.4:40400" },
        { "endpoint", "pod-1:40123", true, "127.0.0.2:40123" },
        /* a row mapping to a name, and names not in the table, go to the default resolver */
        { "control", "alias:40555", false, "127.0.0.1:40555" },
        { "endpoint", "localhost:40556", false, "127.0.0.1:40556" },
    };
    for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++)
    {
        AA_CHECK_EQ(aa_name_resolver_resolve_host_and_port(resolver, lookups[i].uri_param, lookups[i].host_and_port,
            AF_UNSPEC, lookups[i].is_re_resolution, &address), 0);
        check_address(&address, lookups[i].expected);
    }
    AA_CHECK_EQ(aa_name_resolver_resolve_host_and_port(
        resolver, "endpoint", "no-such-name.invalid:1", AF_UNSPEC, false, &address), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_UNKNOWN_HOST);
    aa_udp_channel_defaults_t defaults = { 0, 0, 0, resolver };
    aa_udp_channel_t *channel = parse_ok("aeron:udp?endpoint=pod-1:40123|control=pod-2:40200", &defaults);
    check_address(&channel->remote_data, "127.0.0.2:40123");
    check_address(&channel->local_data, "127.0.0.3:40300");
    aa_udp_channel_delete(channel);
    aa_name_resolver_close(resolver);

    /* a file is read again when it changes */
    char path[] = "/tmp/aa_csv_table_XXXXXX";
    int fd = mkstemp(path);
    AA_CHECK(fd >= 0);
    AA_CHECK(write(fd, "svc,127.0.0.5\n", 14) == 14);
    close(fd);
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, "csv_table", path, NULL), 0);
    AA_CHECK_EQ(aa_name_resolver_resolve_host_and_port(resolver, "endpoint", "svc:40001", AF_UNSPEC, false, &address), 0);
    check_address(&address, "127.0.0.5:40001");
    FILE *file = fopen(path, "w");
    AA_CHECK(NULL != file);
    fputs("# moved\nsvc,127.0.0.6\n", file);
    fclose(file);
    struct timespec times[2] = { { 0, UTIME_NOW }, { 1, 0 } };  /* a modification time surely different */
    AA_CHECK_EQ(utimensat(AT_FDCWD, path, times, 0), 0);
    AA_CHECK_EQ(aa_name_resolver_resolve_host_and_port(resolver, "endpoint", "svc:40001", AF_UNSPEC, true, &address), 0);
    check_address(&address, "127.0.0.6:40001");
    aa_name_resolver_close(resolver);
    unlink(path);
}

/* Parse once (docs/architecture.md, "Channels: parsed once"): the driver parses a command's channel
 * once and builds the UDP channel from that parse, which must not parse the text again. */
static void should_build_a_channel_from_a_parsed_uri_without_parsing_it_again(void)
{
    const char *text = "aeron:udp?endpoint=127.0.0.1:40123|so-rcvbuf=256k|alias=once";
    aa_uri_t uri;
    int before = uri_parses;
    AA_CHECK_EQ(aa_uri_parse(text, &uri), 0);
    AA_CHECK_EQ(uri_parses - before, 1);    /* the wrap is in place: the parse was counted */
    AA_CHECK_EQ(strcmp(uri.text, text), 0);

    aa_udp_channel_t *channel = NULL;
    AA_CHECK_EQ(aa_udp_channel_from_uri(&channel, &uri, NULL), 0);
    AA_CHECK_EQ(uri_parses - before, 1);
    AA_CHECK_EQ(strcmp(channel->uri.text, text), 0);
    AA_CHECK_EQ(channel->socket_rcvbuf_length, 256 * 1024);
    check_address(&channel->remote_data, "127.0.0.1:40123");

    /* the string form for tools and tests parses once, into the same channel */
    aa_udp_channel_t *from_text = parse_ok(text, NULL);
    AA_CHECK_EQ(uri_parses - before, 2);
    AA_CHECK(aa_udp_channel_equals(channel, from_text));
    AA_CHECK_EQ(strcmp(channel->canonical_form, from_text->canonical_form), 0);
    aa_udp_channel_delete(from_text);
    aa_udp_channel_delete(channel);

    /* an aeron:ipc URI is refused by its text, still without a parse */
    AA_CHECK_EQ(aa_uri_parse("aeron:ipc?alias=once", &uri), 0);
    before = uri_parses;
    channel = (aa_udp_channel_t *)1;
    AA_CHECK_EQ(aa_udp_channel_from_uri(&channel, &uri, NULL), -1);
    AA_CHECK(NULL == channel);
    AA_CHECK_EQ(strcmp(aa_errmsg(), "channel aeron:ipc?alias=once is not a UDP channel (aeron:udp?endpoint=host:port)"), 0);
    AA_CHECK_EQ(uri_parses - before, 0);
}

int main(void)
{
    AA_RUN(should_resolve_unicast_addresses);
    AA_RUN(should_canonicalise_unicast);
    AA_RUN(should_make_wildcard_channels_unique_unless_tagged);
    AA_RUN(should_suffix_only_channels_without_addresses_or_with_port_zero);
    AA_RUN(should_match_endpoints_by_channel_tag);
    AA_RUN(should_read_timestamp_offsets_and_refuse_overlaps);
    AA_RUN(should_compare_by_canonical_form);
    AA_RUN(should_detect_multicast_and_derive_control);
    AA_RUN(should_resolve_interfaces_by_prefix);
    AA_RUN(should_take_socket_settings_from_uri_then_defaults);
    AA_RUN(should_reject_bad_channels);
    AA_RUN(should_format_addresses);
    AA_RUN(should_resolve_names_through_the_registered_resolver);
    AA_RUN(should_map_names_with_the_csv_table_resolver);
    AA_RUN(should_build_a_channel_from_a_parsed_uri_without_parsing_it_again);
    return 0;
}
