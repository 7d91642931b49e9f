#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uri/aa_uri.h"
#include "util/aa_parse.h"
#include "util/aa_error.h"

#define AA_URI_TERM_MIN_LENGTH (64 * 1024)
#define AA_URI_TERM_MAX_LENGTH (1024 * 1024 * 1024)
#define AA_URI_FRAME_ALIGNMENT 32
#define AA_URI_MTU_MAX_LENGTH 65504

#define AA_URI_FOR_IPC 0x1
#define AA_URI_FOR_UDP 0x2
#define AA_URI_FOR_BOTH (AA_URI_FOR_IPC | AA_URI_FOR_UDP)

typedef enum aa_uri_value_kind_enum
{
    AA_URI_VALUE_TEXT,
    AA_URI_VALUE_BOOL,
    AA_URI_VALUE_INT32,
    AA_URI_VALUE_INT64,
    AA_URI_VALUE_DURATION,
    AA_URI_VALUE_SIZE,
    AA_URI_VALUE_TERM_LENGTH,
    AA_URI_VALUE_MTU,
    AA_URI_VALUE_TERM_OFFSET,
    AA_URI_VALUE_SESSION_ID,
    AA_URI_VALUE_HOST_PORT,
    AA_URI_VALUE_INTERFACE,
    AA_URI_VALUE_CONTROL_MODE,
    AA_URI_VALUE_TTL,
    AA_URI_VALUE_GROUP,
    AA_URI_VALUE_TAGS,
    AA_URI_VALUE_MAX_RESEND,
    AA_URI_VALUE_FLOW_CONTROL,
    AA_URI_VALUE_CONGESTION_CONTROL,
    AA_URI_VALUE_TIMESTAMP_OFFSET,
    AA_URI_VALUE_ATS,
    AA_URI_VALUE_RESPONSE_CORRELATION_ID
}
aa_uri_value_kind_t;

typedef struct aa_uri_param_spec_stct
{
    const char *name;
    int media;
    aa_uri_value_kind_t kind;
}
aa_uri_param_spec_t;

/* Every accepted parameter (reference 7.1, 7.2), the media it belongs to and the form of its value. */
static const aa_uri_param_spec_t aa_uri_param_specs[] =
{
    { "term-length", AA_URI_FOR_BOTH, AA_URI_VALUE_TERM_LENGTH },
    { "mtu", AA_URI_FOR_BOTH, AA_URI_VALUE_MTU },
    { "init-term-id", AA_URI_FOR_BOTH, AA_URI_VALUE_INT32 },
    { "term-id", AA_URI_FOR_BOTH, AA_URI_VALUE_INT32 },
    { "term-offset", AA_URI_FOR_BOTH, AA_URI_VALUE_TERM_OFFSET },
    { "session-id", AA_URI_FOR_BOTH, AA_URI_VALUE_SESSION_ID },
    { "linger", AA_URI_FOR_BOTH, AA_URI_VALUE_DURATION },
    { "sparse", AA_URI_FOR_BOTH, AA_URI_VALUE_BOOL },
    { "tether", AA_URI_FOR_BOTH, AA_URI_VALUE_BOOL },
    { "eos", AA_URI_FOR_BOTH, AA_URI_VALUE_BOOL },
    { "alias", AA_URI_FOR_BOTH, AA_URI_VALUE_TEXT },
    { "tags", AA_URI_FOR_BOTH, AA_URI_VALUE_TAGS },
    { "rejoin", AA_URI_FOR_BOTH, AA_URI_VALUE_BOOL },
    { "reliable", AA_URI_FOR_BOTH, AA_URI_VALUE_BOOL },
    { "group", AA_URI_FOR_BOTH, AA_URI_VALUE_GROUP },
    { "ssc", AA_URI_FOR_BOTH, AA_URI_VALUE_BOOL },
    { "max-resend", AA_URI_FOR_BOTH, AA_URI_VALUE_MAX_RESEND },
    { "untethered-window-limit-timeout", AA_URI_FOR_BOTH, AA_URI_VALUE_DURATION },
    { "untethered-resting-timeout", AA_URI_FOR_BOTH, AA_URI_VALUE_DURATION },
    { "untethered-linger-timeout", AA_URI_FOR_BOTH, AA_URI_VALUE_DURATION },
    { "spies-simulate-connection", AA_URI_FOR_BOTH, AA_URI_VALUE_BOOL },
    { "pub-wnd", AA_URI_FOR_BOTH, AA_URI_VALUE_SIZE },
    { "stream-id", AA_URI_FOR_BOTH, AA_URI_VALUE_INT32 },
    { "channel-rcv-ts-offset", AA_URI_FOR_BOTH, AA_URI_VALUE_TIMESTAMP_OFFSET },
    { "channel-snd-ts-offset", AA_URI_FOR_BOTH, AA_URI_VALUE_TIMESTAMP_OFFSET },
    { "media-rcv-ts-offset", AA_URI_FOR_BOTH, AA_URI_VALUE_TIMESTAMP_OFFSET },
    { "response-correlation-id", AA_URI_FOR_BOTH, AA_URI_VALUE_RESPONSE_CORRELATION_ID },
    { "endpoint", AA_URI_FOR_UDP, AA_URI_VALUE_HOST_PORT },
    { "interface", AA_URI_FOR_UDP, AA_URI_VALUE_INTERFACE },
    { "control", AA_URI_FOR_UDP, AA_URI_VALUE_HOST_PORT },
    /* aeron:ipc takes control-mode=response (a response subscription, reference wave3 1.3) */
    { "control-mode", AA_URI_FOR_BOTH, AA_URI_VALUE_CONTROL_MODE },
    { "ttl", AA_URI_FOR_UDP, AA_URI_VALUE_TTL },
    { "rcv-wnd", AA_URI_FOR_UDP, AA_URI_VALUE_SIZE },
    /* UDP socket buffers; Aeron's drivers accept them on aeron:ipc too, and its clients send them there */
    { "so-sndbuf", AA_URI_FOR_BOTH, AA_URI_VALUE_SIZE },
    { "so-rcvbuf", AA_URI_FOR_BOTH, AA_URI_VALUE_SIZE },
    { "nak-delay", AA_URI_FOR_UDP, AA_URI_VALUE_DURATION },
    { "fc", AA_URI_FOR_UDP, AA_URI_VALUE_FLOW_CONTROL },
    { "gtag", AA_URI_FOR_UDP, AA_URI_VALUE_INT64 },
    { "cc", AA_URI_FOR_UDP, AA_URI_VALUE_CONGESTION_CONTROL },
    { "response-endpoint", AA_URI_FOR_UDP, AA_URI_VALUE_HOST_PORT },
    { "ats", AA_URI_FOR_UDP, AA_URI_VALUE_ATS },
};

