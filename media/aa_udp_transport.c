#include <errno.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "media/aa_udp_transport.h"
#include "util/aa_error.h"

static int aa_udp_transport_error(aa_udp_transport_t *transport, const char *what, int error)
{
    char address[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH] = "an unbound socket";
    if (0 != transport->bound_address.ss_family &&
        aa_udp_address_format(address, sizeof(address), &transport->bound_address) < 0)
    {
        snprintf(address, sizeof(address), "%s", "?");
    }
    AA_SET_ERR(AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR, "UDP transport %s: %s failed: %s", address, what, strerror(error));
    return -1;
}

static int aa_udp_socket_option(aa_udp_transport_t *transport, int level, int name, int value, const char *what)
{
    if (setsockopt(transport->fd, level, name, &value, sizeof(value)) < 0)
    {
        return aa_udp_transport_error(transport, what, errno);
    }
    return 0;
}

/* A multicast join or send failing because the kernel has no route for the group. */
static bool aa_udp_is_no_multicast_route(int error)
{
    return ENODEV == error || ENETUNREACH == error || EADDRNOTAVAIL == error;
}

static int aa_udp_multicast_error(aa_udp_transport_t *transport, const aa_udp_transport_params_t *params, const char *what, int error)
{
    if (!aa_udp_is_no_multicast_route(error))
    {
        return aa_udp_transport_error(transport, what, error);
    }
    char group[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH] = "?";
    aa_udp_address_format(group, sizeof(group), &params->multicast_group);
    bool v4 = AF_INET == params->multicast_group.ss_family;
    AA_SET_ERR(AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR,
        "UDP transport: %s for %s failed: %s: this host has no multicast route for the group; add one "
        "(ip %sroute add %s dev <interface>) or choose the interface with interface=<an address of it> on the channel",
        what, group, strerror(error), v4 ? "" : "-6 ", v4 ? "224.0.0.0/4" : "ff00::/8");
    return -1;
}

static int aa_udp_socket_join(aa_udp_transport_t *transport, const aa_udp_transport_params_t *params)
{
    if (AF_INET == params->bind_address.ss_family)
    {
        struct in_addr interface_address = { htonl(INADDR_ANY) };
        if (AF_INET == params->interface_address.ss_family)
        {
            interface_address = ((const struct sockaddr_in *)&params->interface_address)->sin_addr;
        }
        if (AF_INET == params->multicast_group.ss_family)
        {
            struct ip_mreq request;
            request.imr_multiaddr = ((const struct sockaddr_in *)&params->multicast_group)->sin_addr;
            request.imr_interface = interface_address;
            if (setsockopt(transport->fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &request, sizeof(request)) < 0)
            {
                return aa_udp_multicast_error(transport, params, "joining the multicast group (IP_ADD_MEMBERSHIP)", errno);
            }
        }
        if (INADDR_ANY != interface_address.s_addr &&
            setsockopt(transport->fd, IPPROTO_IP, IP_MULTICAST_IF, &interface_address, sizeof(interface_address)) < 0)
        {
            return aa_udp_transport_error(transport, "choosing the multicast interface (IP_MULTICAST_IF)", errno);
        }
        if ((params->multicast_ttl > 0 &&
            aa_udp_socket_option(transport, IPPROTO_IP, IP_MULTICAST_TTL, params->multicast_ttl, "IP_MULTICAST_TTL") < 0) ||
            aa_udp_socket_option(transport, IPPROTO_IP, IP_MULTICAST_LOOP, params->multicast_loop, "IP_MULTICAST_LOOP") < 0)
        {
            return -1;
        }
        return 0;
    }

    if (AF_INET6 == params->multicast_group.ss_family)
    {
        struct ipv6_mreq request;
        request.ipv6mr_multiaddr = ((const struct sockaddr_in6 *)&params->multicast_group)->sin6_addr;
        request.ipv6mr_interface = params->interface_index;
        if (setsockopt(transport->fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &request, sizeof(request)) < 0)
        {
            return aa_udp_multicast_error(transport, params, "joining the multicast group (IPV6_JOIN_GROUP)", errno);
        }
    }
    if ((0 != params->interface_index &&
        aa_udp_socket_option(transport, IPPROTO_IPV6, IPV6_MULTICAST_IF, (int)params->interface_index, "IPV6_MULTICAST_IF") < 0) ||
        (params->multicast_ttl > 0 &&
        aa_udp_socket_option(transport, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, params->multicast_ttl, "IPV6_MULTICAST_HOPS") < 0) ||
        aa_udp_socket_option(transport, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, params->multicast_loop, "IPV6_MULTICAST_LOOP") < 0)
    {
        return -1;
    }
    return 0;
}

