#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "driver/aa_channel_support.h"
#include <inttypes.h>
#include "aeron_async.h"
#include "agent/aa_agent.h"
#include "util/aa_error.h"
#include "util/aa_parse.h"
#include "protocols/aa_congestion_control.h"
#include "protocols/aa_flow_control.h"

/* Where a parameter is applied or meant: media x role. */
#define IPC_PUB 0x1
#define IPC_SUB 0x2
#define UDP_PUB 0x4
#define UDP_SUB 0x8
#define SPY_SUB 0x10  /* aeron-spy:aeron:udp?...: reads a local network publication's log in place */
#define PUB (IPC_PUB | UDP_PUB)
#define SUB (IPC_SUB | UDP_SUB | SPY_SUB)
#define ALL (PUB | SUB)
#define UDP (UDP_PUB | UDP_SUB)

#define AA_CHANNEL_CARRIES "this driver carries aeron:ipc and aeron:udp?endpoint=host:port (unicast or a multicast group)"

typedef struct aa_channel_param_support_stct
{
    const char *name;
    int meant;                  /* where the parameter has a meaning (reference 7.2) */
    int applied;                /* where this driver applies it */
    int ignored;                /* where Aeron's C driver accepts it and does nothing with it: accepted here too */
    const char *const *as_done; /* values asking for what the driver does anyway (NULL-terminated), or NULL */
    const char *why;            /* why it is not applied elsewhere, and what to do instead */
    const char *what;           /* what it sets, for the table of docs/configuration.md */
}
aa_channel_param_support_t;

static const char *const aa_true[] = { "true", NULL };
static const char *const aa_false[] = { "false", NULL };
static const char *const aa_group_as_done[] = { "false", "infer", NULL };

#define AA_NOT_APPLIED_YET(feature) feature " (reference aeron-wave3.md) are not supported by this driver yet"

/* Every parameter aa_uri_parse accepts, one row each (aa_uri.c keeps the two lists in step: a parameter
 * missing here is refused as not applied). This table is the one source of what the driver does with a
 * channel parameter: aa_channel_check_applied reads it, and so does `aeron-async driver
 * --help-channel-params --markdown`, which writes docs/configuration.md's table "Channel parameters".
 * A parameter starts being applied by a change to its row only: its `applied` roles (and `why` to NULL
 * once it is applied wherever it is meant). */
