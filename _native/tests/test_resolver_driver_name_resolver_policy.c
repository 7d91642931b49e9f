/* Whom the driver name resolver believes and how much it forwards (docs/security.md, "Name resolution
 * (gossip)"): frames from outside the allowed networks and names pointing outside them refused, a SELF
 * entry only from the address it claims, the cache and neighbour caps (known names still updated),
 * the gossip byte budget, and signed frames (a shared key from an owner-only file; unsigned, badly
 * signed, foreign-key and stale frames refused; two nodes with the key still find each other). Every
 * refusal is counted. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aa_test.h"
#include "aa_resolution_test.h"
#include "resolver/aa_driver_name_resolver.h"
#include "protocols/aa_resolution_frame.h"
#include "util/aa_error.h"

typedef struct
{
    aa_driver_name_resolver_t *r;
    volatile int64_t neighbors, cache, invalid, source_refused, entry_refused, cap_refused, throttled, unauthenticated;
}
node_t;

static aa_driver_name_resolver_config_t config_of(node_t *n, const char *name, const char *interface)
{
    memset(n, 0, sizeof(*n));
    aa_driver_name_resolver_config_t config;
    memset(&config, 0, sizeof(config));
    config.name = name;
    config.interface = interface;
    config.neighbors_counter = &n->neighbors;
    config.cache_entries_counter = &n->cache;
    config.invalid_packets_counter = &n->invalid;
    config.source_refused_counter = &n->source_refused;
    config.entry_refused_counter = &n->entry_refused;
    config.cap_refused_counter = &n->cap_refused;
    config.gossip_throttled_counter = &n->throttled;
    config.unauthenticated_counter = &n->unauthenticated;
    return config;
}

static void node_start(node_t *n, const aa_driver_name_resolver_config_t *config)
{
    if (aa_driver_name_resolver_init(&n->r, config) < 0)
    {
        fprintf(stderr, "init %s: %s\n", config->name, aa_errmsg());
        exit(1);
    }
}

static struct sockaddr_storage source(const char *ip, uint16_t port)
{
    struct sockaddr_storage address;
    memset(&address, 0, sizeof(address));
    struct sockaddr_in *in4 = (struct sockaddr_in *)&address;
    in4->sin_family = AF_INET;
    in4->sin_port = htons(port);
    inet_pton(AF_INET, ip, &in4->sin_addr);
    return address;
}

/* A frame of one IPv4 entry; returns its length. */
static size_t frame_of(uint8_t *buffer, size_t capacity, const char *name, const char *ip, uint16_t port, uint8_t flags)
{
    uint8_t address[4] = { 0 };
    inet_pton(AF_INET, ip, address);
    aa_resolution_entry_t e = test_resolution_entry(AA_RESOLUTION_TYPE_NAME_TO_IP4, flags, port, 0, address, name);
    aa_resolution_frame_begin(buffer, capacity);
    return (size_t)aa_resolution_frame_append(buffer, capacity, &e);
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

static void should_take_frames_and_names_from_the_allowed_networks_only(void)
{
    node_t a;
    aa_driver_name_resolver_config_t config = config_of(&a, "me", "127.0.0.1:0");
    config.allowed_networks = "127.0.0.1/32, fd00::/8";
    node_start(&a, &config);
    uint8_t frame[256];
    struct sockaddr_storage honest = source("127.0.0.1", 7001), outsider = source("127.0.0.2", 7001);

    size_t length = frame_of(frame, sizeof(frame), "pod-1", "127.0.0.1", 7001, AA_RESOLUTION_FLAG_SELF);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, &honest, 1000), 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "127.0.0.1:0"));
    /* the poisoned frame: from 127.0.0.2, pod-1 is at 127.0.0.99 (gossip, fresher than what we hold) */
    length = frame_of(frame, sizeof(frame), "pod-1", "127.0.0.99", 7001, 0);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, &outsider, 1500), -1);
    AA_CHECK_EQ(a.source_refused, 1);
    AA_CHECK_EQ(a.invalid, 0);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "127.0.0.1:0"));
    /* refused before validation: junk from outside is not even an invalid packet */
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, (const uint8_t *)"junk", 4, &outsider, 1500), -1);
    AA_CHECK_EQ(a.source_refused, 2);
    AA_CHECK_EQ(a.invalid, 0);
    /* from inside, a name pointing outside the networks is refused, entry by entry */
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, &honest, 1600), 0);
    AA_CHECK_EQ(a.entry_refused, 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "127.0.0.1:0"));
    AA_CHECK_EQ(aa_driver_name_resolver_cache_count(a.r), 1);
    AA_CHECK_EQ(aa_driver_name_resolver_neighbor_count(a.r), 1);
    aa_driver_name_resolver_close(a.r);

    /* a list that is no list of networks is refused at start, naming the option */
    config = config_of(&a, "me", "127.0.0.1:0");
    config.allowed_networks = "127.0.0.1/40";
    AA_CHECK_EQ(aa_driver_name_resolver_init(&a.r, &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_DRIVER_RESOLVER_ALLOWED_NETWORKS"));
}

static void should_take_a_self_entry_only_from_the_address_it_claims(void)
{
    node_t a;
    aa_driver_name_resolver_config_t config = config_of(&a, "me", "127.0.0.1:0");
    node_start(&a, &config);
    uint8_t frame[256];
    struct sockaddr_storage from = source("127.0.0.2", 7002);

    size_t length = frame_of(frame, sizeof(frame), "pod-1", "127.0.0.99", 7002, AA_RESOLUTION_FLAG_SELF);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, &from, 1000), 0);
    AA_CHECK_EQ(a.entry_refused, 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "(none)"));
    AA_CHECK_EQ(aa_driver_name_resolver_neighbor_count(a.r), 0);
    /* claiming its own address, or a wildcard (then the source is taken), it is believed */
    length = frame_of(frame, sizeof(frame), "pod-1", "127.0.0.2", 7002, AA_RESOLUTION_FLAG_SELF);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, &from, 1100), 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "127.0.0.2:0"));
    length = frame_of(frame, sizeof(frame), "pod-2", "0.0.0.0", 7003, AA_RESOLUTION_FLAG_SELF);
    struct sockaddr_storage other = source("127.0.0.3", 7003);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, &other, 1200), 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-2"), "127.0.0.3:0"));
    /* gossip (not SELF) about a third driver is what gossip is for: believed from any allowed source */
    length = frame_of(frame, sizeof(frame), "pod-3", "127.0.0.4", 7004, 0);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, &from, 1300), 1);
    AA_CHECK_EQ(a.entry_refused, 1);
    aa_driver_name_resolver_close(a.r);
}