#define AA_URI_PARAM_SPEC_COUNT (sizeof(aa_uri_param_specs) / sizeof(aa_uri_param_specs[0]))

static int aa_uri_media_mask(aa_uri_media_t media)
{
    return AA_URI_MEDIA_IPC == media ? AA_URI_FOR_IPC : AA_URI_FOR_UDP;
}

static const char *aa_uri_media_name(aa_uri_media_t media)
{
    return AA_URI_MEDIA_IPC == media ? "ipc" : "udp";
}

bool aa_uri_is_param_of(aa_uri_media_t media, const char *key)
{
    int mask = aa_uri_media_mask(media);
    for (size_t i = 0; i < AA_URI_PARAM_SPEC_COUNT; i++)
    {
        if (0 != (aa_uri_param_specs[i].media & mask) && 0 == strcmp(aa_uri_param_specs[i].name, key))
        {
            return true;
        }
    }
    return false;
}

void aa_uri_accepted_params(aa_uri_media_t media, char *buffer, size_t length)
{
    size_t offset = 0;
    int mask = aa_uri_media_mask(media);
    if (0 == length)
    {
        return;
    }
    buffer[0] = '\0';
    for (size_t i = 0; i < AA_URI_PARAM_SPEC_COUNT && offset < length - 1; i++)
    {
        if (0 != (aa_uri_param_specs[i].media & mask))
        {
            int n = snprintf(buffer + offset, length - offset, "%s%s", 0 == offset ? "" : ", ", aa_uri_param_specs[i].name);
            offset += n > 0 ? (size_t)n : 0;
        }
    }
}

static int aa_uri_bad_value(const char *key, const char *value, const char *accepted);

static size_t aa_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40)
    {
        return 99;
    }
    size_t prev[41], cur[41];
    for (size_t j = 0; j <= lb; j++)
    {
        prev[j] = j;
    }
    for (size_t i = 1; i <= la; i++)
    {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++)
        {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = prev[j] + 1;
            best = cur[j - 1] + 1 < best ? cur[j - 1] + 1 : best;
            best = prev[j - 1] + cost < best ? prev[j - 1] + cost : best;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev[j - 2] + 1 < best)
            {
                best = prev[j - 2] + 1;
            }
            cur[j] = best;
        }
        memcpy(prev, cur, sizeof(size_t) * (lb + 1));
    }
    return prev[lb];
}

static const aa_uri_param_spec_t *aa_uri_find_spec(aa_uri_media_t media, const char *key)
{
    int mask = aa_uri_media_mask(media);
    for (size_t i = 0; i < AA_URI_PARAM_SPEC_COUNT; i++)
    {
        if (0 != (aa_uri_param_specs[i].media & mask) && 0 == strcmp(aa_uri_param_specs[i].name, key))
        {
            return &aa_uri_param_specs[i];
        }
    }
    return NULL;
}

