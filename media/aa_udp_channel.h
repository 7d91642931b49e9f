/*
 * UDP channels (reference 7.1): an aeron:udp URI resolved into the addresses a transport binds,
 * sends to and joins, its canonical form, socket buffer sizes and multicast TTL.
 *
 * aa_udp_channel_from_uri resolves host names through a name resolver (below; "default" uses
 * getaddrinfo) and looks interfaces up with getifaddrs, so it blocks for as long as the resolver
 * takes. The driver's conductor resolves the channel it parsed with the answers its resolver
 * executor found beforehand (driver/aa_driver_conductor_resolution.c), so it never waits for a name;
 * never call it from the sender or receiver duty cycle. Address literals (127.0.0.1:40123, [::1]:40123) are never
 * sent to a resolver.
 *
 * Addresses, whatever the role:
 *   remote_data     endpoint=: where a publication sends data; the address a unicast subscription
 *                   binds; the group of a multicast channel. Wildcard (port 0) without endpoint=.
 *   remote_control  unicast: remote_data. Multicast: the group with its last byte + 1 (reference 4.1).
 *   local_data      control= when given (MDC: a publication's control address, a subscription's
 *                   publisher address), else interface= (port from interface=, default 0), else
 *                   the wildcard address of remote_data's family with port 0.
 *   local_control   the same as local_data.
 */
#ifndef AA_UDP_CHANNEL_H
#define AA_UDP_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

#include "concurrent/aa_counters.h"
#include "resolver/aa_name_resolver.h"
#include "uri/aa_uri.h"
#include "util/aa_udp_address.h"

/* Driver defaults (reference 11): aeron.socket.so_rcvbuf, so_sndbuf (0 = OS default), multicast ttl (0 = OS default). */
#define AA_UDP_SOCKET_SO_RCVBUF_DEFAULT (128 * 1024)
#define AA_UDP_SOCKET_SO_SNDBUF_DEFAULT 0
#define AA_UDP_SOCKET_MULTICAST_TTL_DEFAULT 0

/* "UDP-" + two addresses as written in the URI (at most 255 characters each) + "#<tag>" or "-<n>" */
#define AA_UDP_CHANNEL_CANONICAL_FORM_MAX_LENGTH 560

/* Timestamp offsets (reference wave 3, section 3): bytes from the payload start (frame + 32) where an
 * int64 of epoch nanoseconds is written, AA_UDP_CHANNEL_TIMESTAMP_RESERVED for the header's reserved
 * value (bytes 24-31), AA_UDP_CHANNEL_TIMESTAMP_OFF when the channel does not ask. */
#define AA_UDP_CHANNEL_TIMESTAMP_OFF (-1)
#define AA_UDP_CHANNEL_TIMESTAMP_RESERVED (-8)

typedef enum aa_udp_channel_control_mode_enum
{
    AA_UDP_CHANNEL_CONTROL_MODE_NONE,
    AA_UDP_CHANNEL_CONTROL_MODE_DYNAMIC,
    AA_UDP_CHANNEL_CONTROL_MODE_MANUAL,
    AA_UDP_CHANNEL_CONTROL_MODE_RESPONSE
}
aa_udp_channel_control_mode_t;

/* What a channel gets when its URI does not say (the driver context's values). */
typedef struct aa_udp_channel_defaults_stct
{
    int32_t socket_rcvbuf_length;
    int32_t socket_sndbuf_length;
    int32_t multicast_ttl;
    aa_name_resolver_t *resolver;   /* NULL: the built-in default resolver */
}
aa_udp_channel_defaults_t;

typedef struct aa_udp_channel_stct
{
    aa_uri_t uri;
    bool has_explicit_endpoint;
    bool has_explicit_control;
    bool has_explicit_interface;
    bool is_multicast;
    bool has_wildcard_port;
    bool has_unique_suffix;             /* the canonical form ends in #<tag> or -<n> */
    bool has_tag;                       /* tags=<channel tag>[,...]: endpoints match by it first */
    int64_t tag_id;
    int32_t channel_snd_timestamp_offset;   /* channel-snd-ts-offset= (AA_UDP_CHANNEL_TIMESTAMP_*) */
    int32_t channel_rcv_timestamp_offset;   /* channel-rcv-ts-offset= */
    int32_t media_rcv_timestamp_offset;     /* media-rcv-ts-offset= */
    bool is_remote_unresolved;          /* endpoint= waits for its name: remote_data is a placeholder */
    aa_udp_channel_control_mode_t control_mode;
    struct sockaddr_storage remote_data;
    struct sockaddr_storage remote_control;
    struct sockaddr_storage local_data;
    struct sockaddr_storage local_control;
    unsigned int interface_index;       /* 0: let the kernel choose */
    int32_t socket_rcvbuf_length;       /* 0: OS default */
    int32_t socket_sndbuf_length;       /* 0: OS default */
    int32_t multicast_ttl;              /* 0: OS default */
    int32_t receiver_window_length;     /* rcv-wnd=, 0 when absent */
    char canonical_form[AA_UDP_CHANNEL_CANONICAL_FORM_MAX_LENGTH];
}
aa_udp_channel_t;

/* Resolves an aeron:udp (or aeron-spy:aeron:udp) channel already parsed (aa_uri_parse), without parsing
 * it again: *channel keeps a copy of *uri. BLOCKING (see above). defaults may be NULL for the
 * reference-11 values. Returns 0 and *channel (free with aa_udp_channel_delete), or -1 with the error
 * naming the parameter and what went wrong. */
int aa_udp_channel_from_uri(aa_udp_channel_t **channel, const aa_uri_t *uri, const aa_udp_channel_defaults_t *defaults);
/* aa_uri_parse, then aa_udp_channel_from_uri: for tools and tests that hold the channel as text. */
int aa_udp_channel_parse(aa_udp_channel_t **channel, const char *uri, const aa_udp_channel_defaults_t *defaults);
void aa_udp_channel_delete(aa_udp_channel_t *channel);
/* Channels with equal canonical forms share one receive endpoint. */
bool aa_udp_channel_equals(const aa_udp_channel_t *a, const aa_udp_channel_t *b);

/* Whether channel (a new publication's or subscription's) reaches the endpoint of endpoint_channel through
 * its channel tag (reference wave 3, section 2; Aeron's aeron_udp_channel_matches_tag): both tagged
 * with the same tag, the control mode unset or equal, and every address channel gives the wildcard or
 * the endpoint's. Returns 0 with *matches, or -1 (no match) when the tag matches but the control mode
 * ("matching tag N has mismatched control-mode") or an address ("... mismatched endpoint or control")
 * differs. */
int aa_udp_channel_matches_tag(const aa_udp_channel_t *channel, const aa_udp_channel_t *endpoint_channel, bool *matches);

/* Whether the channel asks for any receive timestamp (channel-rcv-ts-offset=, media-rcv-ts-offset=). */
static inline bool aa_udp_channel_has_receive_timestamps(const aa_udp_channel_t *channel)
{
    return AA_UDP_CHANNEL_TIMESTAMP_OFF != channel->channel_rcv_timestamp_offset ||
        AA_UDP_CHANNEL_TIMESTAMP_OFF != channel->media_rcv_timestamp_offset;
}

/* "(not specified)", "(reserved)" or "": how an offset is shown in errors, as Aeron shows it. */
const char *aa_udp_channel_timestamp_offset_info(int32_t offset);

#endif
