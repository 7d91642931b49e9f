/*
 * Channel URIs (reference 7): aeron:ipc[?k=v|k=v...] and aeron:udp?endpoint=host:port|...,
 * optionally prefixed with aeron-spy:. Parsing validates the scheme, the media, every parameter
 * name (an unknown one is named together with the accepted ones) and every value's form and range
 * (reference 7.1, 7.2); an error names the offending part and the accepted forms. Parsing never
 * resolves host names: that is media/aa_udp_channel's job.
 */
#ifndef AA_URI_H
#define AA_URI_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define AA_URI_MAX_PARAMS 32
#define AA_URI_MAX_KEY_LENGTH 32
#define AA_URI_MAX_VALUE_LENGTH 256
#define AA_URI_MAX_LENGTH 4096

typedef enum aa_uri_media_enum
{
    AA_URI_MEDIA_IPC,
    AA_URI_MEDIA_UDP
}
aa_uri_media_t;

typedef struct aa_uri_param_stct
{
    char key[AA_URI_MAX_KEY_LENGTH];
    char value[AA_URI_MAX_VALUE_LENGTH];
}
aa_uri_param_t;

/* A parsed channel: what every later step reads (the driver parses a client's channel once, see
 * docs/architecture.md, "Channels: parsed once"). text keeps the URI as given, for the errors and
 * counter labels that name the channel. */
typedef struct aa_uri_stct
{
    char text[AA_URI_MAX_LENGTH];
    aa_uri_media_t media;
    bool is_spy;
    size_t params_count;
    aa_uri_param_t params[AA_URI_MAX_PARAMS];
}
aa_uri_t;

/* An address parameter split into its parts: host[:port][/prefix], an IPv6 host in brackets. */
typedef struct aa_uri_address_stct
{
    char host[AA_URI_MAX_VALUE_LENGTH];
    bool is_bracketed;
    bool has_port;
    int32_t port;
    bool has_prefix;
    int32_t prefix_length;
}
aa_uri_address_t;

/* tags=<channel tag>[,<entity tag>] */
typedef struct aa_uri_tags_stct
{
    bool has_channel_tag;
    int64_t channel_tag;
    bool has_entity_tag;
    int64_t entity_tag;
}
aa_uri_tags_t;

/* Parses uri into *parsed (parsed->text: uri, when it is shorter than AA_URI_MAX_LENGTH). Returns 0, or
 * -1 with the error naming the offending part and the accepted forms. */
int aa_uri_parse(const char *uri, aa_uri_t *parsed);
const char *aa_uri_find_param(const aa_uri_t *uri, const char *key);

/* Typed getters: return 0 and leave *value untouched when the parameter is absent, 1 when set,
 * -1 (error naming the parameter, the bad value and what is accepted) when malformed. */
int aa_uri_get_int32(const aa_uri_t *uri, const char *key, int32_t *value);
int aa_uri_get_int64(const aa_uri_t *uri, const char *key, int64_t *value);
int aa_uri_get_size(const aa_uri_t *uri, const char *key, int64_t *value);
int aa_uri_get_duration_ns(const aa_uri_t *uri, const char *key, int64_t *value);
int aa_uri_get_bool(const aa_uri_t *uri, const char *key, bool *value);

/* response-correlation-id= (reference wave3 1.1): -1 when absent, a number >= -1, or 'prototype' (-2).
 * Returns 0 absent, 1 set, -1 with Aeron's error text. */
#define AA_URI_RESPONSE_CORRELATION_ID_NONE ((int64_t)-1)
#define AA_URI_RESPONSE_CORRELATION_ID_PROTOTYPE ((int64_t)-2)
int aa_uri_get_response_correlation_id(const aa_uri_t *uri, int64_t *value);
/* control-mode=response (a response publication or subscription, UDP or IPC). */
bool aa_uri_is_response_control_mode(const aa_uri_t *uri);

/* Splits an address value. endpoint/control take host:port, interface takes host[:port][/prefix].
 * Returns 0, or -1 with an error naming key and value. */
int aa_uri_parse_address(
    const char *key, const char *value, bool port_required, bool prefix_allowed, aa_uri_address_t *address);
/* Returns 0 when tags= is absent, 1 when present, -1 when malformed. */
int aa_uri_get_tags(const aa_uri_t *uri, aa_uri_tags_t *tags);
/* Whether key is a parameter of the media's channels (aa_uri_parse refuses the others as unknown). */
bool aa_uri_is_param_of(aa_uri_media_t media, const char *key);
/* Writes "name, name, ..." of the parameters accepted for a media into buffer. */
void aa_uri_accepted_params(aa_uri_media_t media, char *buffer, size_t length);

#endif
