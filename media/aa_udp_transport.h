/*
 * Non-blocking UDP transports: one socket each, batched receive (recvmmsg) and send (sendmmsg),
 * plus a poller over many transports for the receiver.
 *
 * All socket I/O goes through one table of functions, aa_udp_transport_bindings_t, so a test
 * double or a loss interceptor (aa_loss_generator.h) can stand in for the socket. A bindings
 * value is a function table plus the state of one instance; a wrapper keeps the bindings it wraps
 * in its state and calls them with that inner value as self.
 *
 * Results: a count of datagrams handled (0 when the socket had nothing to give or no room, i.e.
 * EAGAIN: no work, not an error), or -1 with aa_errmsg() naming the socket's address and the cause.
 * ECONNREFUSED (an ICMP port-unreachable from an earlier send) counts as a datagram lost on the way.
 */
#ifndef AA_UDP_TRANSPORT_H
#define AA_UDP_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

#include "media/aa_udp_channel.h"

/* The most datagrams one send or receive call moves; larger requests are cut to this. */
#define AA_UDP_TRANSPORT_MAX_BATCH 64
/* The largest UDP payload over IPv4 and over IPv6 without jumbograms. */
#define AA_UDP_MAX_DATAGRAM_LENGTH 65536
/* Up to this many transports the poller tries each in turn; above it waits on epoll. */
#define AA_UDP_TRANSPORT_POLLER_ITERATION_THRESHOLD 8

typedef enum aa_udp_transport_role_enum
{
    AA_UDP_TRANSPORT_ROLE_SEND,     /* a publication's send channel endpoint */
    AA_UDP_TRANSPORT_ROLE_RECEIVE   /* a subscription's receive channel endpoint */
}
aa_udp_transport_role_t;

typedef struct aa_udp_datagram_stct
{
    uint8_t *buffer;
    size_t length;                  /* send: bytes to send; receive: bytes received */
    size_t capacity;                /* receive: room in buffer */
    struct sockaddr_storage address; /* send: destination (addr_len 0: the transport's default); receive: source */
    socklen_t addr_len;
    /* receive, on a transport with media_rcv_timestamps: the kernel's receive time (epoch ns), 0 when none */
    int64_t media_rcv_timestamp_ns;
}
aa_udp_datagram_t;

typedef struct aa_udp_transport_params_stct
{
    struct sockaddr_storage bind_address;       /* its family is the socket's family */
    struct sockaddr_storage destination;        /* default destination; ss_family 0 for none */
    bool connect;                               /* connect() to destination (only its datagrams are received) */
    bool reuse_address;                         /* SO_REUSEADDR, so several sockets share a multicast port */
    bool is_multicast;
    struct sockaddr_storage multicast_group;    /* joined on interface_index / interface_address */
    struct sockaddr_storage interface_address;  /* outgoing multicast interface (IPv4) */
    unsigned int interface_index;               /* outgoing multicast interface (IPv6) and join, 0 = any */
    int32_t multicast_ttl;                      /* 0: OS default */
    bool multicast_loop;
    int32_t socket_rcvbuf_length;               /* 0: OS default */
    int32_t socket_sndbuf_length;               /* 0: OS default */
    bool media_rcv_timestamps;                  /* SO_TIMESTAMPNS: each datagram's kernel receive time */
}
aa_udp_transport_params_t;

typedef struct aa_udp_transport_stct aa_udp_transport_t;
typedef struct aa_udp_transport_bindings_stct aa_udp_transport_bindings_t;

/* Called for each datagram received; the buffer is valid for the duration of the call only. */
typedef void (*aa_udp_transport_recv_handler_t)(void *clientd, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram);

typedef int (*aa_udp_transport_init_func_t)(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, const aa_udp_transport_params_t *params);
typedef int (*aa_udp_transport_close_func_t)(const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport);
/* Sends datagrams[0, count) in order; returns how many were consumed (the caller retries the rest). */
typedef int (*aa_udp_transport_send_func_t)(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count);
/* Receives up to count datagrams into the caller's buffers and calls handler for each; returns how many. */
typedef int (*aa_udp_transport_recv_func_t)(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count,
    aa_udp_transport_recv_handler_t handler, void *clientd);

struct aa_udp_transport_bindings_stct
{
    const char *name;
    aa_udp_transport_init_func_t init_func;
    aa_udp_transport_close_func_t close_func;
    aa_udp_transport_send_func_t send_func;
    aa_udp_transport_recv_func_t recv_func;
    void *state;
};

struct aa_udp_transport_stct
{
    int fd;
    const aa_udp_transport_bindings_t *bindings;
    struct sockaddr_storage bound_address;      /* after bind: the port the kernel picked for port 0 */
    struct sockaddr_storage destination;
    bool has_destination;
    bool is_connected;
    int32_t socket_rcvbuf_length;               /* as the kernel reports it (Linux doubles the request) */
    int32_t socket_sndbuf_length;
    uint64_t truncated_datagrams;               /* received datagrams longer than the buffer, dropped */
    uint64_t refused_datagrams;                 /* ECONNREFUSED seen while sending or receiving */
    bool media_rcv_timestamps;                  /* receives read the kernel's timestamp (params) */
    void *clientd;                              /* for the owner (e.g. the receive channel endpoint) */
};

/* The socket bindings: a static table, never freed. */
const aa_udp_transport_bindings_t *aa_udp_transport_socket_bindings(void);

/* Fills params for a channel in a role (see aa_udp_channel.h for the addresses). */
void aa_udp_transport_params_from_channel(
    aa_udp_transport_params_t *params, const aa_udp_channel_t *channel, aa_udp_transport_role_t role);

/* Opens the transport through bindings (NULL: the socket bindings). */
int aa_udp_transport_init(
    aa_udp_transport_t *transport, const aa_udp_transport_bindings_t *bindings, const aa_udp_transport_params_t *params);
int aa_udp_transport_close(aa_udp_transport_t *transport);
int aa_udp_transport_send(aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count);
int aa_udp_transport_recv(
    aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count,
    aa_udp_transport_recv_handler_t handler, void *clientd);

typedef struct aa_udp_transport_poller_stct
{
    aa_udp_transport_t **transports;
    size_t transports_count;
    size_t transports_capacity;
    int epoll_fd;
    bool drained;   /* the last poll read every transport to its end (each gave fewer than `count`) */
}
aa_udp_transport_poller_t;

int aa_udp_transport_poller_init(aa_udp_transport_poller_t *poller);
int aa_udp_transport_poller_close(aa_udp_transport_poller_t *poller);
int aa_udp_transport_poller_add(aa_udp_transport_poller_t *poller, aa_udp_transport_t *transport);
int aa_udp_transport_poller_remove(aa_udp_transport_poller_t *poller, aa_udp_transport_t *transport);
/* Receives from every transport with something to read, without waiting; returns the datagram count
 * and sets `drained` when no transport may hold more (none filled the batch, epoll's ready list fit). */
int aa_udp_transport_poller_poll(
    aa_udp_transport_poller_t *poller, aa_udp_datagram_t *datagrams, size_t count,
    aa_udp_transport_recv_handler_t handler, void *clientd);

#endif