static int aa_udp_socket_read_buffer_lengths(aa_udp_transport_t *transport)
{
    int value = 0;
    socklen_t length = sizeof(value);
    if (getsockopt(transport->fd, SOL_SOCKET, SO_RCVBUF, &value, &length) < 0)
    {
        return aa_udp_transport_error(transport, "reading SO_RCVBUF", errno);
    }
    transport->socket_rcvbuf_length = value;
    length = sizeof(value);
    if (getsockopt(transport->fd, SOL_SOCKET, SO_SNDBUF, &value, &length) < 0)
    {
        return aa_udp_transport_error(transport, "reading SO_SNDBUF", errno);
    }
    transport->socket_sndbuf_length = value;
    return 0;
}

static int aa_udp_socket_init(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, const aa_udp_transport_params_t *params)
{
    (void)self;
    int family = params->bind_address.ss_family;
    char address[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    if (AF_INET != family && AF_INET6 != family)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s", "UDP transport: the bind address is neither IPv4 nor IPv6");
        return -1;
    }
    transport->fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (transport->fd < 0)
    {
        return aa_udp_transport_error(transport, AF_INET6 == family ? "opening an IPv6 socket" : "opening a socket", errno);
    }
    if ((params->reuse_address &&
        aa_udp_socket_option(transport, SOL_SOCKET, SO_REUSEADDR, 1, "setting SO_REUSEADDR") < 0) ||
        (params->socket_rcvbuf_length > 0 &&
        aa_udp_socket_option(transport, SOL_SOCKET, SO_RCVBUF, params->socket_rcvbuf_length, "setting SO_RCVBUF") < 0) ||
        (params->socket_sndbuf_length > 0 &&
        aa_udp_socket_option(transport, SOL_SOCKET, SO_SNDBUF, params->socket_sndbuf_length, "setting SO_SNDBUF") < 0))
    {
        goto error;
    }
    if (bind(transport->fd, (const struct sockaddr *)&params->bind_address, aa_udp_address_length(&params->bind_address)) < 0)
    {
        int bind_errno = errno;
        if (aa_udp_address_format(address, sizeof(address), &params->bind_address) < 0)
        {
            snprintf(address, sizeof(address), "%s", "?");
        }
        AA_SET_ERR(AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR, "UDP transport: cannot bind to %s: %s%s",
            address, strerror(bind_errno),
            EADDRINUSE == bind_errno ? " (another socket, perhaps another driver, has this address)" :
            EADDRNOTAVAIL == bind_errno ? " (no local interface has this address)" : "");
        goto error;
    }
    socklen_t bound_length = sizeof(transport->bound_address);
    if (getsockname(transport->fd, (struct sockaddr *)&transport->bound_address, &bound_length) < 0)
    {
        aa_udp_transport_error(transport, "getsockname", errno);
        goto error;
    }
    if (params->is_multicast && aa_udp_socket_join(transport, params) < 0)
    {
        goto error;
    }
    /* media-rcv-ts-offset (reference wave 3, section 3): as the C driver, SO_TIMESTAMPNS for the kernel's
     * software receive time and SO_TIMESTAMPING asking for hardware ones */
    if (params->media_rcv_timestamps)
    {
        if (aa_udp_socket_option(transport, SOL_SOCKET, SO_TIMESTAMPNS, 1, "setsockopt(SO_TIMESTAMPNS)") < 0 ||
            aa_udp_socket_option(transport, SOL_SOCKET, SO_TIMESTAMPING, SOF_TIMESTAMPING_RX_HARDWARE,
                "setsockopt(SO_TIMESTAMPING)") < 0)
        {
            goto error;
        }
        transport->media_rcv_timestamps = true;
    }
    if (0 != params->destination.ss_family)
    {
        transport->destination = params->destination;
        transport->has_destination = true;
        if (params->connect)
        {
            if (connect(transport->fd, (const struct sockaddr *)&transport->destination,
                aa_udp_address_length(&transport->destination)) < 0)
            {
                aa_udp_transport_error(transport, "connect", errno);
                goto error;
            }
            transport->is_connected = true;
        }
    }
    if (aa_udp_socket_read_buffer_lengths(transport) < 0)
    {
        goto error;
    }
    return 0;

error:
    close(transport->fd);
    transport->fd = -1;
    return -1;
}