static void should_cap_the_cache_and_the_neighbours_and_keep_known_names_current(void)
{
    node_t a;
    aa_driver_name_resolver_config_t config = config_of(&a, "me", "127.0.0.1:0");
    config.cache_max_entries = 3;
    config.neighbors_max = 2;
    node_start(&a, &config);
    uint8_t frame[256];
    char name[16];
    for (int i = 0; i < 5; i++)
    {
        snprintf(name, sizeof(name), "pod-%d", i);
        size_t length = frame_of(frame, sizeof(frame), name, "10.0.0.1", (uint16_t)(7000 + i), 0);
        aa_driver_name_resolver_on_datagram(a.r, frame, length, NULL, 1000 + i);
    }
    AA_CHECK_EQ(aa_driver_name_resolver_cache_count(a.r), 3);
    AA_CHECK_EQ(aa_driver_name_resolver_neighbor_count(a.r), 2);
    AA_CHECK_EQ(a.cap_refused, 3);   /* pod-2's neighbour, pod-3 and pod-4's names */
    AA_CHECK(0 == strcmp(address_of(&a, "pod-4"), "(none)"));
    /* a name already cached moves freely at the cap */
    size_t length = frame_of(frame, sizeof(frame), "pod-0", "10.0.0.9", 7000, 0);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, NULL, 2000), 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-0"), "10.0.0.9:0"));
    AA_CHECK_EQ(aa_driver_name_resolver_cache_count(a.r), 3);
    /* after 10 s of silence the flood is gone and a new name finds room */
    aa_driver_name_resolver_do_work(a.r, 11010);
    length = frame_of(frame, sizeof(frame), "pod-5", "10.0.0.5", 7005, 0);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, NULL, 11020), 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-5"), "10.0.0.5:0"));
    aa_driver_name_resolver_close(a.r);
}

