/*
 * What the driver name resolver accepts and how much it forwards (docs/architecture.md, "Driver
 * names"; docs/security.md, "Name resolution (gossip)"): the shared key of signed frames, read from an
 * owner-only file, and the byte budget of the cache gossip it forwards (a token bucket).
 */
#ifndef AA_DRIVER_NAME_RESOLVER_POLICY_H
#define AA_DRIVER_NAME_RESOLVER_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define AA_DNR_HMAC_KEY_MIN_LENGTH 16
#define AA_DNR_HMAC_KEY_MAX_LENGTH 1024

/* Reads the key (the file's bytes, as they are) from path: a regular file owned by this process's
 * user (or root), readable and writable by its owner only (0400 or 0600), of 16 to 1024 bytes.
 * Returns 0, or -1 with an error naming AERON_DRIVER_RESOLVER_HMAC_KEY_FILE, what is wrong and the fix. */
int aa_dnr_hmac_key_load(const char *path, uint8_t *key, size_t capacity, size_t *key_length);

/* A token bucket of bytes: rate_per_s bytes a second, at most burst bytes saved up; rate 0: no limit. */
typedef struct aa_dnr_rate_limit_stct
{
    int64_t rate_per_s;
    int64_t burst;
    int64_t tokens_milli;       /* bytes x 1000, so slow rates refill between 10 ms duty cycles */
    int64_t last_ms;
    bool started;
}
aa_dnr_rate_limit_t;

void aa_dnr_rate_limit_init(aa_dnr_rate_limit_t *limit, int64_t rate_per_s, int64_t burst);
/* Takes bytes from the bucket at now_ms: true when there were enough (then they are spent). */
bool aa_dnr_rate_limit_take(aa_dnr_rate_limit_t *limit, int64_t bytes, int64_t now_ms);

#endif
