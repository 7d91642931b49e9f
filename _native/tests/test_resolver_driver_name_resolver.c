/* The driver-name (gossip) resolver over real loopback sockets, driven by a test clock: bootstrap,
 * self announcement, transitive discovery by gossip, wildcard binding (source address taken),
 * named bootstrap looked up off the caller's thread, eviction after 10 s, fresher entries winning,
 * and invalid frames counted without touching the cache. */
#include <arpa/inet.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aa_test.h"
#include "aa_resolution_test.h"
#include "resolver/aa_driver_name_resolver.h"
#include "media/aa_udp_channel.h"
#include "protocols/aa_resolution_frame.h"
#include "util/aa_error.h"

typedef struct
{
    aa_driver_name_resolver_t *r;
    volatile int64_t neighbors, cache, invalid;
}
node_t;

static void node_init(node_t *n, const char *name, const char *interface, const char *bootstrap)
{
    memset(n, 0, sizeof(*n));
    aa_driver_name_resolver_config_t config;
    memset(&config, 0, sizeof(config));
    config.name = name;
    config.interface = interface;
    config.bootstrap_neighbors = bootstrap;
    config.neighbors_counter = &n->neighbors;
    config.cache_entries_counter = &n->cache;
    config.invalid_packets_counter = &n->invalid;
    if (aa_driver_name_resolver_init(&n->r, &config) < 0)
    {
        fprintf(stderr, "init %s: %s\n", name, aa_errmsg());
        exit(1);
    }
}

static void pump(node_t **nodes, size_t count, int64_t now_ms)
{
    for (int round = 0; round < 5; round++)
    {
        for (size_t i = 0; i < count; i++)
        {
            aa_driver_name_resolver_do_work(nodes[i]->r, now_ms);
        }
        usleep(2000);
    }
}

static const char *address_of(node_t *n, const char *name)
{
    static char text[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    struct sockaddr_storage address;
    if (1 != aa_driver_name_resolver_find(n->r, name, AF_UNSPEC, &address))
    {
        return "(none)";
    }
    aa_udp_address_format(text, sizeof(text), &address);
    return text;
}

static void should_discover_peers_through_a_bootstrap_and_gossip(void)
{
    node_t a, b, c;
    node_init(&a, "pod-0", "127.0.0.1:0", NULL);
    char bootstrap[64];
    snprintf(bootstrap, sizeof(bootstrap), "127.0.0.1:%u", aa_udp_address_port(aa_driver_name_resolver_bound_address(a.r)));
    node_init(&b, "pod-1", "0.0.0.0:0", bootstrap);   /* wildcard: A takes the source address */
    node_init(&c, "pod-2", "127.0.0.1:0", bootstrap);
    node_t *all[] = { &a, &b, &c };

    pump(all, 3, 0);
    AA_CHECK_EQ(a.neighbors, 2);
    AA_CHECK_EQ(a.cache, 2);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "127.0.0.1:0"));
    AA_CHECK(0 == strcmp(address_of(&a, "pod-2"), "127.0.0.1:0"));
    AA_CHECK_EQ(b.cache, 0);
    pump(all, 3, 1000);       /* A announces itself to its neighbours */
    AA_CHECK_EQ(b.cache, 1);
    AA_CHECK(0 == strcmp(address_of(&b, "pod-0"), "127.0.0.1:0"));
    AA_CHECK(0 == strcmp(address_of(&b, "pod-2"), "(none)"));
    pump(all, 3, 2000);       /* A gossips its cache: B and C learn of each other */
    AA_CHECK(0 == strcmp(address_of(&b, "pod-2"), "127.0.0.1:0"));
    AA_CHECK(0 == strcmp(address_of(&c, "pod-1"), "127.0.0.1:0"));
    AA_CHECK_EQ(b.neighbors, 2);
    AA_CHECK_EQ(c.neighbors, 2);
    AA_CHECK_EQ(a.invalid + b.invalid + c.invalid, 0);
    /* our own name resolves to our own address (a wildcard one too), not through the cache */
    AA_CHECK(0 == strcmp(address_of(&a, "pod-0"), "127.0.0.1:0"));
    AA_CHECK(0 == strcmp(address_of(&b, "pod-1"), "0.0.0.0:0"));
    char label[256];
    aa_driver_name_resolver_describe(b.r, label, sizeof(label));
    AA_CHECK(NULL != strstr(label, "bound 0.0.0.0:") && NULL != strstr(label, " bootstrap 127.0.0.1:"));

    /* C stops: after 10 s without its announcements A and B forget it, and keep each other */
    aa_driver_name_resolver_close(c.r);
    node_t *two[] = { &a, &b };
    for (int64_t t = 3000; t <= 13000; t += 1000)
    {
        pump(two, 2, t);
    }
    AA_CHECK(0 == strcmp(address_of(&a, "pod-2"), "(none)"));
    AA_CHECK(0 == strcmp(address_of(&b, "pod-2"), "(none)"));
    AA_CHECK_EQ(a.neighbors, 1);
    AA_CHECK_EQ(a.cache, 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "127.0.0.1:0"));
    aa_driver_name_resolver_close(a.r);
    aa_driver_name_resolver_close(b.r);
}