static int aa_uri_check_param_name(const char *uri, aa_uri_media_t media, const char *key)
{
    if (NULL != aa_uri_find_spec(media, key))
    {
        return 0;
    }
    int mask = aa_uri_media_mask(media);
    const char *closest = NULL;
    size_t closest_distance = 3;
    for (size_t i = 0; i < AA_URI_PARAM_SPEC_COUNT; i++)
    {
        if (0 == (aa_uri_param_specs[i].media & mask))
        {
            continue;
        }
        size_t d = aa_edit_distance(key, aa_uri_param_specs[i].name);
        if (d < closest_distance)
        {
            closest_distance = d;
            closest = aa_uri_param_specs[i].name;
        }
    }
    char accepted[1024];
    aa_uri_accepted_params(media, accepted, sizeof(accepted));
    if (NULL != closest)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: unknown parameter '%s' (did you mean '%s'?); accepted for aeron:%s: %s",
            uri, key, closest, aa_uri_media_name(media), accepted);
    }
    else
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel %s: unknown parameter '%s'; accepted for aeron:%s: %s",
            uri, key, aa_uri_media_name(media), accepted);
    }
    return -1;
}

static bool aa_uri_text_to_int64(const char *text, int64_t *value)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (0 != errno || end == text || '\0' != *end)
    {
        return false;
    }
    *value = v;
    return true;
}

static bool aa_uri_text_in_range(const char *text, int64_t min, int64_t max, int64_t *value)
{
    return aa_uri_text_to_int64(text, value) && *value >= min && *value <= max;
}

static bool aa_uri_text_is_one_of(const char *text, const char *const *choices)
{
    for (size_t i = 0; NULL != choices[i]; i++)
    {
        if (0 == strcmp(text, choices[i]))
        {
            return true;
        }
    }
    return false;
}

static int aa_uri_split_address(
    const char *value, bool port_required, bool prefix_allowed, aa_uri_address_t *address, const char **reason)
{
    memset(address, 0, sizeof(*address));
    address->port = -1;
    address->prefix_length = -1;
    const char *p = value;
    size_t host_length;
    if ('[' == *p)
    {
        const char *close = strchr(p, ']');
        if (NULL == close)
        {
            *reason = "an IPv6 address closed by ']' (e.g. [::1]:40123)";
            return -1;
        }
        host_length = (size_t)(close - p - 1);
        memcpy(address->host, p + 1, host_length);
        address->is_bracketed = true;
        p = close + 1;
    }
    else
    {
        host_length = strcspn(p, ":/");
        memcpy(address->host, p, host_length);
        p += host_length;
        if (':' == *p && NULL != strchr(p + 1, ':'))
        {
            *reason = "an IPv6 address in brackets (e.g. [::1]:40123)";
            return -1;
        }
    }
    address->host[host_length] = '\0';
    if (0 == host_length)
    {
        *reason = port_required ? "host:port with a host name or address" : "a host name or address";
        return -1;
    }
    if (':' == *p)
    {
        int64_t port;
        size_t digits = strcspn(p + 1, "/");
        char text[16];
        if (0 == digits || digits >= sizeof(text))
        {
            *reason = "a port from 0 to 65535 after ':'";
            return -1;
        }
        memcpy(text, p + 1, digits);
        text[digits] = '\0';
        if (!aa_uri_text_in_range(text, 0, 65535, &port) || !isdigit((unsigned char)text[0]))
        {
            *reason = "a port from 0 to 65535 after ':'";
            return -1;
        }
        address->has_port = true;
        address->port = (int32_t)port;
        p += 1 + digits;
    }
    if ('/' == *p)
    {
        int64_t prefix;
        if (!prefix_allowed)
        {
            *reason = "host:port without a /prefix";
            return -1;
        }
        if (!aa_uri_text_in_range(p + 1, 0, 128, &prefix) || !isdigit((unsigned char)p[1]))
        {
            *reason = "a prefix length from 0 to 128 after '/' (e.g. 192.168.1.0/24)";
            return -1;
        }
        address->has_prefix = true;
        address->prefix_length = (int32_t)prefix;
        p += strlen(p);
    }
    if ('\0' != *p)
    {
        *reason = prefix_allowed ? "host[:port][/prefix] (e.g. 192.168.1.10, 192.168.1.0:40456/24, [::1])" :
            "host:port (e.g. localhost:40123, 192.168.1.10:40123, [::1]:40123)";
        return -1;
    }
    if (port_required && !address->has_port)
    {
        *reason = "host:port (e.g. localhost:40123, 192.168.1.10:40123, [::1]:40123)";
        return -1;
    }
    return 0;
}

