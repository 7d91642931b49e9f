#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resolver/aa_driver_name_resolver_policy.h"
#include "util/aa_error.h"

#define AA_DNR_KEY_OPTION "AERON_DRIVER_RESOLVER_HMAC_KEY_FILE"

int aa_dnr_hmac_key_load(const char *path, uint8_t *key, size_t capacity, size_t *key_length)
{
    *key_length = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: cannot open '%s': %s (give the path of a file holding the "
            "shared key, e.g. made with: head -c 32 /dev/urandom > key; chmod 400 key)",
            AA_DNR_KEY_OPTION, path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: cannot stat '%s': %s", AA_DNR_KEY_OPTION, path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' is not a regular file: give the path of the key file itself",
            AA_DNR_KEY_OPTION, path);
        close(fd);
        return -1;
    }
    if (0 != (st.st_mode & (S_IRWXG | S_IRWXO)))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' has mode %04o, open to its group or others: the shared key "
            "must be readable by its owner only (chmod 400 '%s', or defaultMode: 0400 for a Kubernetes Secret)",
            AA_DNR_KEY_OPTION, path, (unsigned)(st.st_mode & 07777), path);
        close(fd);
        return -1;
    }
    if (st.st_uid != geteuid() && 0 != st.st_uid)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' belongs to uid %u, not to this driver's user (uid %u) or "
            "root: another user could change the key (chown %u '%s')",
            AA_DNR_KEY_OPTION, path, (unsigned)st.st_uid, (unsigned)geteuid(), (unsigned)geteuid(), path);
        close(fd);
        return -1;
    }
    size_t total = 0;
    uint8_t extra;
    while (total < capacity)
    {
        ssize_t n = read(fd, key + total, capacity - total);
        if (n < 0 && EINTR == errno)
        {
            continue;
        }
        if (n < 0)
        {
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: cannot read '%s': %s", AA_DNR_KEY_OPTION, path, strerror(errno));
            memset(key, 0, capacity);
            close(fd);
            return -1;
        }
        if (0 == n)
        {
            break;
        }
        total += (size_t)n;
    }
    ssize_t more = total == capacity ? read(fd, &extra, 1) : 0;
    close(fd);
    if (more > 0 || total < AA_DNR_HMAC_KEY_MIN_LENGTH || total > AA_DNR_HMAC_KEY_MAX_LENGTH)
    {
        memset(key, 0, capacity);
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' holds %s%zu bytes; a key is %d to %d bytes (e.g. "
            "head -c 32 /dev/urandom > '%s')", AA_DNR_KEY_OPTION, path, more > 0 ? "more than " : "", total,
            AA_DNR_HMAC_KEY_MIN_LENGTH, AA_DNR_HMAC_KEY_MAX_LENGTH, path);
        return -1;
    }
    *key_length = total;
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
