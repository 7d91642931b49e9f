/*
 * A loss generator for testing: transport bindings that wrap other bindings (normally the
 * sockets) and drop, duplicate or reorder datagrams, chosen by the type of their first frame and
 * a rate, separately for receiving and for sending. A seeded PRNG (splitmix64) makes every run
 * with the same seed and the same traffic lose the same datagrams.
 *
 * Rules are written "<action>:<frame type>:<rate>[,...]" (docs/loss-generator.md):
 *   action      drop | dup | reorder
 *   frame type  data (DATA and PAD, heartbeats included) | setup | sm | nak | rttm | err | any
 *   rate        a probability, 0.05 or 5%
 * One draw per datagram picks at most one action: drop with the summed drop rate, otherwise dup,
 * otherwise reorder, so the rates matching one frame type must add up to at most 1.
 *   dup         the datagram is delivered (or sent) twice in a row.
 *   reorder     the datagram is held back (copied) and delivered right after the next one that
 *               passes (several held in a row all follow it, oldest first); if none passes in the
 *               same call, at the end of the next call.
 * Sending keeps the batch: the caller's datagrams and the held copies go to the inner bindings in
 * one call; when those take only part of it (EAGAIN), copies of datagrams the caller must offer
 * again are discarded, so nothing is lost or repeated beyond what the rules asked. The counters
 * count decisions, so datagrams offered again are counted again.
 */
#ifndef AA_LOSS_GENERATOR_H
#define AA_LOSS_GENERATOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "media/aa_udp_transport.h"

#define AA_LOSS_GENERATOR_MAX_RULES 16
#define AA_LOSS_GENERATOR_SPEC_MAX_LENGTH 256

typedef enum aa_loss_action_enum
{
    AA_LOSS_ACTION_DROP,
    AA_LOSS_ACTION_DUPLICATE,
    AA_LOSS_ACTION_REORDER
}
aa_loss_action_t;

typedef enum aa_loss_frame_type_enum
{
    AA_LOSS_FRAME_ANY,
    AA_LOSS_FRAME_DATA,
    AA_LOSS_FRAME_SETUP,
    AA_LOSS_FRAME_SM,
    AA_LOSS_FRAME_NAK,
    AA_LOSS_FRAME_RTTM,
    AA_LOSS_FRAME_ERR,
    AA_LOSS_FRAME_OTHER     /* too short for a frame header, or another type: matched by "any" only */
}
aa_loss_frame_type_t;

#define AA_LOSS_FRAME_TYPE_COUNT (AA_LOSS_FRAME_OTHER + 1)

typedef struct aa_loss_rule_stct
{
    aa_loss_action_t action;
    aa_loss_frame_type_t frame_type;
    double rate;
}
aa_loss_rule_t;

/* One direction's rules, as parsed from the option text (kept for display). No rules: off. */
typedef struct aa_loss_generator_params_stct
{
    char spec[AA_LOSS_GENERATOR_SPEC_MAX_LENGTH];
    size_t rules_count;
    aa_loss_rule_t rules[AA_LOSS_GENERATOR_MAX_RULES];
}
aa_loss_generator_params_t;

typedef struct aa_loss_generator_stats_stct
{
    uint64_t datagrams;     /* seen by the generator */
    uint64_t dropped;
    uint64_t duplicated;
    uint64_t reordered;
}
aa_loss_generator_stats_t;

/* Parses spec ("" or NULL: no rules). Returns 0, or -1 with an error naming the bad rule. */
int aa_loss_generator_params_parse(aa_loss_generator_params_t *params, const char *spec);
bool aa_loss_generator_params_is_enabled(const aa_loss_generator_params_t *params);
/* The frame type of a datagram's first frame header. */
aa_loss_frame_type_t aa_loss_generator_frame_type(const uint8_t *buffer, size_t length);

/* Bindings that apply receive and send rules (either may be NULL) around inner (NULL: sockets).
 * Create one per transport: the held datagram and the PRNG are per instance. */
int aa_loss_generator_bindings_create(
    aa_udp_transport_bindings_t **bindings, const aa_udp_transport_bindings_t *inner,
    const aa_loss_generator_params_t *receive, const aa_loss_generator_params_t *send, uint64_t seed);
void aa_loss_generator_bindings_delete(aa_udp_transport_bindings_t *bindings);
/* Both directions' rules and the seed, as a driver applies them to every transport it opens, and
 * the bindings those transports are opened through (a unit test's fake network; NULL: sockets). */
typedef struct aa_loss_generator_settings_stct
{
    const aa_loss_generator_params_t *receive;
    const aa_loss_generator_params_t *send;
    uint64_t seed;
    const aa_udp_transport_bindings_t *inner;
}
aa_loss_generator_settings_t;

/* Opens a channel's transport in a role through a new loss generator (around settings->inner) when
 * settings (may be NULL) has rules for either direction, handing its bindings back in *bindings;
 * otherwise through settings->inner (NULL: the sockets), with *bindings NULL. close closes the
 * transport, then deletes the bindings. */
int aa_loss_generator_transport_open(
    aa_udp_transport_t *transport, aa_udp_transport_bindings_t **bindings, const aa_udp_channel_t *channel,
    aa_udp_transport_role_t role, const aa_loss_generator_settings_t *settings);
void aa_loss_generator_transport_close(aa_udp_transport_t *transport, aa_udp_transport_bindings_t *bindings);

/* Counters of a loss generator's bindings; NULL for other bindings. */
const aa_loss_generator_stats_t *aa_loss_generator_receive_stats(const aa_udp_transport_bindings_t *bindings);
const aa_loss_generator_stats_t *aa_loss_generator_send_stats(const aa_udp_transport_bindings_t *bindings);

#endif