static int aa_udp_socket_close(const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport)
{
    (void)self;
    if (transport->fd >= 0)
    {
        close(transport->fd);
        transport->fd = -1;
    }
    return 0;
}

static int aa_udp_socket_send(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count)
{
    (void)self;
    struct mmsghdr messages[AA_UDP_TRANSPORT_MAX_BATCH];
    struct iovec vectors[AA_UDP_TRANSPORT_MAX_BATCH];
    size_t n = count < AA_UDP_TRANSPORT_MAX_BATCH ? count : AA_UDP_TRANSPORT_MAX_BATCH;
    for (size_t i = 0; i < n; i++)
    {
        aa_udp_datagram_t *datagram = &datagrams[i];
        vectors[i].iov_base = datagram->buffer;
        vectors[i].iov_len = datagram->length;
        memset(&messages[i], 0, sizeof(messages[i]));
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        if (0 != datagram->addr_len)
        {
            messages[i].msg_hdr.msg_name = &datagram->address;
            messages[i].msg_hdr.msg_namelen = datagram->addr_len;
        }
        else if (!transport->is_connected)
        {
            if (!transport->has_destination)
            {
                AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s",
                    "UDP transport: a datagram has no destination and the transport has no default one");
                return -1;
            }
            messages[i].msg_hdr.msg_name = &transport->destination;
            messages[i].msg_hdr.msg_namelen = aa_udp_address_length(&transport->destination);
        }
    }

    size_t sent = 0;
    while (sent < n)
    {
        int rc = sendmmsg(transport->fd, &messages[sent], (unsigned int)(n - sent), 0);
        if (rc > 0)
        {
            sent += (size_t)rc;
            continue;
        }
        if (rc < 0 && EINTR == errno)
        {
            continue;
        }
        if (rc < 0 && ECONNREFUSED == errno)
        {
            transport->refused_datagrams++;
            sent++;
            continue;
        }
        if (rc < 0 && (EAGAIN == errno || EWOULDBLOCK == errno || ENOBUFS == errno))
        {
            break;
        }
        return aa_udp_transport_error(transport, "sendmmsg", rc < 0 ? errno : EIO);
    }
    return (int)sent;
}

/* A failed recvmmsg: nothing to read, or an error. */
static int aa_udp_socket_recv_failed(aa_udp_transport_t *transport)
{
    if (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno)
    {
        return 0;
    }
    if (ECONNREFUSED == errno)
    {
        transport->refused_datagrams++;
        return 0;
    }
    return aa_udp_transport_error(transport, "recvmmsg", errno);
}

/* recvmmsg with a control buffer per datagram for SCM_TIMESTAMPNS (media-rcv-ts-offset); the plain path
 * below stays as it is for every other transport. */
static int aa_udp_socket_recv_timestamped(
    aa_udp_transport_t *transport, struct mmsghdr *messages, aa_udp_datagram_t *datagrams, size_t n,
    aa_udp_transport_recv_handler_t handler, void *clientd)
{
    union
    {
        char buffer[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    }
    control[AA_UDP_TRANSPORT_MAX_BATCH];
    for (size_t i = 0; i < n; i++)
    {
        messages[i].msg_hdr.msg_control = control[i].buffer;
        messages[i].msg_hdr.msg_controllen = sizeof(control[i].buffer);
    }
    int rc = recvmmsg(transport->fd, messages, (unsigned int)n, MSG_DONTWAIT, NULL);
    if (rc < 0)
    {
        return aa_udp_socket_recv_failed(transport);
    }
    int delivered = 0;
    for (int i = 0; i < rc; i++)
    {
        if (0 != (messages[i].msg_hdr.msg_flags & MSG_TRUNC))
        {
            transport->truncated_datagrams++;
            continue;
        }
        datagrams[i].media_rcv_timestamp_ns = 0;
        for (struct cmsghdr *cmsg = CMSG_FIRSTHDR(&messages[i].msg_hdr); NULL != cmsg;
            cmsg = CMSG_NXTHDR(&messages[i].msg_hdr, cmsg))
        {
            if (SOL_SOCKET == cmsg->cmsg_level && SCM_TIMESTAMPNS == cmsg->cmsg_type &&
                CMSG_LEN(sizeof(struct timespec)) == cmsg->cmsg_len)
            {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(cmsg), sizeof(ts));
                datagrams[i].media_rcv_timestamp_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
            }
        }
        datagrams[i].length = messages[i].msg_len;
        datagrams[i].addr_len = messages[i].msg_hdr.msg_namelen;
        handler(clientd, transport, &datagrams[i]);
        delivered++;
    }
    return delivered;
}