int aa_uri_parse_address(
    const char *key, const char *value, bool port_required, bool prefix_allowed, aa_uri_address_t *address)
{
    const char *reason = NULL;
    if (strlen(value) >= sizeof(address->host))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel parameter %s is too long", key);
        return -1;
    }
    if (aa_uri_split_address(value, port_required, prefix_allowed, address, &reason) < 0)
    {
        return aa_uri_bad_value(key, value, reason);
    }
    return 0;
}

/* A tag: an unsigned decimal (reference wave 3, section 2: aeron_uri_parse_tag). */
static bool aa_uri_text_to_tag(const char *text, int64_t *value)
{
    return '\0' != text[0] && strspn(text, "0123456789") == strlen(text) && aa_uri_text_to_int64(text, value);
}

static bool aa_uri_check_tags(const char *text, aa_uri_tags_t *tags)
{
    char copy[AA_URI_MAX_VALUE_LENGTH];
    memset(tags, 0, sizeof(*tags));
    snprintf(copy, sizeof(copy), "%s", text);
    char *comma = strchr(copy, ',');
    if (NULL != comma)
    {
        *comma = '\0';
        if ('\0' != comma[1])
        {
            if (!aa_uri_text_to_tag(comma + 1, &tags->entity_tag))
            {
                return false;
            }
            tags->has_entity_tag = true;
        }
    }
    if ('\0' != copy[0])
    {
        if (!aa_uri_text_to_tag(copy, &tags->channel_tag))
        {
            return false;
        }
        tags->has_channel_tag = true;
    }
    return tags->has_channel_tag || tags->has_entity_tag;
}

/* Aeron's words first (aeron_udp_channel.c), then the accepted form. */
static int aa_uri_tags_error(const char *channel, const char *value)
{
    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
        "could not parse channel tag string: %s; channel %s: expected tags=<channel tag>[,<entity tag>] as unsigned "
        "integers (e.g. tags=1001 or tags=1001,7)", value, channel);
    return -1;
}

int aa_uri_get_tags(const aa_uri_t *uri, aa_uri_tags_t *tags)
{
    const char *text = aa_uri_find_param(uri, "tags");
    if (NULL == text)
    {
        memset(tags, 0, sizeof(*tags));
        return 0;
    }
    if (!aa_uri_check_tags(text, tags))
    {
        return aa_uri_tags_error(uri->text, text);
    }
    return 1;
}

/* <name>[,<option>...]: a strategy name as the registry takes them (util/aa_registry.h), which the
 * driver looks up; the reference strategies' options (g:<tag>[/<min size>], t:<timeout>) are checked
 * here, others are the named strategy's to check. */
static bool aa_uri_check_strategy(const char *text, bool is_flow_control)
{
    static const char *const reference_strategies[] = { "max", "min", "tagged", NULL };
    char copy[AA_URI_MAX_VALUE_LENGTH];
    snprintf(copy, sizeof(copy), "%s", text);
    const char *comma = strchr(copy, ',');
    size_t name_length = NULL == comma ? strlen(copy) : (size_t)(comma - copy);
    if (0 == name_length || name_length >= 64 ||
        name_length != strspn(copy, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"))
    {
        return false;
    }
    copy[name_length] = '\0';
    bool is_reference = is_flow_control && aa_uri_text_is_one_of(copy, reference_strategies);
    if (NULL == comma)
    {
        return true;
    }
    char *save = NULL;
    char *token = strtok_r(copy + name_length + 1, ",", &save);
    if (NULL == token)
    {
        return false;
    }
    for (; NULL != token; token = strtok_r(NULL, ",", &save))
    {
        int64_t v;
        if (!is_reference)
        {
            continue;
        }
        if (0 == strncmp(token, "t:", 2))
        {
            if (aa_parse_duration_ns(token + 2) < 0)
            {
                return false;
            }
        }
        else if (0 == strncmp(token, "g:", 2))
        {
            char *slash = strchr(token + 2, '/');
            if (NULL != slash)
            {
                *slash = '\0';
                if (!aa_uri_text_in_range(slash + 1, 0, INT32_MAX, &v))
                {
                    return false;
                }
            }
            if ('\0' != token[2] && !aa_uri_text_to_int64(token + 2, &v))
            {
                return false;
            }
        }
        else
        {
            return false;
        }
    }
    return true;
}

static int aa_uri_value_error(const char *channel, const char *key, const char *value, const char *expected)
{
    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel %s: parameter %s=%s is invalid: expected %s",
        channel, key, value, expected);
    return -1;
}

/* Aeron's C driver's words first (as a real aeronmd answers them), then what is expected. */
static int aa_uri_value_error_in_aerons_words(
    const char *channel, const char *key, const char *value, const char *expected, const char *format, int64_t number)
{
    char aerons[160];
    if (NULL == format)
    {
        snprintf(aerons, sizeof(aerons), "could not parse %s=%s in URI", key, value);
    }
    else
    {
        snprintf(aerons, sizeof(aerons), format, number);
    }
    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "%s. Channel %s: parameter %s=%s is invalid: expected %s",
        aerons, channel, key, value, expected);
    return -1;
}

