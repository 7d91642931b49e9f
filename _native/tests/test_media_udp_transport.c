/* UDP transports on loopback: batched send and receive, EAGAIN, socket buffers, errors, the poller,
 * IPv6 (skipped with a reason when the host has no ::1). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aa_test.h"
#include "media/aa_udp_transport.h"
#include "util/aa_error.h"

#define BATCH 16
#define MESSAGE_CAPACITY 2048

typedef struct received_stct
{
    int count;
    int calls_with_many;
    uint32_t ids[256];
    size_t lengths[256];
    struct sockaddr_storage sources[256];
    aa_udp_transport_t *transports[256];
}
received_t;

static uint8_t receive_buffers[BATCH][MESSAGE_CAPACITY];

static void init_receive_datagrams(aa_udp_datagram_t *datagrams, size_t count, size_t capacity)
{
    for (size_t i = 0; i < count; i++)
    {
        memset(&datagrams[i], 0, sizeof(datagrams[i]));
        datagrams[i].buffer = receive_buffers[i];
        datagrams[i].capacity = capacity;
    }
}

static void on_datagram(void *clientd, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram)
{
    received_t *received = clientd;
    AA_CHECK(received->count < 256);
    uint32_t id = 0;
    AA_CHECK(datagram->length >= sizeof(id));
    memcpy(&id, datagram->buffer, sizeof(id));
    received->ids[received->count] = id;
    received->lengths[received->count] = datagram->length;
    received->sources[received->count] = datagram->address;
    received->transports[received->count] = transport;
    received->count++;
}

static aa_udp_channel_t *parse_channel(const char *uri)
{
    aa_udp_channel_t *channel = NULL;
    if (aa_udp_channel_parse(&channel, uri, NULL) < 0)
    {
        fprintf(stderr, "rejected %s: %s\n", uri, aa_errmsg());
        AA_CHECK(0);
    }
    return channel;
}

static void open_for_channel(aa_udp_transport_t *transport, const char *uri, aa_udp_transport_role_t role)
{
    aa_udp_channel_t *channel = parse_channel(uri);
    aa_udp_transport_params_t params;
    aa_udp_transport_params_from_channel(&params, channel, role);
    if (aa_udp_transport_init(transport, NULL, &params) < 0)
    {
        fprintf(stderr, "cannot open %s: %s\n", uri, aa_errmsg());
        AA_CHECK(0);
    }
    aa_udp_channel_delete(channel);
}

/* A receive transport on an ephemeral loopback port and a send transport aimed at it. */
static void open_pair(aa_udp_transport_t *receiver, aa_udp_transport_t *sender, const char *host, const char *extra)
{
    char uri[256];
    snprintf(uri, sizeof(uri), "aeron:udp?endpoint=%s:0%s", host, extra);
    open_for_channel(receiver, uri, AA_UDP_TRANSPORT_ROLE_RECEIVE);
    AA_CHECK(0 != aa_udp_address_port(&receiver->bound_address));
    snprintf(uri, sizeof(uri), "aeron:udp?endpoint=%s:%u%s", host, (unsigned)aa_udp_address_port(&receiver->bound_address), extra);
    open_for_channel(sender, uri, AA_UDP_TRANSPORT_ROLE_SEND);
    AA_CHECK(sender->has_destination);
}

static int send_numbered(aa_udp_transport_t *transport, uint32_t first, size_t count, size_t length)
{
    static uint8_t buffers[64][MESSAGE_CAPACITY];
    aa_udp_datagram_t datagrams[64];
    AA_CHECK(count <= 64 && length <= MESSAGE_CAPACITY && length >= 4);
    for (size_t i = 0; i < count; i++)
    {
        uint32_t id = first + (uint32_t)i;
        memset(buffers[i], (int)(id & 0xFF), length);
        memcpy(buffers[i], &id, sizeof(id));
        memset(&datagrams[i], 0, sizeof(datagrams[i]));
        datagrams[i].buffer = buffers[i];
        datagrams[i].length = length;
    }
    return aa_udp_transport_send(transport, datagrams, count);
}

