#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aa_uri.h"
#include "../agent/aa_agent.h"
#include "../util/aa_error.h"

#define AA_URI_COMMON_PARAMS \
    "term-length", "mtu", "init-term-id", "term-id", "term-offset", "session-id", "linger", "sparse", "tether", \
    "eos", "alias", "tags", "rejoin", "reliable", "group", "ssc", "max-resend", "untethered-window-limit-timeout", \
    "untethered-resting-timeout", "untethered-linger-timeout", "spies-simulate-connection", "pub-wnd", \
    "stream-id", "channel-rcv-ts-offset", "channel-snd-ts-offset", "media-rcv-ts-offset", "response-correlation-id"

static const char *const aa_uri_ipc_params[] = { AA_URI_COMMON_PARAMS, NULL };
static const char *const aa_uri_udp_params[] = {
    AA_URI_COMMON_PARAMS, "endpoint", "interface", "control", "control-mode", "ttl", "rcv-wnd", "so-sndbuf",
    "so-rcvbuf", "nak-delay", "fc", "gtag", "cc", "response-endpoint", NULL };

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

static int aa_uri_check_param_name(const char *uri, aa_uri_media_t media, const char *key)
{
    const char *const *names = AA_URI_MEDIA_IPC == media ? aa_uri_ipc_params : aa_uri_udp_params;
    const char *closest = NULL;
    size_t closest_distance = 3;
    for (size_t i = 0; NULL != names[i]; i++)
    {
        if (0 == strcmp(names[i], key))
        {
            return 0;
        }
        size_t d = aa_edit_distance(key, names[i]);
        if (d < closest_distance)
        {
            closest_distance = d;
            closest = names[i];
        }
    }
    char accepted[1024];
    size_t offset = 0;
    accepted[0] = '\0';
    for (size_t i = 0; NULL != names[i] && offset < sizeof(accepted) - 1; i++)
    {
        int n = snprintf(accepted + offset, sizeof(accepted) - offset, "%s%s", 0 == i ? "" : ", ", names[i]);
        offset += n > 0 ? (size_t)n : 0;
    }
    if (NULL != closest)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: unknown parameter '%s' (did you mean '%s'?); accepted for aeron:%s: %s",
            uri, key, closest, AA_URI_MEDIA_IPC == media ? "ipc" : "udp", accepted);
    }
    else
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel %s: unknown parameter '%s'; accepted for aeron:%s: %s",
            uri, key, AA_URI_MEDIA_IPC == media ? "ipc" : "udp", accepted);
    }
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
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel is %zu characters long, at most %d are accepted",
            length, AA_URI_MAX_LENGTH - 1);
        return -1;
    }
    const char *p = uri;
    if (0 == strncmp(p, "aeron-spy:", 10))
    {
        parsed->is_spy = true;
        p += 10;
    }
    if (0 != strncmp(p, "aeron:", 6))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel '%s' must start with 'aeron:' (e.g. %s)", uri, forms);
        return -1;
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
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel '%s': unknown media '%.*s'; the media are ipc and udp (e.g. %s)",
            uri, (int)media_length, p, forms);
        return -1;
    }
    if (NULL == query)
    {
        return 0;
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
    return 0;
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