static const aa_channel_param_support_t aa_channel_params[] =
{
    { "term-length", PUB, PUB, 0, NULL, NULL, "the length of each of the log's three terms" },
    { "mtu", PUB, PUB, 0, NULL, NULL, "the largest frame (header and payload) the publication sends" },
    { "init-term-id", PUB, PUB, 0, NULL, NULL, "with term-id and term-offset: the position a publication starts at" },
    { "term-id", PUB, PUB, 0, NULL, NULL, "with init-term-id and term-offset" },
    { "term-offset", PUB, PUB, 0, NULL, NULL, "with init-term-id and term-id" },
    { "session-id", ALL, ALL, 0, NULL, NULL,
        "a publication's session id (unique per stream on aeron:ipc, per stream and send endpoint on aeron:udp); "
        "the one session a subscription takes" },
    { "linger", PUB, PUB, 0, NULL, NULL, "how long a closed publication keeps its log for late readers" },
    { "sparse", PUB | UDP_SUB, PUB | UDP_SUB, 0, NULL, NULL, "sparse log files" },
    { "eos", PUB, PUB, 0, NULL, NULL, "whether closing a publication signals end of stream" },
    { "tether", SUB, SUB, 0, NULL, NULL, "whether a slow subscriber holds the publisher back" },
    { "alias", ALL, ALL, 0, NULL, NULL, "free text, shown in the counters' labels" },
    { "pub-wnd", PUB, PUB, 0, NULL, NULL, "how far a publication may run ahead of its slowest subscriber" },
    { "endpoint", UDP, UDP, 0, NULL, NULL,
        "the address a unicast publication sends to, a multicast group, the address a subscription binds (on a "
        "control-mode=manual subscription Aeron's C driver ignores it too: its destinations are added)" },
    /* unicast: the publication's local address (a unicast subscription binds its endpoint and takes it as
     * meant for the publishing end); multicast: the interface joining and sending, at both ends */
    { "interface", UDP, UDP, 0, NULL, NULL, "the local interface or address to send from or join a group on" },
    { "rcv-wnd", UDP_SUB, UDP_SUB, 0, NULL, NULL, "the receiver window a subscription's status messages advertise" },
    { "so-sndbuf", UDP, UDP, IPC_PUB | IPC_SUB, NULL, NULL,
        "SO_SNDBUF of the channel's socket (aeron:ipc has no socket: accepted and ignored, as Aeron's drivers do)" },
    { "so-rcvbuf", UDP, UDP, IPC_PUB | IPC_SUB, NULL, NULL,
        "SO_RCVBUF of the channel's socket (aeron:ipc has no socket: accepted and ignored, as Aeron's drivers do)" },
    { "nak-delay", UDP_SUB, UDP_SUB, 0, NULL, NULL, "the delay before a unicast subscription NAKs a gap" },
    { "reliable", UDP_SUB, UDP_SUB, 0, aa_true, "an aeron:ipc log never has gaps to fill",
        "false: fill gaps with padding instead of NAKing them" },
    { "fc", UDP_PUB, UDP_PUB, 0, NULL, NULL, "the flow control strategy of a publication (the name is checked)" },
    { "cc", UDP_SUB, UDP_SUB, 0, NULL, NULL, "the congestion control strategy of a subscription (the name is checked)" },
    { "ats", ALL, 0, 0, aa_false, "the encrypted transport is not provided", "Aeron Transport Security (commercial)" },
    { "rejoin", SUB, 0, 0, aa_true, "this driver always lets a subscription rejoin a stream",
        "whether a subscription rejoins a stream whose image went away" },
    /* true/false/infer: whether an image gets group semantics (random multicast NAK delays) */
    { "group", SUB, UDP_SUB, 0, aa_group_as_done, "an aeron:ipc or spy subscription sends no NAKs",
        "true, false or infer: whether an image has group semantics (multicast NAK delays)" },
    { "ssc", PUB, UDP_PUB, 0, aa_false, "spies read network publications only; an aeron:ipc publication has none",
        "whether spies alone make a publication connected" },
    { "spies-simulate-connection", PUB, 0, 0, aa_false, "the channel parameter is ssc=true", "Java's long form of ssc" },
    /* UDP: the channel tag finds the endpoint to share (media/aa_udp_channel.h); publications: the entity tag
     * names the publication (log metadata entity_tag, session-id=tag:<n>); aeron:ipc channel tags are parsed
     * only, as in Aeron's C driver */
    { "tags", ALL, ALL, 0, NULL, NULL,
        "a channel tag and an entity tag, to refer to a channel or publication by tag" },
    /* multicast and multi-destination-cast only: refused on other unicast channels when the channel is resolved */
    { "max-resend", UDP_PUB, UDP_PUB, 0, NULL, NULL, "retransmits in flight at once (multicast and multi-destination)" },
    /* per stream (aeron-wave3.md 5): an IPC publication's channel for its subscribers, a network
     * publication's for its spies, the channel that opened a receive endpoint for its images' subscribers */
#define AA_UNTETHERED_PER_STREAM(env) "untethered timeouts are per stream: give it on the publication's channel " \
        "(aeron:ipc, spies) or on the aeron:udp subscription's (its network images), or set the driver's " env
    { "untethered-window-limit-timeout", ALL, PUB | UDP_SUB, 0, NULL,
        AA_UNTETHERED_PER_STREAM("AERON_UNTETHERED_WINDOW_LIMIT_TIMEOUT"),
        "how long an untethered subscriber may lag before it is left behind" },
    { "untethered-resting-timeout", ALL, PUB | UDP_SUB, 0, NULL,
        AA_UNTETHERED_PER_STREAM("AERON_UNTETHERED_RESTING_TIMEOUT"),
        "how long a left-behind untethered subscriber rests before it rejoins" },
    { "untethered-linger-timeout", ALL, PUB | UDP_SUB, 0, NULL,
        AA_UNTETHERED_PER_STREAM("AERON_UNTETHERED_LINGER_TIMEOUT"), "how long a left-behind untethered subscriber lingers" },
    { "stream-id", ALL, 0, 0, NULL, AA_NOT_APPLIED_YET("a stream id carried in the channel (archive replays)"),
        "a stream id carried in the channel (archive replays)" },
    /* response channels (docs/architecture.md, "Response channels"): a publication's; on a subscription it is
     * meant for the publishing end of a shared channel string */
    { "response-correlation-id", PUB, PUB, 0, NULL, NULL,
        "response channels: the registration id the response is for (a number >= -1, or prototype)" },
    /* informational, as in Aeron: no driver reads it (reference wave3 1.1) */
    { "response-endpoint", UDP, 0, UDP, NULL, NULL,
        "response channels: informational, no driver reads it" },
    /* timestamps written into DATA frames (media/aa_timestamps.h): by the sender, by the receiver, by the kernel */
    { "channel-rcv-ts-offset", UDP_SUB, UDP_SUB, 0, NULL,
        "timestamps are written into UDP datagrams as a network subscription receives them; a spy reads the log as it is",
        "where in a message the receiving driver writes the time it arrived" },
    { "channel-snd-ts-offset", UDP_PUB, UDP_PUB, 0, NULL, "timestamps are written into UDP datagrams only",
        "where in a message the sending driver writes the time it left" },
    { "media-rcv-ts-offset", UDP_SUB, UDP_SUB, 0, NULL,
        "timestamps are written into UDP datagrams as a network subscription receives them; a spy reads the log as it is",
        "where in a message the receiving driver writes the kernel's receive time" },
    /* on a publication, the local address its socket binds (port 0: a free one), as Aeron's localControl,
     * which a multi-destination-cast publication receives status messages on; on a subscription, the
     * multi-destination-cast publisher's control address its status messages go to */
    { "control", UDP, UDP, 0, NULL, NULL,
        "a publication's control address (status messages arrive there); the multi-destination-cast or "
        "response publisher's, on a subscription" },
    /* dynamic and manual (publications), dynamic and manual (subscriptions), response (both, UDP and
     * aeron:ipc): the conductor checks the value */
    { "control-mode", UDP | IPC_PUB | IPC_SUB, UDP | IPC_PUB | IPC_SUB, 0, NULL, NULL,
        "dynamic or manual multi-destination-cast (publications), manual multi-destination subscriptions, "
        "response channels (control-mode=response, UDP and aeron:ipc)" },
    /* multicast only (both ends send to a group): refused on unicast channels when the channel is resolved */
    { "ttl", UDP_PUB, UDP, 0, NULL, NULL, "the multicast time to live" },
    { "gtag", UDP_SUB, UDP_SUB, 0, NULL, NULL, "the group tag a subscription's status messages carry" },
};