static void receive_until(aa_udp_transport_t *transport, received_t *received, int expected)
{
    aa_udp_datagram_t datagrams[BATCH];
    for (int attempt = 0; attempt < 100000 && received->count < expected; attempt++)
    {
        init_receive_datagrams(datagrams, BATCH, MESSAGE_CAPACITY);
        int rc = aa_udp_transport_recv(transport, datagrams, BATCH, on_datagram, received);
        AA_CHECK(rc >= 0);
        if (rc > 1)
        {
            received->calls_with_many++;
        }
        if (0 == rc)
        {
            usleep(100);
        }
    }
    AA_CHECK_EQ(received->count, expected);
}

static void should_exchange_batched_datagrams(void)
{
    aa_udp_transport_t receiver, sender;
    open_pair(&receiver, &sender, "127.0.0.1", "");

    AA_CHECK_EQ(send_numbered(&sender, 100, 40, 1200), 40);
    received_t received;
    memset(&received, 0, sizeof(received));
    receive_until(&receiver, &received, 40);
    AA_CHECK(received.calls_with_many > 0);
    for (int i = 0; i < 40; i++)
    {
        AA_CHECK_EQ(received.ids[i], 100 + i);
        AA_CHECK_EQ(received.lengths[i], 1200);
        AA_CHECK_EQ(received.sources[i].ss_family, AF_INET);
        AA_CHECK_EQ(aa_udp_address_port(&received.sources[i]), aa_udp_address_port(&sender.bound_address));
        AA_CHECK(received.transports[i] == &receiver);
    }

    /* the receiver answers to the source address, as status messages and NAKs do */
    uint8_t reply[64] = { 0 };
    uint32_t id = 7;
    memcpy(reply, &id, sizeof(id));
    aa_udp_datagram_t answer;
    memset(&answer, 0, sizeof(answer));
    answer.buffer = reply;
    answer.length = sizeof(reply);
    answer.address = received.sources[0];
    answer.addr_len = aa_udp_address_length(&answer.address);
    AA_CHECK_EQ(aa_udp_transport_send(&receiver, &answer, 1), 1);
    memset(&received, 0, sizeof(received));
    receive_until(&sender, &received, 1);
    AA_CHECK_EQ(received.ids[0], 7);

    /* without a destination in the datagram or the transport nothing can be sent */
    AA_CHECK(!receiver.has_destination);
    answer.addr_len = 0;
    AA_CHECK_EQ(aa_udp_transport_send(&receiver, &answer, 1), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "no destination"));

    AA_CHECK_EQ(aa_udp_transport_close(&receiver), 0);
    AA_CHECK_EQ(aa_udp_transport_close(&sender), 0);
    AA_CHECK_EQ(aa_udp_transport_close(&sender), 0);
}

static void should_treat_eagain_as_no_work(void)
{
    aa_udp_transport_t receiver, sender;
    open_pair(&receiver, &sender, "127.0.0.1", "");
    aa_udp_datagram_t datagrams[BATCH];
    received_t received;
    memset(&received, 0, sizeof(received));
    for (int i = 0; i < 3; i++)
    {
        init_receive_datagrams(datagrams, BATCH, MESSAGE_CAPACITY);
        AA_CHECK_EQ(aa_udp_transport_recv(&receiver, datagrams, BATCH, on_datagram, &received), 0);
        AA_CHECK_EQ(aa_udp_transport_recv(&sender, datagrams, BATCH, on_datagram, &received), 0);
    }
    AA_CHECK_EQ(received.count, 0);
    AA_CHECK_EQ(send_numbered(&sender, 1, 1, 16), 1);
    receive_until(&receiver, &received, 1);
    init_receive_datagrams(datagrams, BATCH, MESSAGE_CAPACITY);
    AA_CHECK_EQ(aa_udp_transport_recv(&receiver, datagrams, BATCH, on_datagram, &received), 0);
    aa_udp_transport_close(&receiver);
    aa_udp_transport_close(&sender);
}

static void should_drop_and_count_truncated_datagrams(void)
{
    aa_udp_transport_t receiver, sender;
    open_pair(&receiver, &sender, "127.0.0.1", "");
    AA_CHECK_EQ(send_numbered(&sender, 1, 1, 1500), 1);
    AA_CHECK_EQ(send_numbered(&sender, 2, 1, 100), 1);
    aa_udp_datagram_t datagrams[BATCH];
    received_t received;
    memset(&received, 0, sizeof(received));
    for (int attempt = 0; attempt < 10000 && received.count < 1; attempt++)
    {
        init_receive_datagrams(datagrams, BATCH, 1000);
        AA_CHECK(aa_udp_transport_recv(&receiver, datagrams, BATCH, on_datagram, &received) >= 0);
        usleep(0 == received.count ? 100 : 0);
    }
    AA_CHECK_EQ(received.count, 1);
    AA_CHECK_EQ(received.ids[0], 2);
    AA_CHECK_EQ(receiver.truncated_datagrams, 1);
    aa_udp_transport_close(&receiver);
    aa_udp_transport_close(&sender);
}

