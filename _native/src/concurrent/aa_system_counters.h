/* System counters (type 0, keyed by id), reference 9.4, in Aeron's order so tools line up. */
#ifndef AA_SYSTEM_COUNTERS_H
#define AA_SYSTEM_COUNTERS_H

#include "util/aa_version.h"

typedef enum aa_system_counter_enum
{
    AA_SYSTEM_COUNTER_BYTES_SENT = 0,
    AA_SYSTEM_COUNTER_BYTES_RECEIVED,
    AA_SYSTEM_COUNTER_RECEIVER_PROXY_FAILS,
    AA_SYSTEM_COUNTER_SENDER_PROXY_FAILS,
    AA_SYSTEM_COUNTER_CONDUCTOR_PROXY_FAILS,
    AA_SYSTEM_COUNTER_NAK_MESSAGES_SENT,
    AA_SYSTEM_COUNTER_NAK_MESSAGES_RECEIVED,
    AA_SYSTEM_COUNTER_STATUS_MESSAGES_SENT,
    AA_SYSTEM_COUNTER_STATUS_MESSAGES_RECEIVED,
    AA_SYSTEM_COUNTER_HEARTBEATS_SENT,
    AA_SYSTEM_COUNTER_HEARTBEATS_RECEIVED,
    AA_SYSTEM_COUNTER_RETRANSMITS_SENT,
    AA_SYSTEM_COUNTER_FLOW_CONTROL_UNDER_RUNS,
    AA_SYSTEM_COUNTER_FLOW_CONTROL_OVER_RUNS,
    AA_SYSTEM_COUNTER_INVALID_PACKETS,
    AA_SYSTEM_COUNTER_ERRORS,
    AA_SYSTEM_COUNTER_SHORT_SENDS,
    AA_SYSTEM_COUNTER_FREE_FAILS,
    AA_SYSTEM_COUNTER_SENDER_FLOW_CONTROL_LIMITS,
    AA_SYSTEM_COUNTER_UNBLOCKED_PUBLICATIONS,
    AA_SYSTEM_COUNTER_UNBLOCKED_COMMANDS,
    AA_SYSTEM_COUNTER_POSSIBLE_TTL_ASYMMETRY,
    AA_SYSTEM_COUNTER_CONTROLLABLE_IDLE_STRATEGY,
    AA_SYSTEM_COUNTER_LOSS_GAP_FILLS,
    AA_SYSTEM_COUNTER_CLIENT_TIMEOUTS,
    AA_SYSTEM_COUNTER_RESOLUTION_CHANGES,
    AA_SYSTEM_COUNTER_CONDUCTOR_MAX_CYCLE_TIME,
    AA_SYSTEM_COUNTER_CONDUCTOR_CYCLE_TIME_THRESHOLD_EXCEEDED,
    AA_SYSTEM_COUNTER_SENDER_MAX_CYCLE_TIME,
    AA_SYSTEM_COUNTER_SENDER_CYCLE_TIME_THRESHOLD_EXCEEDED,
    AA_SYSTEM_COUNTER_RECEIVER_MAX_CYCLE_TIME,
    AA_SYSTEM_COUNTER_RECEIVER_CYCLE_TIME_THRESHOLD_EXCEEDED,
    AA_SYSTEM_COUNTER_NAME_RESOLVER_MAX_TIME,
    AA_SYSTEM_COUNTER_NAME_RESOLVER_TIME_THRESHOLD_EXCEEDED,
    AA_SYSTEM_COUNTER_AERON_VERSION,
    AA_SYSTEM_COUNTER_BYTES_CURRENTLY_MAPPED,
    AA_SYSTEM_COUNTER_RETRANSMITTED_BYTES,
    AA_SYSTEM_COUNTER_RETRANSMIT_OVERFLOW,
    AA_SYSTEM_COUNTER_ERROR_FRAMES_RECEIVED,
    AA_SYSTEM_COUNTER_ERROR_FRAMES_SENT,
    /* ours from here on, after Aeron's so that Aeron's ids stay Aeron's (docs/security.md): tools find
     * them by label; first, to-driver records refused (docs/security.md, The CnC file) */
    AA_SYSTEM_COUNTER_INVALID_CLIENT_COMMANDS,
    /* ours: the driver name resolver's refusals (docs/security.md, "Name resolution (gossip)") */
    AA_SYSTEM_COUNTER_RESOLVER_SOURCE_REFUSED,
    AA_SYSTEM_COUNTER_RESOLVER_ENTRY_REFUSED,
    AA_SYSTEM_COUNTER_RESOLVER_CAP_REFUSED,
    AA_SYSTEM_COUNTER_RESOLVER_GOSSIP_THROTTLED,
    AA_SYSTEM_COUNTER_RESOLVER_UNAUTHENTICATED,
    /* ours (docs/security.md, Network: receivers): SETUPs a receive channel endpoint refused */
    AA_SYSTEM_COUNTER_SETUPS_REFUSED_IMAGE_LIMIT,
    AA_SYSTEM_COUNTER_SETUPS_REFUSED_TERM_LENGTH,
    /* ours: DATA, heartbeats, SETUPs and RTT replies for an image from another address than its SETUP's */
    AA_SYSTEM_COUNTER_FRAMES_FROM_ANOTHER_SOURCE,
    AA_SYSTEM_COUNTER_DUMMY_LAST
}
aa_system_counter_t;

#define AA_SYSTEM_COUNTER_COUNT ((int)AA_SYSTEM_COUNTER_DUMMY_LAST)

static const char *const aa_system_counter_labels[AA_SYSTEM_COUNTER_COUNT] =
{
    "Bytes sent",
    "Bytes received",
    "Failed offers to ReceiverProxy",
    "Failed offers to SenderProxy",
    "Failed offers to DriverConductorProxy",
    "NAKs sent",
    "NAKs received",
    "Status Messages sent",
    "Status Messages received",
    "Heartbeats sent",
    "Heartbeats received",
    "Retransmits sent",
    "Flow control under runs",
    "Flow control over runs",
    "Invalid packets",
    "Errors",
    "Short sends",
    "Failed attempts to free log buffers",
    "Sender flow control limits, i.e. back-pressure events",
    "Unblocked Publications",
    "Unblocked Control Commands",
    "Possible TTL Asymmetry",
    "ControllableIdleStrategy status",
    "Loss gap fills",
    "Client liveness timeouts",
    "Resolution changes",
    "Conductor max cycle time doing its work in ns",
    "Conductor work cycle exceeded threshold count",
    "Sender max cycle time doing its work in ns",
    "Sender work cycle exceeded threshold count",
    "Receiver max cycle time doing its work in ns",
    "Receiver work cycle exceeded threshold count",
    "NameResolver max time in ns",
    "NameResolver exceeded threshold count",
    "aeron_async software: version=" AA_VERSION_STRING,
    "Bytes currently mapped by log buffers",
    "Retransmitted bytes",
    "Retransmit Pool Overflow count",
    "Error Frames received",
    "Error Frames sent",
    "Invalid client commands",
    "Resolver frames refused: source outside the allowed networks",
    "Resolver entries refused: spoofed SELF or address outside the allowed networks",
    "Resolver entries refused: cache or neighbour cap reached",
    "Resolver gossip frames not sent: rate limit",
    "Resolver frames refused: unsigned or badly signed",
    "SETUPs refused: receiver image limit",
    "SETUPs refused: term length above receiver maximum",
    "Image frames dropped from a foreign source",
};

#endif