#define AA_CHANNEL_PARAMS_COUNT (sizeof(aa_channel_params) / sizeof(aa_channel_params[0]))

static const aa_channel_param_support_t *aa_channel_find_support(const char *name)
{
    for (size_t i = 0; i < AA_CHANNEL_PARAMS_COUNT; i++)
    {
        if (0 == strcmp(aa_channel_params[i].name, name))
        {
            return &aa_channel_params[i];
        }
    }
    return NULL;
}

static bool aa_channel_is_one_of(const char *value, const char *const *values)
{
    for (size_t i = 0; NULL != values && NULL != values[i]; i++)
    {
        if (0 == strcmp(value, values[i]))
        {
            return true;
        }
    }
    return false;
}

/* The other end of a role's channel: a publication's subscriptions, a subscription's publications. */
static int aa_channel_other_role(int where)
{
    return IPC_PUB == where ? IPC_SUB : (IPC_SUB == where ? IPC_PUB : (UDP_PUB == where ? UDP_SUB : UDP_PUB));
}

/* What the driver does with a parameter in a role (AA_CHANNEL_PARAM_* of aeron_async.h). */
static int32_t aa_channel_param_status(const aa_channel_param_support_t *support, int where)
{
    aa_uri_media_t media = 0 != (where & (IPC_PUB | IPC_SUB)) ? AA_URI_MEDIA_IPC : AA_URI_MEDIA_UDP;
    if (!aa_uri_is_param_of(media, support->name))
    {
        return AA_CHANNEL_PARAM_NOT_OF_MEDIA;
    }
    if (0 != (support->applied & where))
    {
        return AA_CHANNEL_PARAM_APPLIED;
    }
    if (0 != (support->ignored & where))
    {
        return AA_CHANNEL_PARAM_IGNORED;
    }
    /* Meant for the other end of the channel, which this driver serves too. */
    if (0 == (support->meant & where) && 0 != (support->applied & aa_channel_other_role(where)))
    {
        return AA_CHANNEL_PARAM_OTHER_END;
    }
    return NULL != support->as_done ? AA_CHANNEL_PARAM_ONLY_VALUES : AA_CHANNEL_PARAM_REFUSED;
}