static int aa_uri_check_value(const char *channel, const aa_uri_param_spec_t *spec, const char *value)
{
    static const char *const bools[] = { "true", "false", NULL };
    static const char *const groups[] = { "true", "false", "infer", NULL };
    static const char *const control_modes[] = { "dynamic", "manual", "response", NULL };
    const char *key = spec->name;
    int64_t v = 0;
    aa_uri_address_t address;
    aa_uri_tags_t tags;
    const char *reason = NULL;

    switch (spec->kind)
    {
        case AA_URI_VALUE_TEXT:
            return 0;

        case AA_URI_VALUE_BOOL:
            return aa_uri_text_is_one_of(value, bools) ? 0 : aa_uri_value_error(channel, key, value, "true or false");

        case AA_URI_VALUE_INT32:
            return aa_uri_text_in_range(value, INT32_MIN, INT32_MAX, &v) ?
                0 : aa_uri_value_error(channel, key, value, "a 32-bit integer");

        case AA_URI_VALUE_INT64:
            return aa_uri_text_to_int64(value, &v) ? 0 : aa_uri_value_error(channel, key, value, "a 64-bit integer");

        case AA_URI_VALUE_DURATION:
            return aa_parse_duration_ns(value) >= 0 ? 0 : aa_uri_value_error_in_aerons_words(
                channel, key, value, "a duration such as 500ms, 5s or 1000000 (ns)", NULL, 0);

        case AA_URI_VALUE_SIZE:
            v = aa_parse_size(value);
            return v >= 0 && v <= INT32_MAX ?
                0 : aa_uri_value_error(channel, key, value, "a size in bytes below 2g with an optional k, m or g suffix (e.g. 128k)");

        case AA_URI_VALUE_TERM_LENGTH:
            v = aa_parse_size(value);
            if (v < 0)
            {
                return aa_uri_value_error(channel, key, value, "a size in bytes with an optional k, m or g suffix (e.g. 64k)");
            }
            if (v < AA_URI_TERM_MIN_LENGTH || v > AA_URI_TERM_MAX_LENGTH || 0 != (v & (v - 1)))
            {
                /* Aeron's checks in its order (aeron_logbuffer_check_term_length) */
                const char *format = v < AA_URI_TERM_MIN_LENGTH ?
                    "term length less than min length of 65536: length=%" PRId64 :
                    (v > AA_URI_TERM_MAX_LENGTH ? "term length greater than max length of 1073741824: length=%" PRId64 :
                    "term length not a power of 2: length=%" PRId64);
                return aa_uri_value_error_in_aerons_words(channel, key, value,
                    "a power of two between 64k and 1g (e.g. 65536 (64k), 1048576 (1m), 16777216 (16m))", format, v);
            }
            return 0;

        case AA_URI_VALUE_MTU:
            v = aa_parse_size(value);
            if (v <= AA_URI_FRAME_ALIGNMENT || v > AA_URI_MTU_MAX_LENGTH || 0 != (v % AA_URI_FRAME_ALIGNMENT))
            {
                /* Aeron's checks in its order (aeron_driver_context_validate_mtu_length) */
                const char *format = v < 0 ? NULL : (v <= AA_URI_FRAME_ALIGNMENT || v > AA_URI_MTU_MAX_LENGTH ?
                    "mtuLength must be a > HEADER_LENGTH and <= MAX_UDP_PAYLOAD_LENGTH: mtuLength=%" PRId64 :
                    "mtuLength must be a multiple of FRAME_ALIGNMENT: mtuLength=%" PRId64);
                return aa_uri_value_error_in_aerons_words(channel, key, value,
                    "a multiple of 32 greater than 32 and at most 65504 (e.g. 1408, 8k)", format, v);
            }
            return 0;

        case AA_URI_VALUE_TERM_OFFSET:
            if (!aa_uri_text_in_range(value, 0, AA_URI_TERM_MAX_LENGTH, &v) || 0 != (v % AA_URI_FRAME_ALIGNMENT))
            {
                return aa_uri_value_error(channel, key, value,
                    "a multiple of 32 between 0 and the term length (e.g. 0, 4096)");
            }
            return 0;

        case AA_URI_VALUE_SESSION_ID:
            if (0 == strncmp(value, "tag:", 4) ?
                aa_uri_text_to_int64(value + 4, &v) : aa_uri_text_in_range(value, INT32_MIN, INT32_MAX, &v))
            {
                return 0;
            }
            return aa_uri_value_error(channel, key, value, "a 32-bit integer or tag:<entity tag>");

        case AA_URI_VALUE_HOST_PORT:
        case AA_URI_VALUE_INTERFACE:
        {
            bool is_interface = AA_URI_VALUE_INTERFACE == spec->kind;
            if (aa_uri_split_address(value, !is_interface, is_interface, &address, &reason) < 0)
            {
                return aa_uri_value_error(channel, key, value, reason);
            }
            return 0;
        }

        case AA_URI_VALUE_CONTROL_MODE:
            return aa_uri_text_is_one_of(value, control_modes) ?
                0 : aa_uri_value_error(channel, key, value, "dynamic, manual or response");

        case AA_URI_VALUE_TTL:
            return aa_uri_text_in_range(value, 0, 255, &v) ?
                0 : aa_uri_value_error(channel, key, value, "a multicast time to live from 0 to 255");

        case AA_URI_VALUE_GROUP:
            return aa_uri_text_is_one_of(value, groups) ? 0 : aa_uri_value_error(channel, key, value, "true, false or infer");

        case AA_URI_VALUE_TAGS:
            return aa_uri_check_tags(value, &tags) ? 0 : aa_uri_tags_error(channel, value);

        case AA_URI_VALUE_MAX_RESEND:
            return aa_uri_text_in_range(value, 1, 256, &v) ? 0 : aa_uri_value_error(channel, key, value, "an integer from 1 to 256");

        case AA_URI_VALUE_FLOW_CONTROL:
            return aa_uri_check_strategy(value, true) ?
                0 : aa_uri_value_error(channel, key, value,
                "a flow control strategy name with options after commas; max, min and tagged take "
                ",g:<group tag>[/<min group size>] and ,t:<timeout> (e.g. min,t:5s or tagged,g:100/2)");

        case AA_URI_VALUE_CONGESTION_CONTROL:
            return aa_uri_check_strategy(value, false) ?
                0 : aa_uri_value_error(channel, key, value,
                "a congestion control strategy name with options after commas (e.g. static)");

        case AA_URI_VALUE_TIMESTAMP_OFFSET:
            return 0 == strcmp(value, "reserved") || aa_uri_text_in_range(value, 0, INT32_MAX, &v) ?
                0 : aa_uri_value_error(channel, key, value, "a byte offset into the payload or 'reserved'");

        case AA_URI_VALUE_ATS:
            if (0 == strcmp(value, "false"))
            {
                return 0;
            }
            if (0 == strcmp(value, "true"))
            {
                AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                    "channel %s: ats=true asks for the encrypted transport, which aeron_async does not provide", channel);
                return -1;
            }
            return aa_uri_value_error(channel, key, value, "true or false");

        case AA_URI_VALUE_RESPONSE_CORRELATION_ID:
            if (0 == strcmp(value, "prototype") || (aa_uri_text_to_int64(value, &v) && v >= -1))
            {
                return 0;
            }
            /* Aeron's words (reference wave3 1.1), then ours naming the channel */
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "invalid response-correlation-id, must be a number greater than or equal to -1, or 'prototype'. "
                "Channel %s has response-correlation-id=%s", channel, value);
            return -1;
    }
    return 0;
}