/* Bytes of cache gossip (frames without a SELF entry) waiting on fd. */
static size_t gossip_bytes_received(int fd)
{
    size_t total = 0;
    uint8_t buffer[2048];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT)) > 0)
    {
        size_t offset = AA_RESOLUTION_FRAME_HEADER_LENGTH;
        aa_resolution_entry_t entry;
        if (aa_resolution_frame_next(buffer, (size_t)n, &offset, &entry) > 0 && 0 == (entry.res_flags & AA_RESOLUTION_FLAG_SELF))
        {
            total += (size_t)n;
        }
    }
    return total;
}

/* A node that knows 4 neighbours (sockets here) and 60 long names, gossiping once at now 0. */
static size_t gossip_round(int64_t rate_limit, int64_t *throttled)
{
    node_t a;
    aa_driver_name_resolver_config_t config = config_of(&a, "me", "127.0.0.1:0");
    config.gossip_rate_limit = rate_limit;
    node_start(&a, &config);
    int fds[4];
    uint8_t frame[256];
    for (int i = 0; i < 4; i++)
    {
        fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_storage any = source("127.0.0.1", 0);
        AA_CHECK_EQ(bind(fds[i], (struct sockaddr *)&any, sizeof(struct sockaddr_in)), 0);
        struct sockaddr_storage bound;
        socklen_t length = sizeof(bound);
        getsockname(fds[i], (struct sockaddr *)&bound, &length);
        for (int j = 0; j < 15; j++)
        {
            char name[128];
            snprintf(name, sizeof(name), "a-rather-long-driver-name-for-the-byte-budget-%d-%d", i, j);
            size_t n = frame_of(frame, sizeof(frame), name, "127.0.0.1", ntohs(((struct sockaddr_in *)&bound)->sin_port), 0);
            AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, n, NULL, 0), 1);
        }
    }
    AA_CHECK_EQ(aa_driver_name_resolver_neighbor_count(a.r), 4);
    aa_driver_name_resolver_do_work(a.r, 0);
    usleep(20000);
    size_t total = 0;
    for (int i = 0; i < 4; i++)
    {
        total += gossip_bytes_received(fds[i]);
        close(fds[i]);
    }
    *throttled = a.throttled;
    aa_driver_name_resolver_close(a.r);
    return total;
}

static void should_forward_no_more_than_the_gossip_budget(void)
{
    int64_t throttled = 0;
    size_t unlimited = gossip_round(0, &throttled);
    AA_CHECK_EQ(throttled, 0);
    AA_CHECK(unlimited > 15000);   /* 60 names of 64 bytes each, in 3 frames, to each of 4 neighbours */
    /* 2000 bytes a second: a round may spend 2 s worth, 4000 bytes, i.e. 3 frames of ~1290 bytes */
    size_t limited = gossip_round(2000, &throttled);
    AA_CHECK(limited > 0 && limited <= 4000);
    AA_CHECK(throttled >= 9);   /* of the 12 sends (3 frames x 4 neighbours) at most 3 fit */
}