/* "aeron:udp publications", "subscriptions", ...: the roles of a mask, for the reasons below. */
static void aa_channel_roles_text(int mask, char *buffer, size_t length)
{
    static const struct { int mask; const char *text; } names[] =
    {
        { ALL, "publications and subscriptions" }, { PUB, "publications" }, { SUB, "subscriptions" },
        { UDP, "aeron:udp publications and subscriptions" }, { UDP_PUB, "aeron:udp publications" },
        { UDP_SUB, "aeron:udp subscriptions" }, { PUB | UDP_SUB, "publications and aeron:udp subscriptions" },
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    {
        if (names[i].mask == mask)
        {
            snprintf(buffer, length, "%s", names[i].text);
            return;
        }
    }
    snprintf(buffer, length, "%s", "other channels");
}

/* Why a parameter with no reason of its own is refused in a role. */
static void aa_channel_default_why(const aa_channel_param_support_t *support, int where, char *buffer, size_t length)
{
    char roles[64];
    aa_channel_roles_text(support->meant, roles, sizeof(roles));
    if (0 != (support->meant & where))
    {
        snprintf(buffer, length, "%s", "this driver does not apply it here");
    }
    else if (SPY_SUB == where)
    {
        snprintf(buffer, length, "a spy reads the publication's log as it is; it applies to %s", roles);
    }
    else
    {
        snprintf(buffer, length, "it applies to %s", roles);
    }
}

static int aa_channel_check_param(const char *channel, const aa_uri_param_t *param, int where)
{
    const aa_channel_param_support_t *support = aa_channel_find_support(param->key);
    if (NULL == support)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: parameter %s=%s is not applied by this driver; remove it", channel, param->key, param->value);
        return -1;
    }
    int32_t status = aa_channel_param_status(support, where);
    if (AA_CHANNEL_PARAM_APPLIED == status || AA_CHANNEL_PARAM_IGNORED == status ||
        AA_CHANNEL_PARAM_OTHER_END == status || aa_channel_is_one_of(param->value, support->as_done))
    {
        return 0;
    }
    const bool is_publication = 0 != (where & PUB);
    char default_why[160];
    const char *why = support->why;
    if (NULL == why)
    {
        aa_channel_default_why(support, where, default_why, sizeof(default_why));
        why = default_why;
    }
    /* what to do instead: remove it, or give one of the values asking for what the driver does anyway */
    char instead[80] = "remove it";
    if (NULL != support->as_done)
    {
        size_t offset = (size_t)snprintf(instead, sizeof(instead), "only ");
        for (size_t i = 0; NULL != support->as_done[i]; i++)
        {
            int n = snprintf(instead + offset, sizeof(instead) - offset, "%s%s=%s", 0 == i ? "" : " or ",
                support->name, support->as_done[i]);
            offset += n > 0 && (size_t)n < sizeof(instead) - offset ? (size_t)n : 0;
        }
        snprintf(instead + offset, sizeof(instead) - offset, " is accepted");
    }
    const char *media = 0 != (where & (IPC_PUB | IPC_SUB)) ? "aeron:ipc" :
        (SPY_SUB == where ? "aeron-spy:aeron:udp" : "aeron:udp");
    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
        "channel %s: parameter %s=%s is not applied by this driver on a %s %s (%s); %s",
        channel, param->key, param->value, media, is_publication ? "publication" : "subscription", why, instead);
    return -1;
}