static int32_t read_proc_int(const char *path, int32_t fallback)
{
    FILE *f = fopen(path, "r");
    long value = fallback;
    if (NULL != f)
    {
        if (1 != fscanf(f, "%ld", &value))
        {
            value = fallback;
        }
        fclose(f);
    }
    return (int32_t)value;
}

static void should_apply_socket_buffer_lengths(void)
{
    aa_udp_transport_t transport;
    open_for_channel(&transport, "aeron:udp?endpoint=127.0.0.1:0", AA_UDP_TRANSPORT_ROLE_RECEIVE);
    AA_CHECK(transport.socket_rcvbuf_length >= AA_UDP_SOCKET_SO_RCVBUF_DEFAULT);
    aa_udp_transport_close(&transport);

    int32_t rmem_max = read_proc_int("/proc/sys/net/core/rmem_max", 212992);
    int32_t wmem_max = read_proc_int("/proc/sys/net/core/wmem_max", 212992);
    int32_t rcvbuf = rmem_max < 512 * 1024 ? rmem_max : 512 * 1024;
    int32_t sndbuf = wmem_max < 256 * 1024 ? wmem_max : 256 * 1024;
    char uri[256];
    snprintf(uri, sizeof(uri), "aeron:udp?endpoint=127.0.0.1:0|so-rcvbuf=%d|so-sndbuf=%d", (int)rcvbuf, (int)sndbuf);
    open_for_channel(&transport, uri, AA_UDP_TRANSPORT_ROLE_RECEIVE);
    printf("(SO_RCVBUF %d -> %d, SO_SNDBUF %d -> %d) ", (int)rcvbuf, (int)transport.socket_rcvbuf_length,
        (int)sndbuf, (int)transport.socket_sndbuf_length);
    AA_CHECK(transport.socket_rcvbuf_length >= rcvbuf);
    AA_CHECK(transport.socket_sndbuf_length >= sndbuf);
    aa_udp_transport_close(&transport);

    aa_udp_transport_t small;
    open_for_channel(&small, "aeron:udp?endpoint=127.0.0.1:0|so-rcvbuf=8k|so-sndbuf=8k", AA_UDP_TRANSPORT_ROLE_RECEIVE);
    AA_CHECK(small.socket_rcvbuf_length < rcvbuf);
    AA_CHECK(small.socket_rcvbuf_length >= 8 * 1024);
    aa_udp_transport_close(&small);
}

static void should_report_bind_errors_with_the_address(void)
{
    aa_udp_transport_t first, second;
    open_for_channel(&first, "aeron:udp?endpoint=127.0.0.1:0", AA_UDP_TRANSPORT_ROLE_RECEIVE);
    char uri[128];
    char expected[64];
    unsigned port = aa_udp_address_port(&first.bound_address);
    snprintf(uri, sizeof(uri), "aeron:udp?endpoint=127.0.0.1:%u", port);
    snprintf(expected, sizeof(expected), "cannot bind to 127.0.0.1:%u", port);
    aa_udp_channel_t *channel = parse_channel(uri);
    aa_udp_transport_params_t params;
    aa_udp_transport_params_from_channel(&params, channel, AA_UDP_TRANSPORT_ROLE_RECEIVE);
    AA_CHECK_EQ(aa_udp_transport_init(&second, NULL, &params), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), expected));
    AA_CHECK(NULL != strstr(aa_errmsg(), "in use"));
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR);
    AA_CHECK_EQ(second.fd, -1);
    aa_udp_channel_delete(channel);
    aa_udp_transport_close(&first);
}

