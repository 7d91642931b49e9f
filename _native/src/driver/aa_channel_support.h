/*
 * What this driver applies of a channel URI. aa_uri_parse accepts every parameter of reference 7
 * (a client parses channels too, and must not refuse what another driver may apply); the driver
 * then refuses, when a publication or subscription is added, every parameter it would not apply,
 * so that nothing a user asks for is silently ignored. An error names the parameter, its value,
 * why it is not applied and what is supported instead.
 *
 * A parameter passes when the driver applies it for the channel's media and role; or when Aeron's C
 * driver accepts it there and does nothing with it (so-rcvbuf on aeron:ipc: accepted and ignored
 * alike); or when its value asks for what the driver does anyway (rejoin=true, group=infer,
 * ssc=false); or when it belongs to the other end of the channel and the driver applies it there
 * (term-length on a subscription: Aeron applications use one channel string for both ends). fc= and
 * cc= name strategies of the strategy registry (util/aa_registry.h) and pass only with a registered
 * name.
 *
 * The table of aa_channel_support.c, a row per parameter, is the one source: the checks read it and
 * aa_channel_param_describe (aeron_async.h) hands it to `aeron-async driver --help-channel-params`,
 * which writes docs/configuration.md, "Channel parameters". When a parameter starts being applied,
 * change its row (its applied roles; its why to NULL), test it, and regenerate that table.
 */
#ifndef AA_CHANNEL_SUPPORT_H
#define AA_CHANNEL_SUPPORT_H

#include <stdbool.h>

#include "driver/aa_driver_context.h"
#include "uri/aa_uri.h"

/* Every check reads the channel as parsed once (aa_uri_t; its text names the channel in errors). */

/* Returns 0, or -1 with AA_ERROR_CODE_INVALID_CHANNEL naming the first parameter not applied. */
int aa_channel_check_applied(const aa_uri_t *uri, bool is_publication);

/* A second subscription (or shared publication) on a resource the first one created shares that
 * resource's settings. Compares the values of keys (a NULL-terminated list) in both parsed channels,
 * a missing one standing for default_values[i]; returns 0, or -1 naming the parameter, both values
 * and the existing resource (existing_name: its channel, or an endpoint's canonical form). */
int aa_channel_check_same_params(
    const aa_uri_t *uri, const aa_uri_t *existing, const char *existing_name, const char *const *keys,
    const char *const *default_values, const char *what);

/* The parameters a receive endpoint, a send endpoint keep from the channel that created them. */
extern const char *const aa_channel_receive_endpoint_keys[];
extern const char *const aa_channel_send_endpoint_keys[];

/* aa_channel_check_same_params with the driver's defaults for keys (at most 8). */
int aa_channel_check_shared(
    const aa_driver_context_t *ctx, const aa_uri_t *uri, const aa_uri_t *existing, const char *existing_name,
    const char *const *keys, const char *what);

/* A channel adding to a shared (non-exclusive) publication must ask for its fc=, pub-wnd=, linger=,
 * eos= and sparse= (term-length and mtu the conductor compares itself): existing is the channel the
 * publication keeps, as parsed when it was added. */
int aa_channel_check_shared_publication(const aa_driver_context_t *ctx, const aa_uri_t *uri, const aa_uri_t *existing);

#endif