static size_t frame_of(uint8_t *buffer, const char *name, const char *ip, uint16_t port, int32_t age, uint8_t flags)
{
    uint8_t address[4] = { 0 };
    inet_pton(AF_INET, ip, address);
    aa_resolution_entry_t e = test_resolution_entry(AA_RESOLUTION_TYPE_NAME_TO_IP4, flags, port, age, address, name);
    aa_resolution_frame_begin(buffer, 256);
    return (size_t)aa_resolution_frame_append(buffer, 256, &e);
}

static void should_keep_the_freshest_entry_and_refuse_invalid_frames(void)
{
    node_t a;
    node_init(&a, "me", "127.0.0.1:0", NULL);
    uint8_t frame[256];
    size_t length = frame_of(frame, "pod-1", "10.0.0.2", 8050, 0, AA_RESOLUTION_FLAG_SELF);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, NULL, 5000), 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "10.0.0.2:0"));
    /* stale gossip about the old address (older than what we hold) does not undo it */
    length = frame_of(frame, "pod-1", "10.0.0.9", 8050, 3000, 0);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, NULL, 5100), 0);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "10.0.0.2:0"));
    /* a fresh announcement from a new address (the pod restarted) replaces it */
    length = frame_of(frame, "pod-1", "10.0.0.7", 8050, 0, AA_RESOLUTION_FLAG_SELF);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, NULL, 5200), 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "10.0.0.7:0"));
    AA_CHECK_EQ(aa_driver_name_resolver_cache_count(a.r), 1);

    /* a frame whose second entry is bad is refused whole: its good first entry is not applied */
    length = frame_of(frame, "pod-5", "10.0.0.5", 8050, 0, 0);
    aa_resolution_entry_t e;
    memset(&e, 0, sizeof(e));
    e.res_type = AA_RESOLUTION_TYPE_NAME_TO_IP4;
    e.udp_port = 1;
    e.name = (const uint8_t *)"pod-6";
    e.name_length = 5;
    int32_t two = aa_resolution_frame_append(frame, sizeof(frame), &e);
    frame[length + 12] = 0xFF;   /* second entry's name length: -1 */
    frame[length + 13] = 0xFF;
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, (size_t)two, NULL, 5300), -1);
    AA_CHECK_EQ(a.invalid, 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-5"), "(none)"));
    AA_CHECK_EQ(aa_driver_name_resolver_cache_count(a.r), 1);
    AA_CHECK_EQ(aa_driver_name_resolver_neighbor_count(a.r), 2);
    /* our own name and port told back to us are ignored */
    length = frame_of(frame, "me", "10.0.0.1", aa_udp_address_port(aa_driver_name_resolver_bound_address(a.r)), 0, 0);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, NULL, 5400), 0);
    aa_driver_name_resolver_close(a.r);
}