static const char *write_key(const char *path, const char *bytes, mode_t mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    AA_CHECK(fd >= 0);
    AA_CHECK_EQ(write(fd, bytes, strlen(bytes)), (ssize_t)strlen(bytes));
    close(fd);
    AA_CHECK_EQ(chmod(path, mode), 0);
    return path;
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

static void should_take_only_frames_signed_with_the_shared_key(void)
{
    char key_path[64], other_path[64];
    snprintf(key_path, sizeof(key_path), "/tmp/aa-resolver-key-%d", (int)getpid());
    snprintf(other_path, sizeof(other_path), "/tmp/aa-resolver-key-other-%d", (int)getpid());
    write_key(key_path, "0123456789abcdef0123456789abcdef", 0400);
    write_key(other_path, "another key, as long as the first", 0600);

    node_t a, b;
    aa_driver_name_resolver_config_t config = config_of(&a, "pod-0", "127.0.0.1:0");
    config.hmac_key_file = key_path;
    node_start(&a, &config);
    char bootstrap[64];
    snprintf(bootstrap, sizeof(bootstrap), "127.0.0.1:%u", aa_udp_address_port(aa_driver_name_resolver_bound_address(a.r)));
    config = config_of(&b, "pod-1", "127.0.0.1:0");
    config.hmac_key_file = key_path;
    config.bootstrap_neighbors = bootstrap;
    node_start(&b, &config);
    node_t *both[] = { &a, &b };
    int64_t t0 = 1700000000000;   /* signatures carry the time: an epoch clock, as in the driver */
    pump(both, 2, t0);
    pump(both, 2, t0 + 1000);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-1"), "127.0.0.1:0"));
    AA_CHECK(0 == strcmp(address_of(&b, "pod-0"), "127.0.0.1:0"));
    AA_CHECK_EQ(a.unauthenticated + b.unauthenticated + a.invalid + b.invalid, 0);

    uint8_t frame[256];
    struct sockaddr_storage from = source("127.0.0.1", 7009);
    size_t length = frame_of(frame, sizeof(frame), "pod-9", "127.0.0.1", 7009, AA_RESOLUTION_FLAG_SELF);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, length, &from, t0 + 1100), -1);   /* unsigned */
    AA_CHECK_EQ(a.unauthenticated, 1);
    uint8_t key[] = "0123456789abcdef0123456789abcdef";
    int32_t sealed = aa_resolution_frame_sign(frame, sizeof(frame), (int32_t)length, key, 32, t0 + 1100);
    AA_CHECK_EQ(sealed, (int32_t)length + AA_RESOLUTION_HMAC_TRAILER_LENGTH);
    frame[sealed - 1] ^= 1;   /* a bad MAC */
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, (size_t)sealed, &from, t0 + 1100), -1);
    frame[sealed - 1] ^= 1;
    frame[length - 1] ^= 1;   /* the frame changed under its MAC (a name byte) */
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, (size_t)sealed, &from, t0 + 1100), -1);
    frame[length - 1] ^= 1;
    uint8_t other[] = "another key, as long as the first";
    aa_resolution_frame_sign(frame, sizeof(frame), (int32_t)length, other, strlen((const char *)other), t0 + 1100);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, (size_t)sealed, &from, t0 + 1100), -1);
    aa_resolution_frame_sign(frame, sizeof(frame), (int32_t)length, key, 32, t0 + 1100 - 31000);   /* stale */
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, (size_t)sealed, &from, t0 + 1100), -1);
    AA_CHECK_EQ(a.unauthenticated, 5);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-9"), "(none)"));
    /* signed with the key, it is believed; its entries date from the signature (a replay is no fresher) */
    aa_resolution_frame_sign(frame, sizeof(frame), (int32_t)length, key, 32, t0 + 1100 - 9000);
    AA_CHECK_EQ(aa_driver_name_resolver_on_datagram(a.r, frame, (size_t)sealed, &from, t0 + 1100), 1);
    AA_CHECK(0 == strcmp(address_of(&a, "pod-9"), "127.0.0.1:0"));
    aa_driver_name_resolver_do_work(a.r, t0 + 2101);   /* 10 s after it was signed, it is gone */
    AA_CHECK(0 == strcmp(address_of(&a, "pod-9"), "(none)"));
    AA_CHECK_EQ(a.unauthenticated, 5);
    aa_driver_name_resolver_close(a.r);
    aa_driver_name_resolver_close(b.r);

    /* the key file must be the owner's alone, and a key */
    config = config_of(&a, "pod-0", "127.0.0.1:0");
    config.hmac_key_file = write_key(key_path, "0123456789abcdef0123456789abcdef", 0644);
    AA_CHECK_EQ(aa_driver_name_resolver_init(&a.r, &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_DRIVER_RESOLVER_HMAC_KEY_FILE") &&
        NULL != strstr(aa_errmsg(), "mode 0644") && NULL != strstr(aa_errmsg(), "chmod 600"));
    config.hmac_key_file = write_key(key_path, "short", 0400);
    AA_CHECK_EQ(aa_driver_name_resolver_init(&a.r, &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "holds 5 bytes") && NULL != strstr(aa_errmsg(), "16 to 1024"));
    config.hmac_key_file = "/nonexistent/key";
    AA_CHECK_EQ(aa_driver_name_resolver_init(&a.r, &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "cannot open '/nonexistent/key'"));
    unlink(key_path);
    unlink(other_path);
}

int main(void)
{
    printf("test_resolver_driver_name_resolver_policy\n");
    AA_RUN(should_take_frames_and_names_from_the_allowed_networks_only);
    AA_RUN(should_take_a_self_entry_only_from_the_address_it_claims);
    AA_RUN(should_cap_the_cache_and_the_neighbours_and_keep_known_names_current);
    AA_RUN(should_forward_no_more_than_the_gossip_budget);
    AA_RUN(should_take_only_frames_signed_with_the_shared_key);
    return 0;
}