static int aa_udp_socket_recv(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count,
    aa_udp_transport_recv_handler_t handler, void *clientd)
{
    (void)self;
    struct mmsghdr messages[AA_UDP_TRANSPORT_MAX_BATCH];
    struct iovec vectors[AA_UDP_TRANSPORT_MAX_BATCH];
    size_t n = count < AA_UDP_TRANSPORT_MAX_BATCH ? count : AA_UDP_TRANSPORT_MAX_BATCH;
    for (size_t i = 0; i < n; i++)
    {
        vectors[i].iov_base = datagrams[i].buffer;
        vectors[i].iov_len = datagrams[i].capacity;
        memset(&messages[i], 0, sizeof(messages[i]));
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_name = &datagrams[i].address;
        messages[i].msg_hdr.msg_namelen = sizeof(datagrams[i].address);
    }
    if (transport->media_rcv_timestamps)
    {
        return aa_udp_socket_recv_timestamped(transport, messages, datagrams, n, handler, clientd);
    }
    int rc = recvmmsg(transport->fd, messages, (unsigned int)n, MSG_DONTWAIT, NULL);
    if (rc < 0)
    {
        return aa_udp_socket_recv_failed(transport);
    }
    int delivered = 0;
    for (int i = 0; i < rc; i++)
    {
        if (0 != (messages[i].msg_hdr.msg_flags & MSG_TRUNC))
        {
            transport->truncated_datagrams++;
            continue;
        }
        datagrams[i].length = messages[i].msg_len;
        datagrams[i].addr_len = messages[i].msg_hdr.msg_namelen;
        handler(clientd, transport, &datagrams[i]);
        delivered++;
    }
    return delivered;
}

static const aa_udp_transport_bindings_t aa_udp_transport_socket_bindings_value =
{
    "socket", aa_udp_socket_init, aa_udp_socket_close, aa_udp_socket_send, aa_udp_socket_recv, NULL
};

const aa_udp_transport_bindings_t *aa_udp_transport_socket_bindings(void)
{
    return &aa_udp_transport_socket_bindings_value;
}

void aa_udp_transport_params_from_channel(
    aa_udp_transport_params_t *params, const aa_udp_channel_t *channel, aa_udp_transport_role_t role)
{
    memset(params, 0, sizeof(*params));
    params->socket_rcvbuf_length = channel->socket_rcvbuf_length;
    params->socket_sndbuf_length = channel->socket_sndbuf_length;
    params->multicast_ttl = channel->multicast_ttl;
    params->multicast_loop = true;
    params->media_rcv_timestamps = AA_UDP_TRANSPORT_ROLE_RECEIVE == role &&
        AA_UDP_CHANNEL_TIMESTAMP_OFF != channel->media_rcv_timestamp_offset;
    if (channel->is_multicast)
    {
        bool is_send = AA_UDP_TRANSPORT_ROLE_SEND == role;
        const struct sockaddr_storage *joined = is_send ? &channel->remote_control : &channel->remote_data;
        params->is_multicast = true;
        params->reuse_address = true;
        params->interface_address = channel->local_data;
        params->interface_index = channel->interface_index;
        params->multicast_group = *joined;
        params->destination = is_send ? channel->remote_data : channel->remote_control;
        /* Bound to the group itself (as Aeron on Linux): the socket receives that group's datagrams only,
         * not the other group of the channel nor unicast traffic to the port. */
        params->bind_address = *joined;
        return;
    }
    if (AA_UDP_TRANSPORT_ROLE_SEND == role)
    {
        params->bind_address = channel->local_data;
        if (channel->has_explicit_endpoint && !channel->is_remote_unresolved)
        {
            params->destination = channel->remote_data;
        }
    }
    else
    {
        params->bind_address = channel->remote_data;
        if (channel->has_explicit_control)
        {
            params->destination = channel->local_control;
        }
    }
}

int aa_udp_transport_init(
    aa_udp_transport_t *transport, const aa_udp_transport_bindings_t *bindings, const aa_udp_transport_params_t *params)
{
    memset(transport, 0, sizeof(*transport));
    transport->fd = -1;
    transport->bindings = NULL == bindings ? aa_udp_transport_socket_bindings() : bindings;
    return transport->bindings->init_func(transport->bindings, transport, params);
}

int aa_udp_transport_close(aa_udp_transport_t *transport)
{
    if (NULL == transport->bindings)
    {
        return 0;
    }
    int rc = transport->bindings->close_func(transport->bindings, transport);
    transport->bindings = NULL;
    return rc;
}