int aa_uri_get_response_correlation_id(const aa_uri_t *uri, int64_t *value)
{
    const char *text = aa_uri_find_param(uri, "response-correlation-id");
    *value = AA_URI_RESPONSE_CORRELATION_ID_NONE;
    if (NULL == text)
    {
        return 0;
    }
    if (0 == strcmp(text, "prototype"))
    {
        *value = AA_URI_RESPONSE_CORRELATION_ID_PROTOTYPE;
        return 1;
    }
    int64_t v = 0;
    if (!aa_uri_text_to_int64(text, &v) || v < -1)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "invalid response-correlation-id, must be a number greater than or equal to -1, or 'prototype'. "
            "Channel %s has response-correlation-id=%s", uri->text, text);
        return -1;
    }
    *value = v;
    return 1;
}

bool aa_uri_is_response_control_mode(const aa_uri_t *uri)
{
    const char *mode = aa_uri_find_param(uri, "control-mode");
    return NULL != mode && 0 == strcmp(mode, "response");
}

static bool aa_uri_size_of(const aa_uri_t *uri, const char *key, int64_t *value)
{
    const char *text = aa_uri_find_param(uri, key);
    if (NULL == text)
    {
        return false;
    }
    *value = aa_parse_size(text);
    return true;
}

/* Checks every value, then the rules that span parameters (reference 7.1, 7.2, 4.2). */
static int aa_uri_validate(const char *channel, const aa_uri_t *uri)
{
    for (size_t i = 0; i < uri->params_count; i++)
    {
        const aa_uri_param_spec_t *spec = aa_uri_find_spec(uri->media, uri->params[i].key);
        if (NULL != spec && aa_uri_check_value(channel, spec, uri->params[i].value) < 0)
        {
            return -1;
        }
    }

    int position_params = (NULL != aa_uri_find_param(uri, "init-term-id")) +
        (NULL != aa_uri_find_param(uri, "term-id")) + (NULL != aa_uri_find_param(uri, "term-offset"));
    if (0 != position_params && 3 != position_params)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: init-term-id, term-id and term-offset must be given together "
            "(e.g. init-term-id=0|term-id=2|term-offset=4096)", channel);
        return -1;
    }

    int64_t term_length = 0, term_offset = 0, mtu = 0, window = 0, rcvbuf = 0;
    bool has_term_length = aa_uri_size_of(uri, "term-length", &term_length);
    bool has_mtu = aa_uri_size_of(uri, "mtu", &mtu);
    if (has_term_length && NULL != aa_uri_find_param(uri, "term-offset"))
    {
        aa_uri_text_to_int64(aa_uri_find_param(uri, "term-offset"), &term_offset);
        if (term_offset > term_length)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel %s: term-offset=%" PRId64 " is beyond term-length=%" PRId64, channel, term_offset, term_length);
            return -1;
        }
    }
    if (aa_uri_size_of(uri, "pub-wnd", &window))
    {
        if ((has_term_length && window > term_length / 2) || (has_mtu && window < mtu))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel %s: pub-wnd=%" PRId64 " must be at least the mtu and at most half the term length",
                channel, window);
            return -1;
        }
    }
    if (aa_uri_size_of(uri, "rcv-wnd", &window) && aa_uri_size_of(uri, "so-rcvbuf", &rcvbuf) && window > rcvbuf)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: rcv-wnd=%" PRId64 " is larger than so-rcvbuf=%" PRId64 "; the window must fit the socket buffer",
            channel, window, rcvbuf);
        return -1;
    }

    if (AA_URI_MEDIA_UDP == uri->media)
    {
        const char *control_mode = aa_uri_find_param(uri, "control-mode");
        bool has_control = NULL != aa_uri_find_param(uri, "control");
        if (NULL != control_mode && 0 == strcmp(control_mode, "dynamic") && !has_control)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel %s: control-mode=dynamic needs control=host:port, the publisher's control address", channel);
            return -1;
        }
        if (NULL == aa_uri_find_param(uri, "endpoint") && !has_control && NULL == aa_uri_find_param(uri, "tags") &&
            (NULL == control_mode || 0 == strcmp(control_mode, "dynamic")))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "URIs for UDP must specify endpoint, control, tags, or control-mode=manual/response: channel %s "
                "(e.g. aeron:udp?endpoint=localhost:40123)", channel);
            return -1;
        }
    }
    return 0;
}

