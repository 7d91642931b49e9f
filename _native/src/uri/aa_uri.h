/*
 * Channel URIs (reference 7): aeron:ipc[?k=v|k=v...] and aeron:udp?endpoint=host:port|...,
 * optionally prefixed with aeron-spy:. Parsing validates the scheme, media and every parameter
 * name; an error names the offending part and the accepted forms.
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

typedef struct aa_uri_stct
{
    aa_uri_media_t media;
    bool is_spy;
    size_t params_count;
    aa_uri_param_t params[AA_URI_MAX_PARAMS];
}
aa_uri_t;

int aa_uri_parse(const char *uri, aa_uri_t *parsed);
const char *aa_uri_find_param(const aa_uri_t *uri, const char *key);

/* Typed getters: return 0 and leave *value untouched when the parameter is absent, 1 when set,
 * -1 (error naming the parameter, the bad value and what is accepted) when malformed. */
int aa_uri_get_int32(const aa_uri_t *uri, const char *key, int32_t *value);
int aa_uri_get_int64(const aa_uri_t *uri, const char *key, int64_t *value);
int aa_uri_get_size(const aa_uri_t *uri, const char *key, int64_t *value);
int aa_uri_get_duration_ns(const aa_uri_t *uri, const char *key, int64_t *value);
int aa_uri_get_bool(const aa_uri_t *uri, const char *key, bool *value);

#endif