int aa_udp_transport_send(aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count)
{
    return transport->bindings->send_func(transport->bindings, transport, datagrams, count);
}

int aa_udp_transport_recv(
    aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count,
    aa_udp_transport_recv_handler_t handler, void *clientd)
{
    return transport->bindings->recv_func(transport->bindings, transport, datagrams, count, handler, clientd);
}

int aa_udp_transport_poller_init(aa_udp_transport_poller_t *poller)
{
    memset(poller, 0, sizeof(*poller));
    poller->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (poller->epoll_fd < 0)
    {
        AA_SET_ERR(errno, "UDP transport poller: epoll_create1 failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int aa_udp_transport_poller_close(aa_udp_transport_poller_t *poller)
{
    if (poller->epoll_fd >= 0)
    {
        close(poller->epoll_fd);
        poller->epoll_fd = -1;
    }
    free(poller->transports);
    poller->transports = NULL;
    poller->transports_count = 0;
    poller->transports_capacity = 0;
    return 0;
}

int aa_udp_transport_poller_add(aa_udp_transport_poller_t *poller, aa_udp_transport_t *transport)
{
    if (poller->transports_count == poller->transports_capacity)
    {
        size_t capacity = 0 == poller->transports_capacity ? 8 : poller->transports_capacity * 2;
        aa_udp_transport_t **grown = realloc(poller->transports, capacity * sizeof(aa_udp_transport_t *));
        if (NULL == grown)
        {
            AA_SET_ERR(ENOMEM, "%s", "out of memory adding a transport to the poller");
            return -1;
        }
        poller->transports = grown;
        poller->transports_capacity = capacity;
    }
    if (transport->fd >= 0)
    {
        struct epoll_event event;
        memset(&event, 0, sizeof(event));
        event.events = EPOLLIN;
        event.data.ptr = transport;
        if (epoll_ctl(poller->epoll_fd, EPOLL_CTL_ADD, transport->fd, &event) < 0)
        {
            return aa_udp_transport_error(transport, "adding to the poller (epoll_ctl)", errno);
        }
    }
    poller->transports[poller->transports_count++] = transport;
    return 0;
}

int aa_udp_transport_poller_remove(aa_udp_transport_poller_t *poller, aa_udp_transport_t *transport)
{
    for (size_t i = 0; i < poller->transports_count; i++)
    {
        if (poller->transports[i] == transport)
        {
            if (transport->fd >= 0 && epoll_ctl(poller->epoll_fd, EPOLL_CTL_DEL, transport->fd, NULL) < 0)
            {
                return aa_udp_transport_error(transport, "removing from the poller (epoll_ctl)", errno);
            }
            poller->transports[i] = poller->transports[poller->transports_count - 1];
            poller->transports_count--;
            return 0;
        }
    }
    return 0;
}

int aa_udp_transport_poller_poll(
    aa_udp_transport_poller_t *poller, aa_udp_datagram_t *datagrams, size_t count,
    aa_udp_transport_recv_handler_t handler, void *clientd)
{
    int total = 0;
    bool drained = true;
    bool iterate_all = poller->transports_count <= AA_UDP_TRANSPORT_POLLER_ITERATION_THRESHOLD;
    poller->drained = false;
    for (size_t i = 0; i < poller->transports_count; i++)
    {
        aa_udp_transport_t *transport = poller->transports[i];
        if (iterate_all || transport->fd < 0)
        {
            int rc = aa_udp_transport_recv(transport, datagrams, count, handler, clientd);
            if (rc < 0)
            {
                return -1;
            }
            total += rc;
            drained = drained && (size_t)rc < count;
        }
    }
    if (iterate_all)
    {
        poller->drained = drained;
        return total;
    }

    struct epoll_event events[AA_UDP_TRANSPORT_MAX_BATCH];
    int ready = epoll_wait(poller->epoll_fd, events, AA_UDP_TRANSPORT_MAX_BATCH, 0);
    if (ready < 0)
    {
        if (EINTR == errno)
        {
            return total;
        }
        AA_SET_ERR(errno, "UDP transport poller: epoll_wait failed: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < ready; i++)
    {
        int rc = aa_udp_transport_recv(events[i].data.ptr, datagrams, count, handler, clientd);
        if (rc < 0)
        {
            return -1;
        }
        total += rc;
        drained = drained && (size_t)rc < count;
    }
    poller->drained = drained && ready < AA_UDP_TRANSPORT_MAX_BATCH;
    return total;
}