size_t aa_channel_params_count(void)
{
    return AA_CHANNEL_PARAMS_COUNT;
}

int aa_channel_param_describe(size_t index, aa_channel_param_info_t *info)
{
    if (index >= AA_CHANNEL_PARAMS_COUNT)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "channel parameter %zu of %zu", index, AA_CHANNEL_PARAMS_COUNT);
        return -1;
    }
    static const int roles[AA_CHANNEL_PARAM_ROLES] = { IPC_PUB, IPC_SUB, UDP_PUB, UDP_SUB, SPY_SUB };
    const aa_channel_param_support_t *support = &aa_channel_params[index];
    memset(info, 0, sizeof(*info));
    info->name = support->name;
    info->meaning = support->what;
    size_t offset = 0;
    for (size_t i = 0; NULL != support->as_done && NULL != support->as_done[i]; i++)
    {
        int n = snprintf(info->only_values + offset, sizeof(info->only_values) - offset, "%s%s",
            0 == i ? "" : " or ", support->as_done[i]);
        offset += n > 0 && (size_t)n < sizeof(info->only_values) - offset ? (size_t)n : 0;
    }
    static const char *const role_names[AA_CHANNEL_PARAM_ROLES] =
    {
        "aeron:ipc publication", "aeron:ipc subscription", "aeron:udp publication", "aeron:udp subscription",
        "spy"
    };
    offset = 0;
    for (int i = 0; i < AA_CHANNEL_PARAM_ROLES; i++)
    {
        info->status[i] = aa_channel_param_status(support, roles[i]);
        if (NULL == support->why &&
            (AA_CHANNEL_PARAM_REFUSED == info->status[i] || AA_CHANNEL_PARAM_ONLY_VALUES == info->status[i]))
        {
            char why[160];
            aa_channel_default_why(support, roles[i], why, sizeof(why));
            int n = snprintf(info->why_text + offset, sizeof(info->why_text) - offset, "%s%s: %s",
                0 == offset ? "" : "; ", role_names[i], why);
            offset += n > 0 && (size_t)n < sizeof(info->why_text) - offset ? (size_t)n : 0;
        }
    }
    if (NULL != support->why)
    {
        snprintf(info->why_text, sizeof(info->why_text), "%s", support->why);
    }
    return 0;
}

int aa_channel_check_applied(const aa_uri_t *uri, bool is_publication)
{
    const char *channel = uri->text;
    const bool is_ipc = AA_URI_MEDIA_IPC == uri->media;
    const int where = is_ipc ? (is_publication ? IPC_PUB : IPC_SUB) :
        (is_publication ? UDP_PUB : (uri->is_spy ? SPY_SUB : UDP_SUB));
    for (size_t i = 0; i < uri->params_count; i++)
    {
        if (aa_channel_check_param(channel, &uri->params[i], where) < 0)
        {
            return -1;
        }
    }
    /* Strategy names, checked at both ends: a name the driver does not know is a mistake anywhere. */
    const char *fc = aa_uri_find_param(uri, "fc");
    aa_flow_control_strategy_choice_t fc_choice;
    if (NULL != fc)
    {
        /* the options too, by building the strategy once */
        aa_flow_control_strategy_params_t fc_params;
        aa_flow_control_strategy_t *probe = NULL;
        aa_flow_control_strategy_params_default(&fc_params);
        if (aa_flow_control_strategy_select(false, fc, NULL, &fc_choice) < 0 ||
            aa_flow_control_strategy_create(&probe, &fc_choice, &fc_params) < 0)
        {
            AA_APPEND_ERR("channel %s", channel);
            return -1;
        }
        probe->fini(probe);
    }
    const char *cc = aa_uri_find_param(uri, "cc");
    aa_congestion_control_choice_t cc_choice;
    if (NULL != cc)
    {
        /* The strategy's options are checked now, on a typical image, rather than when the first
         * publisher's SETUP arrives (where an error could only be logged). */
        aa_congestion_control_params_t probe =
        {
            .term_length = 16 * 1024 * 1024, .mtu_length = 1408, .initial_window_length = 128 * 1024,
        };
        int32_t window_length = 0;
        if (aa_congestion_control_select(cc, &cc_choice) < 0 ||
            aa_congestion_control_initial_window_length(&cc_choice, &probe, &window_length) < 0)
        {
            AA_APPEND_ERR("channel %s", channel);
            return -1;
        }
    }
    return 0;
}