static void should_look_bootstrap_names_up_off_the_conductor(void)
{
    node_t a, b;
    node_init(&a, "pod-0", "127.0.0.1:0", NULL);
    char bootstrap[128];
    /* every neighbour of the list is used: one that never answers, then a named one */
    snprintf(bootstrap, sizeof(bootstrap), "127.0.0.1:9, localhost:%u",
        aa_udp_address_port(aa_driver_name_resolver_bound_address(a.r)));
    node_init(&b, "pod-1", "127.0.0.1:0", bootstrap);
    node_t *all[] = { &a, &b };
    int64_t t = 0;
    for (int i = 0; i < 200 && a.cache == 0; i++)
    {
        pump(all, 2, t);
        t += 1000;
    }
    AA_CHECK_EQ(a.cache, 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "127.0.0.1:0"));
    aa_driver_name_resolver_close(a.r);
    aa_driver_name_resolver_close(b.r);
}

static void should_gossip_over_ipv6(void)
{
    node_t a, b, c;
    node_init(&a, "v6-0", "[::1]:0", NULL);
    char bootstrap[64];
    snprintf(bootstrap, sizeof(bootstrap), "[::1]:%u", aa_udp_address_port(aa_driver_name_resolver_bound_address(a.r)));
    node_init(&b, "v6-1", "[::]:0", bootstrap);   /* wildcard: announced as ::, taken from the source */
    node_init(&c, "v6-2", "[::1]:0", bootstrap);
    node_t *all[] = { &a, &b, &c };
    pump(all, 3, 0);
    pump(all, 3, 1000);
    pump(all, 3, 2000);
    AA_CHECK(0 == strcmp(address_of(&a, "v6-1"), "[::1]:0"));
    AA_CHECK(0 == strcmp(address_of(&b, "v6-2"), "[::1]:0"));
    AA_CHECK(0 == strcmp(address_of(&c, "v6-1"), "[::1]:0"));
    AA_CHECK(0 == strcmp(address_of(&c, "v6-0"), "[::1]:0"));
    struct sockaddr_storage address;
    AA_CHECK_EQ(aa_driver_name_resolver_find(c.r, "v6-0", AF_INET6, &address), 1);
    AA_CHECK_EQ(address.ss_family, AF_INET6);
    AA_CHECK_EQ(a.invalid + b.invalid + c.invalid, 0);
    aa_driver_name_resolver_close(a.r);
    aa_driver_name_resolver_close(b.r);
    aa_driver_name_resolver_close(c.r);
}

static void should_refuse_bad_options(void)
{
    aa_driver_name_resolver_t *r;
    aa_driver_name_resolver_config_t config;
    memset(&config, 0, sizeof(config));
    config.name = "x";
    AA_CHECK_EQ(aa_driver_name_resolver_init(&r, &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_DRIVER_RESOLVER_INTERFACE"));
    config.interface = "127.0.0.1:0";
    config.bootstrap_neighbors = "127.0.0.1";
    AA_CHECK_EQ(aa_driver_name_resolver_init(&r, &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR"));
    config.bootstrap_neighbors = NULL;
    config.name = "a b";
    AA_CHECK_EQ(aa_driver_name_resolver_init(&r, &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_DRIVER_RESOLVER_NAME"));
    config.name = NULL;   /* the host name */
    AA_CHECK_EQ(aa_driver_name_resolver_init(&r, &config), 0);
    char host[256] = { 0 };
    gethostname(host, sizeof(host) - 1);
    AA_CHECK(0 == strcmp(aa_driver_name_resolver_name(r), host));
    aa_driver_name_resolver_close(r);
}

int main(void)
{
    AA_RUN(should_discover_peers_through_a_bootstrap_and_gossip);
    AA_RUN(should_keep_the_freshest_entry_and_refuse_invalid_frames);
    AA_RUN(should_look_bootstrap_names_up_off_the_conductor);
    AA_RUN(should_gossip_over_ipv6);
    AA_RUN(should_refuse_bad_options);
    return 0;
}