/* Neither aeron: nor aeron-spy:aeron: followed by ipc or udp: Aeron's words (aeron_uri_parse), then the fix. */
static int aa_uri_bad_scheme_or_transport(const char *uri, const char *forms)
{
    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
        "invalid URI scheme or transport: %s. A channel starts with aeron: (or aeron-spy:aeron:) and the media ipc or "
        "udp (e.g. %s)", uri, forms);
    return -1;
}

int aa_uri_parse(const char *uri, aa_uri_t *parsed)
{
    static const char *forms = "aeron:ipc, aeron:ipc?term-length=64k, aeron:udp?endpoint=host:port";
    memset(parsed, 0, sizeof(*parsed));
    if (NULL == uri)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel is missing; use a URI such as %s", forms);
        return -1;
    }
    size_t length = strlen(uri);
    if (length >= AA_URI_MAX_LENGTH)
    {
        /* Aeron's words (aeron_uri_parse), then the fix */
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "URI length (%zu) exceeds max supported length (%d): %.80s... Shorten the channel (an alias= is often "
            "the long part)", length, AA_URI_MAX_LENGTH - 1, uri);
        return -1;
    }
    memcpy(parsed->text, uri, length + 1);
    const char *p = uri;
    if (0 == strncmp(p, "aeron-spy:", 10))
    {
        parsed->is_spy = true;
        p += 10;
    }
    if (0 != strncmp(p, "aeron:", 6))
    {
        return aa_uri_bad_scheme_or_transport(uri, forms);
    }
    p += 6;
    const char *query = strchr(p, '?');
    size_t media_length = NULL == query ? strlen(p) : (size_t)(query - p);
    if (3 == media_length && 0 == strncmp(p, "ipc", 3))
    {
        parsed->media = AA_URI_MEDIA_IPC;
    }
    else if (3 == media_length && 0 == strncmp(p, "udp", 3))
    {
        parsed->media = AA_URI_MEDIA_UDP;
    }
    else
    {
        return aa_uri_bad_scheme_or_transport(uri, forms);
    }
    if (NULL == query)
    {
        return aa_uri_validate(uri, parsed);
    }
    const char *cursor = query + 1;
    while ('\0' != *cursor)
    {
        const char *end = strchr(cursor, '|');
        size_t param_length = NULL == end ? strlen(cursor) : (size_t)(end - cursor);
        const char *eq = memchr(cursor, '=', param_length);
        if (NULL == eq)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel '%s': parameter '%.*s' has no value; write key=value pairs separated by '|'",
                uri, (int)param_length, cursor);
            return -1;
        }
        size_t key_length = (size_t)(eq - cursor);
        size_t value_length = param_length - key_length - 1;
        if (0 == key_length)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel '%s': a parameter has an empty name", uri);
            return -1;
        }
        if (key_length >= AA_URI_MAX_KEY_LENGTH || value_length >= AA_URI_MAX_VALUE_LENGTH)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel '%s': parameter '%.*s' is too long", uri,
                (int)(key_length < 40 ? key_length : 40), cursor);
            return -1;
        }
        if (parsed->params_count >= AA_URI_MAX_PARAMS)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel '%s' has more than %d parameters", uri, AA_URI_MAX_PARAMS);
            return -1;
        }
        aa_uri_param_t *param = &parsed->params[parsed->params_count];
        memcpy(param->key, cursor, key_length);
        param->key[key_length] = '\0';
        memcpy(param->value, eq + 1, value_length);
        param->value[value_length] = '\0';
        if (aa_uri_check_param_name(uri, parsed->media, param->key) < 0)
        {
            return -1;
        }
        if (NULL != aa_uri_find_param(parsed, param->key))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel '%s': parameter '%s' is given twice", uri, param->key);
            return -1;
        }
        parsed->params_count++;
        if (NULL == end)
        {
            break;
        }
        cursor = end + 1;
    }
    return aa_uri_validate(uri, parsed);
}