static bool aa_channel_values_equal(const char *a, const char *b)
{
    if (0 == strcmp(a, b))
    {
        return true;
    }
    int64_t sa = aa_parse_size(a), sb = aa_parse_size(b);
    if (sa >= 0 && sb >= 0)
    {
        return sa == sb;
    }
    int64_t da = aa_parse_duration_ns(a), db = aa_parse_duration_ns(b);
    return da >= 0 && db >= 0 && da == db;
}

int aa_channel_check_same_params(
    const aa_uri_t *uri, const aa_uri_t *existing, const char *existing_name, const char *const *keys,
    const char *const *default_values, const char *what)
{
    for (size_t i = 0; NULL != keys[i]; i++)
    {
        const char *value = aa_uri_find_param(uri, keys[i]);
        const char *existing_value = aa_uri_find_param(existing, keys[i]);
        const char *a = NULL != value ? value : default_values[i];
        const char *b = NULL != existing_value ? existing_value : default_values[i];
        if (!aa_channel_values_equal(a, b))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel %s: %s=%s%s differs from %s=%s%s of the %s it shares (channel %s); give both the same %s",
                uri->text, keys[i], a, NULL == value ? " (the default)" : "", keys[i], b,
                NULL == existing_value ? " (the default)" : "", what, existing_name, keys[i]);
            return -1;
        }
    }
    return 0;
}

const char *const aa_channel_receive_endpoint_keys[] =
{
    "rcv-wnd", "nak-delay", "reliable", "cc", "sparse", "so-rcvbuf", "so-sndbuf", "group", "gtag", NULL
};
const char *const aa_channel_send_endpoint_keys[] = { "so-sndbuf", "so-rcvbuf", NULL };
/* Besides term-length and mtu, which the conductor compares on the values it resolved. */
static const char *const aa_channel_shared_publication_keys[] =
{
    "fc", "pub-wnd", "linger", "eos", "sparse", "max-resend", "untethered-window-limit-timeout",
    "untethered-linger-timeout", "untethered-resting-timeout", NULL
};

#define AA_CHANNEL_SHARED_KEYS_MAX 12

/* A multicast group literal as endpoint (224.0.0.0/4, ff00::/8) or a control mode (multi-destination
 * cast): the channel's publications take the driver's multicast flow control default. */
static bool aa_channel_has_group_semantics(const aa_uri_t *uri)
{
    if (NULL != aa_uri_find_param(uri, "control-mode"))
    {
        return true;
    }
    const char *endpoint = aa_uri_find_param(uri, "endpoint");
    if (NULL == endpoint)
    {
        return false;
    }
    char host[128];
    const char *end = '[' == endpoint[0] ? strchr(endpoint, ']') : strrchr(endpoint, ':');
    const char *start = '[' == endpoint[0] ? endpoint + 1 : endpoint;
    size_t length = NULL != end ? (size_t)(end - start) : strlen(start);
    if (length >= sizeof(host))
    {
        return false;
    }
    memcpy(host, start, length);
    host[length] = '\0';
    struct in_addr v4;
    struct in6_addr v6;
    if (1 == inet_pton(AF_INET, host, &v4))
    {
        return 0xE0 == (((const uint8_t *)&v4.s_addr)[0] & 0xF0);
    }
    return 1 == inet_pton(AF_INET6, host, &v6) && 0xFF == v6.s6_addr[0];
}