static void should_count_refused_sends_as_lost(void)
{
    aa_udp_transport_t gone, sender;
    open_for_channel(&gone, "aeron:udp?endpoint=127.0.0.1:0", AA_UDP_TRANSPORT_ROLE_RECEIVE);
    char uri[128];
    snprintf(uri, sizeof(uri), "aeron:udp?endpoint=127.0.0.1:%u", (unsigned)aa_udp_address_port(&gone.bound_address));
    aa_udp_transport_close(&gone);
    aa_udp_channel_t *channel = parse_channel(uri);
    aa_udp_transport_params_t params;
    aa_udp_transport_params_from_channel(&params, channel, AA_UDP_TRANSPORT_ROLE_SEND);
    params.connect = true;
    AA_CHECK_EQ(aa_udp_transport_init(&sender, NULL, &params), 0);
    AA_CHECK(sender.is_connected);
    for (int i = 0; i < 5; i++)
    {
        AA_CHECK_EQ(send_numbered(&sender, (uint32_t)i, 3, 32), 3);
        usleep(1000);
    }
    aa_udp_datagram_t datagrams[BATCH];
    received_t received;
    memset(&received, 0, sizeof(received));
    init_receive_datagrams(datagrams, BATCH, MESSAGE_CAPACITY);
    AA_CHECK_EQ(aa_udp_transport_recv(&sender, datagrams, BATCH, on_datagram, &received), 0);
    printf("(%llu refused) ", (unsigned long long)sender.refused_datagrams);
    aa_udp_channel_delete(channel);
    aa_udp_transport_close(&sender);
}

static void should_poll_many_transports(size_t transports_count)
{
    aa_udp_transport_t receivers[12], sender;
    aa_udp_transport_poller_t poller;
    AA_CHECK(transports_count <= 12);
    AA_CHECK_EQ(aa_udp_transport_poller_init(&poller), 0);
    open_for_channel(&sender, "aeron:udp?control-mode=manual", AA_UDP_TRANSPORT_ROLE_SEND);
    for (size_t i = 0; i < transports_count; i++)
    {
        open_for_channel(&receivers[i], "aeron:udp?endpoint=127.0.0.1:0", AA_UDP_TRANSPORT_ROLE_RECEIVE);
        AA_CHECK_EQ(aa_udp_transport_poller_add(&poller, &receivers[i]), 0);
    }
    uint8_t payload[4];
    aa_udp_datagram_t datagram;
    for (size_t i = 0; i < transports_count; i++)
    {
        uint32_t id = (uint32_t)i;
        memcpy(payload, &id, sizeof(id));
        memset(&datagram, 0, sizeof(datagram));
        datagram.buffer = payload;
        datagram.length = sizeof(payload);
        aa_udp_address_wildcard(&datagram.address, AF_INET, aa_udp_address_port(&receivers[i].bound_address));
        ((struct sockaddr_in *)&datagram.address)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        datagram.addr_len = aa_udp_address_length(&datagram.address);
        AA_CHECK_EQ(aa_udp_transport_send(&sender, &datagram, 1), 1);
    }
    received_t received;
    memset(&received, 0, sizeof(received));
    aa_udp_datagram_t datagrams[BATCH];
    for (int attempt = 0; attempt < 100000 && received.count < (int)transports_count; attempt++)
    {
        init_receive_datagrams(datagrams, BATCH, MESSAGE_CAPACITY);
        AA_CHECK(aa_udp_transport_poller_poll(&poller, datagrams, BATCH, on_datagram, &received) >= 0);
    }
    AA_CHECK_EQ(received.count, transports_count);
    for (int i = 0; i < received.count; i++)
    {
        AA_CHECK(received.transports[i] == &receivers[received.ids[i]]);
    }

    /* a removed transport is polled no more */
    AA_CHECK_EQ(aa_udp_transport_poller_remove(&poller, &receivers[0]), 0);
    AA_CHECK_EQ(poller.transports_count, transports_count - 1);
    aa_udp_address_wildcard(&datagram.address, AF_INET, aa_udp_address_port(&receivers[0].bound_address));
    ((struct sockaddr_in *)&datagram.address)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    AA_CHECK_EQ(aa_udp_transport_send(&sender, &datagram, 1), 1);
    usleep(2000);
    memset(&received, 0, sizeof(received));
    init_receive_datagrams(datagrams, BATCH, MESSAGE_CAPACITY);
    AA_CHECK_EQ(aa_udp_transport_poller_poll(&poller, datagrams, BATCH, on_datagram, &received), 0);

    for (size_t i = 0; i < transports_count; i++)
    {
        aa_udp_transport_close(&receivers[i]);
    }
    aa_udp_transport_close(&sender);
    aa_udp_transport_poller_close(&poller);
}