const char *aa_uri_find_param(const aa_uri_t *uri, const char *key)
{
    for (size_t i = 0; i < uri->params_count; i++)
    {
        if (0 == strcmp(uri->params[i].key, key))
        {
            return uri->params[i].value;
        }
    }
    return NULL;
}

static int aa_uri_bad_value(const char *key, const char *value, const char *accepted)
{
    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel parameter %s=%s is invalid: expected %s", key, value, accepted);
    return -1;
}

int aa_uri_get_int64(const aa_uri_t *uri, const char *key, int64_t *value)
{
    const char *text = aa_uri_find_param(uri, key);
    if (NULL == text)
    {
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (0 != errno || end == text || '\0' != *end)
    {
        return aa_uri_bad_value(key, text, "an integer");
    }
    *value = v;
    return 1;
}

int aa_uri_get_int32(const aa_uri_t *uri, const char *key, int32_t *value)
{
    int64_t v = 0;
    int rc = aa_uri_get_int64(uri, key, &v);
    if (1 == rc)
    {
        if (v < INT32_MIN || v > INT32_MAX)
        {
            return aa_uri_bad_value(key, aa_uri_find_param(uri, key), "a 32-bit integer");
        }
        *value = (int32_t)v;
    }
    return rc;
}

int aa_uri_get_size(const aa_uri_t *uri, const char *key, int64_t *value)
{
    const char *text = aa_uri_find_param(uri, key);
    if (NULL == text)
    {
        return 0;
    }
    int64_t v = aa_parse_size(text);
    if (v < 0)
    {
        return aa_uri_bad_value(key, text, "a size in bytes with an optional k, m or g suffix (e.g. 64k)");
    }
    *value = v;
    return 1;
}

int aa_uri_get_duration_ns(const aa_uri_t *uri, const char *key, int64_t *value)
{
    const char *text = aa_uri_find_param(uri, key);
    if (NULL == text)
    {
        return 0;
    }
    int64_t v = aa_parse_duration_ns(text);
    if (v < 0)
    {
        return aa_uri_bad_value(key, text, "a duration such as 500ms, 5s or 1000000 (ns)");
    }
    *value = v;
    return 1;
}

int aa_uri_get_bool(const aa_uri_t *uri, const char *key, bool *value)
{
    const char *text = aa_uri_find_param(uri, key);
    if (NULL == text)
    {
        return 0;
    }
    if (0 == strcmp(text, "true"))
    {
        *value = true;
        return 1;
    }
    if (0 == strcmp(text, "false"))
    {
        *value = false;
        return 1;
    }
    return aa_uri_bad_value(key, text, "true or false");
}
