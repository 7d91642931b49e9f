#include <inttypes.h>
#include <string.h>

#include "resolver/aa_driver_name_resolver_policy.h"
#include "util/aa_error.h"
#include "util/aa_fs.h"

#define AA_DNR_KEY_OPTION "AERON_DRIVER_RESOLVER_HMAC_KEY_FILE"

int aa_dnr_hmac_key_load(const char *path, uint8_t *key, size_t capacity, size_t *key_length)
{
    *key_length = 0;
    size_t limit = capacity < AA_DNR_HMAC_KEY_MAX_LENGTH ? capacity : AA_DNR_HMAC_KEY_MAX_LENGTH;
    int64_t n = aa_secret_file_read(AA_DNR_KEY_OPTION, path, key, limit);
    if (n < 0)
    {
        return -1;
    }
    if (n < AA_DNR_HMAC_KEY_MIN_LENGTH)
    {
        memset(key, 0, capacity);
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' holds %" PRId64 " bytes; a key is %d to %d bytes (e.g. "
            "head -c 32 /dev/urandom > '%s')", AA_DNR_KEY_OPTION, path, n, AA_DNR_HMAC_KEY_MIN_LENGTH,
            AA_DNR_HMAC_KEY_MAX_LENGTH, path);
        return -1;
    }
    *key_length = (size_t)n;
    return 0;
}

void aa_dnr_rate_limit_init(aa_dnr_rate_limit_t *limit, int64_t rate_per_s, int64_t burst)
{
    memset(limit, 0, sizeof(*limit));
    limit->rate_per_s = rate_per_s > 0 ? rate_per_s : 0;
    limit->burst = burst > 0 ? burst : 0;
}

bool aa_dnr_rate_limit_take(aa_dnr_rate_limit_t *limit, int64_t bytes, int64_t now_ms)
{
    if (0 == limit->rate_per_s)
    {
        return true;
    }
    int64_t cap_milli = limit->burst * 1000;
    if (!limit->started)
    {
        limit->started = true;
        limit->tokens_milli = cap_milli;
        limit->last_ms = now_ms;
    }
    if (now_ms > limit->last_ms)
    {
        int64_t elapsed = now_ms - limit->last_ms;
        /* bytes x 1000 earned in elapsed ms = rate_per_s x elapsed; capped before it can overflow */
        int64_t earned = elapsed >= cap_milli / (limit->rate_per_s > 0 ? limit->rate_per_s : 1) + 1 ?
            cap_milli : limit->rate_per_s * elapsed;
        limit->tokens_milli = limit->tokens_milli + earned > cap_milli ? cap_milli : limit->tokens_milli + earned;
        limit->last_ms = now_ms;
    }
    if (limit->tokens_milli < bytes * 1000)
    {
        return false;
    }
    limit->tokens_milli -= bytes * 1000;
    return true;
}