static void should_poll_few_transports_in_turn(void)
{
    should_poll_many_transports(3);
}

static void should_poll_many_transports_with_epoll(void)
{
    should_poll_many_transports(AA_UDP_TRANSPORT_POLLER_ITERATION_THRESHOLD + 4);
}

static bool ipv6_loopback_available(char *reason, size_t length)
{
    int fd = socket(AF_INET6, SOCK_DGRAM, 0);
    if (fd < 0)
    {
        snprintf(reason, length, "no IPv6 sockets: %s", strerror(errno));
        return false;
    }
    struct sockaddr_in6 address;
    memset(&address, 0, sizeof(address));
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_loopback;
    int rc = bind(fd, (struct sockaddr *)&address, sizeof(address));
    int bind_errno = errno;
    close(fd);
    if (rc < 0)
    {
        snprintf(reason, length, "cannot bind [::1]: %s", strerror(bind_errno));
        return false;
    }
    return true;
}

static void should_exchange_over_ipv6_loopback(void)
{
    char reason[128];
    if (!ipv6_loopback_available(reason, sizeof(reason)))
    {
        printf("skipped (%s) ", reason);
        return;
    }
    aa_udp_transport_t receiver, sender;
    open_pair(&receiver, &sender, "[::1]", "");
    AA_CHECK_EQ(receiver.bound_address.ss_family, AF_INET6);
    AA_CHECK_EQ(send_numbered(&sender, 500, 20, 600), 20);
    received_t received;
    memset(&received, 0, sizeof(received));
    receive_until(&receiver, &received, 20);
    for (int i = 0; i < 20; i++)
    {
        AA_CHECK_EQ(received.ids[i], 500 + i);
        AA_CHECK_EQ(received.sources[i].ss_family, AF_INET6);
    }
    aa_udp_transport_close(&receiver);
    aa_udp_transport_close(&sender);
}

typedef struct counting_bindings_state_stct
{
    int inits;
    int closes;
    int sends;
    int recvs;
}
counting_bindings_state_t;

static int counting_init(const aa_udp_transport_bindings_t *self, aa_udp_transport_t *t, const aa_udp_transport_params_t *p)
{
    (void)t;
    (void)p;
    ((counting_bindings_state_t *)self->state)->inits++;
    return 0;
}

static int counting_close(const aa_udp_transport_bindings_t *self, aa_udp_transport_t *t)
{
    (void)t;
    ((counting_bindings_state_t *)self->state)->closes++;
    return 0;
}

static int counting_send(const aa_udp_transport_bindings_t *self, aa_udp_transport_t *t, aa_udp_datagram_t *d, size_t n)
{
    (void)t;
    (void)d;
    ((counting_bindings_state_t *)self->state)->sends += (int)n;
    return (int)n;
}

static int counting_recv(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *t, aa_udp_datagram_t *d, size_t n,
    aa_udp_transport_recv_handler_t handler, void *clientd)
{
    (void)n;
    ((counting_bindings_state_t *)self->state)->recvs++;
    d[0].length = 4;
    memset(d[0].buffer, 0, 4);
    handler(clientd, t, &d[0]);
    return 1;
}

static void should_let_other_bindings_stand_in(void)
{
    counting_bindings_state_t state = { 0, 0, 0, 0 };
    aa_udp_transport_bindings_t bindings =
    {
        "counting", counting_init, counting_close, counting_send, counting_recv, &state
    };
    aa_udp_transport_params_t params;
    memset(&params, 0, sizeof(params));
    aa_udp_transport_t transport;
    AA_CHECK_EQ(aa_udp_transport_init(&transport, &bindings, &params), 0);
    AA_CHECK_EQ(transport.fd, -1);
    AA_CHECK_EQ(send_numbered(&transport, 0, 5, 8), 5);
    aa_udp_transport_poller_t poller;
    AA_CHECK_EQ(aa_udp_transport_poller_init(&poller), 0);
    AA_CHECK_EQ(aa_udp_transport_poller_add(&poller, &transport), 0);
    received_t received;
    memset(&received, 0, sizeof(received));
    aa_udp_datagram_t datagrams[BATCH];
    init_receive_datagrams(datagrams, BATCH, MESSAGE_CAPACITY);
    AA_CHECK_EQ(aa_udp_transport_poller_poll(&poller, datagrams, BATCH, on_datagram, &received), 1);
    AA_CHECK_EQ(aa_udp_transport_close(&transport), 0);
    AA_CHECK_EQ(state.inits, 1);
    AA_CHECK_EQ(state.sends, 5);
    AA_CHECK_EQ(state.recvs, 1);
    AA_CHECK_EQ(state.closes, 1);
    aa_udp_transport_poller_close(&poller);
}