int aa_channel_check_shared(
    const aa_driver_context_t *ctx, const aa_uri_t *uri, const aa_uri_t *existing, const char *existing_name,
    const char *const *keys, const char *what)
{
    char defaults[AA_CHANNEL_SHARED_KEYS_MAX][32];
    const char *default_values[AA_CHANNEL_SHARED_KEYS_MAX];
    for (size_t i = 0; NULL != keys[i]; i++)
    {
        if (i >= AA_CHANNEL_SHARED_KEYS_MAX)
        {
            AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "more shared channel parameters than the check holds");
            return -1;
        }
        const char *key = keys[i];
        char *d = defaults[i];
        if (0 == strcmp(key, "rcv-wnd"))
        {
            snprintf(d, 32, "%" PRId64, ctx->rcv_initial_window_length);
        }
        else if (0 == strcmp(key, "nak-delay"))
        {
            snprintf(d, 32, "%" PRId64 "ns", ctx->nak_unicast_delay_ns);
        }
        else if (0 == strcmp(key, "reliable"))
        {
            snprintf(d, 32, "%s", ctx->reliable_stream ? "true" : "false");
        }
        else if (0 == strcmp(key, "sparse"))
        {
            snprintf(d, 32, "%s", ctx->term_buffer_sparse_file ? "true" : "false");
        }
        else if (0 == strcmp(key, "so-rcvbuf"))
        {
            snprintf(d, 32, "%" PRId64, ctx->socket_so_rcvbuf);
        }
        else if (0 == strcmp(key, "so-sndbuf"))
        {
            snprintf(d, 32, "%" PRId64, ctx->socket_so_sndbuf);
        }
        else if (0 == strcmp(key, "linger"))
        {
            snprintf(d, 32, "%" PRId64 "ns", ctx->publication_linger_timeout_ns);
        }
        else if (0 == strcmp(key, "untethered-window-limit-timeout"))
        {
            snprintf(d, 32, "%" PRId64 "ns", ctx->untethered_window_limit_timeout_ns);
        }
        else if (0 == strcmp(key, "untethered-linger-timeout"))
        {
            snprintf(d, 32, "%" PRId64 "ns", aa_driver_context_untethered_linger_timeout_ns(ctx));
        }
        else if (0 == strcmp(key, "untethered-resting-timeout"))
        {
            snprintf(d, 32, "%" PRId64 "ns", ctx->untethered_resting_timeout_ns);
        }
        else if (0 == strcmp(key, "eos"))
        {
            snprintf(d, 32, "%s", "true");
        }
        else if (0 == strcmp(key, "cc"))
        {
            snprintf(d, 32, "%s", "static");
        }
        else if (0 == strcmp(key, "group"))
        {
            snprintf(d, 32, "%s", "infer");
        }
        else if (0 == strcmp(key, "max-resend"))
        {
            snprintf(d, 32, "%" PRId32, ctx->max_resend);
        }
        else if (0 == strcmp(key, "fc"))
        {
            snprintf(d, 32, "%s", aa_channel_has_group_semantics(uri) ?
                ctx->multicast_flow_control_strategy : ctx->unicast_flow_control_strategy);
        }
        else if (0 == strcmp(key, "gtag"))
        {
            if (ctx->has_receiver_group_tag)
            {
                snprintf(d, 32, "%" PRId64, ctx->receiver_group_tag);
            }
            else
            {
                snprintf(d, 32, "%s", "(none)");
            }
        }
        else
        {
            snprintf(d, 32, "%s", "(none)");    /* pub-wnd: the driver's window for the term length */
        }
        default_values[i] = d;
    }
    return aa_channel_check_same_params(uri, existing, existing_name, keys, default_values, what);
}

int aa_channel_check_shared_publication(const aa_driver_context_t *ctx, const aa_uri_t *uri, const aa_uri_t *existing)
{
    return aa_channel_check_shared(ctx, uri, existing, existing->text, aa_channel_shared_publication_keys, "publication");
}