static void should_fill_params_per_role(void)
{
    aa_udp_channel_t *channel = parse_channel("aeron:udp?endpoint=127.0.0.1:40456|interface=127.0.0.1:40455|so-sndbuf=64k");
    aa_udp_transport_params_t params;
    char text[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    aa_udp_transport_params_from_channel(&params, channel, AA_UDP_TRANSPORT_ROLE_SEND);
    aa_udp_address_format(text, sizeof(text), &params.bind_address);
    AA_CHECK(0 == strcmp(text, "127.0.0.1:40455"));
    aa_udp_address_format(text, sizeof(text), &params.destination);
    AA_CHECK(0 == strcmp(text, "127.0.0.1:40456"));
    AA_CHECK_EQ(params.socket_sndbuf_length, 64 * 1024);
    AA_CHECK_EQ(params.socket_rcvbuf_length, AA_UDP_SOCKET_SO_RCVBUF_DEFAULT);
    AA_CHECK(!params.is_multicast && !params.reuse_address);
    aa_udp_transport_params_from_channel(&params, channel, AA_UDP_TRANSPORT_ROLE_RECEIVE);
    aa_udp_address_format(text, sizeof(text), &params.bind_address);
    AA_CHECK(0 == strcmp(text, "127.0.0.1:40456"));
    AA_CHECK_EQ(params.destination.ss_family, 0);
    aa_udp_channel_delete(channel);

    channel = parse_channel("aeron:udp?endpoint=224.0.1.1:40456|interface=127.0.0.1|ttl=3");
    aa_udp_transport_params_from_channel(&params, channel, AA_UDP_TRANSPORT_ROLE_RECEIVE);
    AA_CHECK(params.is_multicast && params.reuse_address && params.multicast_loop);
    AA_CHECK_EQ(params.multicast_ttl, 3);
    aa_udp_address_format(text, sizeof(text), &params.bind_address);
    AA_CHECK(0 == strcmp(text, "224.0.1.1:40456"));   /* bound to the group: its datagrams only */
    aa_udp_address_format(text, sizeof(text), &params.multicast_group);
    AA_CHECK(0 == strcmp(text, "224.0.1.1:40456"));
    aa_udp_address_format(text, sizeof(text), &params.destination);
    AA_CHECK(0 == strcmp(text, "224.0.1.2:40456"));
    aa_udp_transport_params_from_channel(&params, channel, AA_UDP_TRANSPORT_ROLE_SEND);
    aa_udp_address_format(text, sizeof(text), &params.bind_address);
    AA_CHECK(0 == strcmp(text, "224.0.1.2:40456"));
    aa_udp_address_format(text, sizeof(text), &params.multicast_group);
    AA_CHECK(0 == strcmp(text, "224.0.1.2:40456"));
    aa_udp_address_format(text, sizeof(text), &params.destination);
    AA_CHECK(0 == strcmp(text, "224.0.1.1:40456"));
    aa_udp_channel_delete(channel);
}

int main(void)
{
    AA_RUN(should_exchange_batched_datagrams);
    AA_RUN(should_treat_eagain_as_no_work);
    AA_RUN(should_drop_and_count_truncated_datagrams);
    AA_RUN(should_apply_socket_buffer_lengths);
    AA_RUN(should_report_bind_errors_with_the_address);
    AA_RUN(should_count_refused_sends_as_lost);
    AA_RUN(should_poll_few_transports_in_turn);
    AA_RUN(should_poll_many_transports_with_epoll);
    AA_RUN(should_exchange_over_ipv6_loopback);
    AA_RUN(should_let_other_bindings_stand_in);
    AA_RUN(should_fill_params_per_role);
    return 0;
}
