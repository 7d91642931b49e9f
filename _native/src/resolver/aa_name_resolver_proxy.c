#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "resolver/aa_name_resolver_proxy.h"
#include "concurrent/aa_error_log.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"
#include "resolver/aa_name_resolver.h"
#include "util/aa_udp_address.h"

#define AA_NAME_RESOLVER_PROXY_ANSWER_LENGTH AA_NAME_RESOLVER_PROXY_NAME_LENGTH

typedef enum aa_name_resolver_proxy_slot_state_enum
{
    AA_NRP_SLOT_FREE = 0,
    AA_NRP_SLOT_QUEUED,       /* waiting for the worker */
    AA_NRP_SLOT_TAKEN,        /* the worker runs it */
    AA_NRP_SLOT_ANSWERED,     /* the waiter collects it */
    AA_NRP_SLOT_ABANDONED     /* taken, nobody waits any more: freed by the answer */
}
aa_name_resolver_proxy_slot_state_t;

typedef struct aa_name_resolver_proxy_slot_stct
{
    aa_name_resolver_proxy_slot_state_t state;
    bool waited;
    aa_name_resolver_proxy_request_t request;
    int32_t rc;
    int32_t error_code;
    char answer[AA_NAME_RESOLVER_PROXY_ANSWER_LENGTH];
    char error[AA_NAME_RESOLVER_PROXY_ERROR_LENGTH];
}
aa_name_resolver_proxy_slot_t;

struct aa_name_resolver_proxy_stct
{
    aa_name_resolver_proxy_registration_t registration;
    int64_t instance_id;
    aa_name_resolver_proxy_log_func_t log;
    void *log_clientd;
    int64_t next_work_ms;       /* conductor only */
    bool work_in_flight;        /* under the host mutex */
};

static struct
{
    pthread_once_t once;
    pthread_mutex_t mutex;
    pthread_cond_t worker_cond;     /* requests queued, or a wake */
    pthread_cond_t answer_cond;     /* answers, or the worker detached */
    bool attached;
    int64_t wakes;
    int64_t next_request_id;
    int64_t next_instance_id;
    aa_name_resolver_proxy_slot_t slots[AA_NAME_RESOLVER_PROXY_SLOTS];
    aa_name_resolver_proxy_t **proxies;
    size_t proxies_count;
    size_t proxies_capacity;
    int64_t *closed_ids;            /* closed since the worker's last poll */
    size_t closed_count;
    size_t closed_capacity;
}
aa_nrp_host = { .once = PTHREAD_ONCE_INIT };

static void aa_nrp_host_init_locks(void)
{
    pthread_mutex_init(&aa_nrp_host.mutex, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&aa_nrp_host.worker_cond, &attr);
    pthread_cond_init(&aa_nrp_host.answer_cond, &attr);
    pthread_condattr_destroy(&attr);
}

static void aa_nrp_host_init(void)
{
    aa_nrp_host_init_locks();
    aa_nrp_host.next_request_id = 1;
    aa_nrp_host.next_instance_id = 1;
}

static void aa_nrp_lock(void)
{
    pthread_once(&aa_nrp_host.once, aa_nrp_host_init);
    pthread_mutex_lock(&aa_nrp_host.mutex);
}

static void aa_nrp_unlock(void)
{
    pthread_mutex_unlock(&aa_nrp_host.mutex);
}

static struct timespec aa_nrp_deadline(int64_t timeout_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t ns = (int64_t)ts.tv_nsec + (timeout_ns > 0 ? timeout_ns : 0);
    ts.tv_sec += (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    return ts;
}

static void aa_nrp_copy(char *dst, size_t length, const char *src)
{
    snprintf(dst, length, "%s", NULL == src ? "" : src);
}

static aa_name_resolver_proxy_t *aa_nrp_find_locked(int64_t instance_id)
{
    for (size_t i = 0; i < aa_nrp_host.proxies_count; i++)
    {
        if (aa_nrp_host.proxies[i]->instance_id == instance_id)
        {
            return aa_nrp_host.proxies[i];
        }
    }
    return NULL;
}

static void aa_nrp_log(aa_name_resolver_proxy_t *proxy, int32_t code, const char *message)
{
    if (NULL != proxy->log)
    {
        proxy->log(proxy->log_clientd, code, message);
    }
}

/* A free slot for a request of proxy, filled and queued (under the mutex), or NULL with AA_SET_ERR. */
static aa_name_resolver_proxy_slot_t *aa_nrp_queue_locked(
    aa_name_resolver_proxy_t *proxy, int32_t type, bool waited, const char *what)
{
    if (!aa_nrp_host.attached)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR,
            "name resolver '%s' is written in Python and no worker runs it in this process (aeron_async starts "
            "one when the resolver is registered with aeron_async.strategies.register_name_resolver): %s failed",
            proxy->registration.name, what);
        return NULL;
    }
    for (size_t i = 0; i < AA_NAME_RESOLVER_PROXY_SLOTS; i++)
    {
        aa_name_resolver_proxy_slot_t *slot = &aa_nrp_host.slots[i];
        if (AA_NRP_SLOT_FREE == slot->state)
        {
            memset(&slot->request, 0, sizeof(slot->request));
            slot->request.request_id = aa_nrp_host.next_request_id++;
            slot->request.instance_id = proxy->instance_id;
            slot->request.type = type;
            slot->waited = waited;
            slot->rc = 0;
            slot->error_code = 0;
            slot->answer[0] = '\0';
            slot->error[0] = '\0';
            slot->state = AA_NRP_SLOT_QUEUED;
            return slot;
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE,
        "name resolver '%s' (Python): %d requests to Python resolvers are already waiting (resolvers that hang or "
        "are too slow): %s failed", proxy->registration.name, AA_NAME_RESOLVER_PROXY_SLOTS, what);
    return NULL;
}

int aa_name_resolver_proxy_create(
    aa_name_resolver_proxy_t **proxy, const aa_name_resolver_proxy_registration_t *registration, const char *init_args,
    aa_name_resolver_proxy_log_func_t log, void *log_clientd)
{
    if (NULL == proxy || NULL == registration)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s", "proxy and registration are required");
        return -1;
    }
    if (NULL != init_args && strlen(init_args) >= AA_NAME_RESOLVER_PROXY_NAME_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "name resolver '%s': init args longer than %d bytes",
            registration->name, AA_NAME_RESOLVER_PROXY_NAME_LENGTH - 1);
        return -1;
    }
    aa_name_resolver_proxy_t *p = calloc(1, sizeof(aa_name_resolver_proxy_t));
    if (NULL == p)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory");
        return -1;
    }
    p->registration = *registration;
    p->log = log;
    p->log_clientd = log_clientd;

    aa_nrp_lock();
    if (aa_nrp_host.proxies_count == aa_nrp_host.proxies_capacity)
    {
        size_t capacity = 0 == aa_nrp_host.proxies_capacity ? 4 : aa_nrp_host.proxies_capacity * 2;
        aa_name_resolver_proxy_t **grown = realloc(aa_nrp_host.proxies, capacity * sizeof(*grown));
        if (NULL == grown)
        {
            aa_nrp_unlock();
            free(p);
            AA_SET_ERR(ENOMEM, "%s", "out of memory");
            return -1;
        }
        aa_nrp_host.proxies = grown;
        aa_nrp_host.proxies_capacity = capacity;
    }
    p->instance_id = aa_nrp_host.next_instance_id++;
    aa_name_resolver_proxy_slot_t *slot = aa_nrp_queue_locked(
        p, AA_NAME_RESOLVER_PROXY_REQUEST_CREATE, false, "creating it");
    if (NULL == slot)
    {
        aa_nrp_unlock();
        free(p);
        return -1;
    }
    aa_nrp_copy(slot->request.resolver, sizeof(slot->request.resolver), registration->name);
    aa_nrp_copy(slot->request.name, sizeof(slot->request.name), init_args);
    aa_nrp_host.proxies[aa_nrp_host.proxies_count++] = p;
    pthread_cond_signal(&aa_nrp_host.worker_cond);
    aa_nrp_unlock();
    *proxy = p;
    return 0;
}

void aa_name_resolver_proxy_delete(aa_name_resolver_proxy_t *proxy)
{
    if (NULL == proxy)
    {
        return;
    }
    aa_nrp_lock();
    for (size_t i = 0; i < aa_nrp_host.proxies_count; i++)
    {
        if (aa_nrp_host.proxies[i] == proxy)
        {
            aa_nrp_host.proxies[i] = aa_nrp_host.proxies[--aa_nrp_host.proxies_count];
            break;
        }
    }
    /* Requests of it still queued go nowhere (a queued DO_WORK is the only kind left when its
     * lookups are done); the worker drops the instance at CLOSE. */
    for (size_t i = 0; i < AA_NAME_RESOLVER_PROXY_SLOTS; i++)
    {
        aa_name_resolver_proxy_slot_t *slot = &aa_nrp_host.slots[i];
        if (AA_NRP_SLOT_QUEUED == slot->state && slot->request.instance_id == proxy->instance_id &&
            AA_NAME_RESOLVER_PROXY_REQUEST_CREATE != slot->request.type)
        {
            slot->state = slot->waited ? AA_NRP_SLOT_ABANDONED : AA_NRP_SLOT_FREE;
        }
    }
    if (aa_nrp_host.closed_count == aa_nrp_host.closed_capacity)
    {
        size_t capacity = 0 == aa_nrp_host.closed_capacity ? 8 : aa_nrp_host.closed_capacity * 2;
        int64_t *grown = realloc(aa_nrp_host.closed_ids, capacity * sizeof(int64_t));
        if (NULL != grown)
        {
            aa_nrp_host.closed_ids = grown;
            aa_nrp_host.closed_capacity = capacity;
        }
    }
    if (aa_nrp_host.closed_count < aa_nrp_host.closed_capacity)
    {
        aa_nrp_host.closed_ids[aa_nrp_host.closed_count++] = proxy->instance_id;
        pthread_cond_signal(&aa_nrp_host.worker_cond);
    }
    aa_nrp_unlock();
    free(proxy);
}

int32_t aa_name_resolver_proxy_flags(const aa_name_resolver_proxy_t *proxy)
{
    return proxy->registration.flags;
}

const char *aa_name_resolver_proxy_name(const aa_name_resolver_proxy_t *proxy)
{
    return proxy->registration.name;
}

static const char *aa_nrp_type_name(int32_t type)
{
    return AA_NAME_RESOLVER_PROXY_REQUEST_LOOKUP == type ? "lookup" : "resolve";
}

/* Queues a LOOKUP or RESOLVE and waits for its answer, at most the timeout. */
static int aa_nrp_call(
    aa_name_resolver_proxy_t *proxy, int32_t type, const char *key, const char *name, int family, bool again,
    char *answer, size_t answer_length)
{
    char what[AA_NAME_RESOLVER_PROXY_NAME_LENGTH + 64];
    snprintf(what, sizeof(what), "%s of %s=%s", aa_nrp_type_name(type), NULL == key ? "" : key, name);
    if (strlen(name) >= AA_NAME_RESOLVER_PROXY_NAME_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "name resolver '%s': %s: the name is longer than %d bytes",
            proxy->registration.name, what, AA_NAME_RESOLVER_PROXY_NAME_LENGTH - 1);
        return -1;
    }
    aa_nrp_lock();
    aa_name_resolver_proxy_slot_t *slot = aa_nrp_queue_locked(proxy, type, true, what);
    if (NULL == slot)
    {
        aa_nrp_unlock();
        return -1;
    }
    int64_t request_id = slot->request.request_id;
    aa_nrp_copy(slot->request.key, sizeof(slot->request.key), key);
    aa_nrp_copy(slot->request.name, sizeof(slot->request.name), name);
    slot->request.family = family;
    slot->request.is_again = again ? 1 : 0;
    pthread_cond_signal(&aa_nrp_host.worker_cond);

    struct timespec deadline = aa_nrp_deadline(proxy->registration.timeout_ns);
    bool timed_out = false;
    while (AA_NRP_SLOT_ANSWERED != slot->state && aa_nrp_host.attached && !timed_out)
    {
        timed_out = ETIMEDOUT == pthread_cond_timedwait(&aa_nrp_host.answer_cond, &aa_nrp_host.mutex, &deadline);
    }
    if (AA_NRP_SLOT_ANSWERED == slot->state && slot->request.request_id == request_id)
    {
        int32_t rc = slot->rc;
        int32_t code = slot->error_code;
        char error[AA_NAME_RESOLVER_PROXY_ERROR_LENGTH];
        aa_nrp_copy(error, sizeof(error), slot->error);
        if (0 == rc)
        {
            aa_nrp_copy(answer, answer_length, slot->answer);
        }
        slot->state = AA_NRP_SLOT_FREE;
        aa_nrp_unlock();
        if (0 != rc)
        {
            AA_SET_ERR(0 == code ? AA_ERROR_CODE_GENERIC_ERROR : code, "name resolver '%s' (Python): %s: %s",
                proxy->registration.name, what, error);
            return -1;
        }
        return 0;
    }
    bool attached = aa_nrp_host.attached;
    slot->state = AA_NRP_SLOT_QUEUED == slot->state ? AA_NRP_SLOT_FREE : AA_NRP_SLOT_ABANDONED;
    aa_nrp_unlock();
    if (!attached)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR,
            "name resolver '%s' (Python): %s failed: its worker stopped (the process is closing its drivers)",
            proxy->registration.name, what);
    }
    else
    {
        AA_SET_ERR(AA_ERROR_CODE_TIMEOUT,
            "name resolver '%s' (Python): %s did not answer within %" PRId64 " ms (the resolver hangs or is too "
            "slow; raise its class's timeout if it needs longer): the lookup failed",
            proxy->registration.name, what, proxy->registration.timeout_ns / 1000000);
    }
    return -1;
}

int aa_name_resolver_proxy_lookup(
    aa_name_resolver_proxy_t *proxy, const char *key, const char *name, bool is_re_lookup, char *out,
    size_t out_length)
{
    if (0 == (proxy->registration.flags & AA_NAME_RESOLVER_PROXY_HAS_LOOKUP))
    {
        if (strlen(name) >= out_length)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s=%s is longer than %zu bytes", key, name, out_length - 1);
            return -1;
        }
        aa_nrp_copy(out, out_length, name);
        return 0;
    }
    char answer[AA_NAME_RESOLVER_PROXY_ANSWER_LENGTH];
    if (aa_nrp_call(proxy, AA_NAME_RESOLVER_PROXY_REQUEST_LOOKUP, key, name, AF_UNSPEC, is_re_lookup, answer,
        sizeof(answer)) < 0)
    {
        return -1;
    }
    if ('\0' == answer[0] || strlen(answer) >= out_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR,
            "name resolver '%s' (Python): lookup of %s=%s returned '%s', not a host[:port] of 1 to %zu bytes",
            proxy->registration.name, key, name, answer, out_length - 1);
        return -1;
    }
    aa_nrp_copy(out, out_length, answer);
    return 0;
}

int aa_name_resolver_proxy_resolve(
    aa_name_resolver_proxy_t *proxy, const char *key, const char *host, int family, bool is_re_resolution,
    struct sockaddr_storage *address)
{
    char answer[AA_NAME_RESOLVER_PROXY_ANSWER_LENGTH];
    if (aa_nrp_call(proxy, AA_NAME_RESOLVER_PROXY_REQUEST_RESOLVE, key, host, family, is_re_resolution, answer,
        sizeof(answer)) < 0)
    {
        return -1;
    }
    memset(address, 0, sizeof(*address));
    struct sockaddr_in *in4 = (struct sockaddr_in *)address;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)address;
    if (1 == inet_pton(AF_INET, answer, &in4->sin_addr))
    {
        in4->sin_family = AF_INET;
        return 0;
    }
    if (1 == inet_pton(AF_INET6, answer, &in6->sin6_addr))
    {
        in6->sin6_family = AF_INET6;
        return 0;
    }
    AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR,
        "name resolver '%s' (Python): resolve of %s=%s returned '%s', not an IPv4 or IPv6 address literal",
        proxy->registration.name, key, host, answer);
    return -1;
}

int aa_name_resolver_proxy_do_work(aa_name_resolver_proxy_t *proxy, int64_t now_ms)
{
    if (0 == (proxy->registration.flags & AA_NAME_RESOLVER_PROXY_HAS_DO_WORK) || now_ms < proxy->next_work_ms)
    {
        return 0;
    }
    proxy->next_work_ms = now_ms + (proxy->registration.work_interval_ms > 0 ? proxy->registration.work_interval_ms : 1);
    int posted = 0;
    aa_nrp_lock();
    if (!proxy->work_in_flight && aa_nrp_host.attached)
    {
        aa_name_resolver_proxy_slot_t *slot = aa_nrp_queue_locked(proxy, AA_NAME_RESOLVER_PROXY_REQUEST_DO_WORK, false, "do_work");
        if (NULL != slot)
        {
            slot->request.now_ms = now_ms;
            proxy->work_in_flight = true;
            pthread_cond_signal(&aa_nrp_host.worker_cond);
            posted = 1;
        }
    }
    aa_nrp_unlock();
    return posted;
}

/* ---- the worker's side ---- */

void aa_name_resolver_proxy_host_attach(bool attached)
{
    aa_nrp_lock();
    aa_nrp_host.attached = attached;
    if (!attached)
    {
        /* Nothing will answer: queued requests go nowhere, waiters fail at once. */
        for (size_t i = 0; i < AA_NAME_RESOLVER_PROXY_SLOTS; i++)
        {
            aa_name_resolver_proxy_slot_t *slot = &aa_nrp_host.slots[i];
            if (AA_NRP_SLOT_QUEUED == slot->state && !slot->waited)
            {
                slot->state = AA_NRP_SLOT_FREE;
            }
        }
        for (size_t i = 0; i < aa_nrp_host.proxies_count; i++)
        {
            aa_nrp_host.proxies[i]->work_in_flight = false;
        }
        pthread_cond_broadcast(&aa_nrp_host.answer_cond);
        pthread_cond_broadcast(&aa_nrp_host.worker_cond);
    }
    aa_nrp_unlock();
}

int aa_name_resolver_proxy_host_poll(aa_name_resolver_proxy_request_t *requests, int32_t capacity)
{
    int32_t count = 0;
    aa_nrp_lock();
    while (count < capacity)
    {
        aa_name_resolver_proxy_slot_t *oldest = NULL;
        for (size_t i = 0; i < AA_NAME_RESOLVER_PROXY_SLOTS; i++)
        {
            aa_name_resolver_proxy_slot_t *slot = &aa_nrp_host.slots[i];
            if (AA_NRP_SLOT_QUEUED == slot->state &&
                (NULL == oldest || slot->request.request_id < oldest->request.request_id))
            {
                oldest = slot;
            }
        }
        if (NULL == oldest)
        {
            break;
        }
        oldest->state = AA_NRP_SLOT_TAKEN;
        requests[count++] = oldest->request;
    }
    /* CLOSE after the requests queued before it (its CREATE among them). */
    size_t closed = 0;
    while (closed < aa_nrp_host.closed_count && count < capacity)
    {
        aa_name_resolver_proxy_request_t *request = &requests[count++];
        memset(request, 0, sizeof(*request));
        request->type = AA_NAME_RESOLVER_PROXY_REQUEST_CLOSE;
        request->instance_id = aa_nrp_host.closed_ids[closed++];
    }
    if (closed > 0)
    {
        memmove(aa_nrp_host.closed_ids, aa_nrp_host.closed_ids + closed,
            (aa_nrp_host.closed_count - closed) * sizeof(int64_t));
        aa_nrp_host.closed_count -= closed;
    }
    aa_nrp_unlock();
    return count;
}

static bool aa_nrp_has_work_locked(void)
{
    if (aa_nrp_host.closed_count > 0)
    {
        return true;
    }
    for (size_t i = 0; i < AA_NAME_RESOLVER_PROXY_SLOTS; i++)
    {
        if (AA_NRP_SLOT_QUEUED == aa_nrp_host.slots[i].state)
        {
            return true;
        }
    }
    return false;
}

int aa_name_resolver_proxy_host_wait(int64_t timeout_ns)
{
    struct timespec deadline = aa_nrp_deadline(timeout_ns);
    aa_nrp_lock();
    int64_t wakes = aa_nrp_host.wakes;
    bool timed_out = false;
    while (!aa_nrp_has_work_locked() && wakes == aa_nrp_host.wakes && !timed_out)
    {
        timed_out = ETIMEDOUT == pthread_cond_timedwait(&aa_nrp_host.worker_cond, &aa_nrp_host.mutex, &deadline);
    }
    int result = aa_nrp_has_work_locked() ? 1 : 0;
    aa_nrp_unlock();
    return result;
}

void aa_name_resolver_proxy_host_wake(void)
{
    aa_nrp_lock();
    aa_nrp_host.wakes++;
    pthread_cond_broadcast(&aa_nrp_host.worker_cond);
    aa_nrp_unlock();
}

int aa_name_resolver_proxy_host_answer(
    int64_t request_id, int32_t rc, int32_t error_code, const char *answer, const char *error)
{
    aa_name_resolver_proxy_t *log_to = NULL;
    char message[AA_NAME_RESOLVER_PROXY_ERROR_LENGTH + 128];
    int result = -1;
    aa_nrp_lock();
    for (size_t i = 0; i < AA_NAME_RESOLVER_PROXY_SLOTS; i++)
    {
        aa_name_resolver_proxy_slot_t *slot = &aa_nrp_host.slots[i];
        if (slot->request.request_id != request_id ||
            (AA_NRP_SLOT_TAKEN != slot->state && AA_NRP_SLOT_ABANDONED != slot->state))
        {
            continue;
        }
        if (AA_NRP_SLOT_TAKEN == slot->state && slot->waited)
        {
            slot->rc = rc;
            slot->error_code = error_code;
            aa_nrp_copy(slot->answer, sizeof(slot->answer), answer);
            aa_nrp_copy(slot->error, sizeof(slot->error), error);
            slot->state = AA_NRP_SLOT_ANSWERED;
            pthread_cond_broadcast(&aa_nrp_host.answer_cond);
            result = 0;
            break;
        }
        /* Nobody waits: an abandoned lookup, or CREATE / DO_WORK, whose failure is logged here. */
        aa_name_resolver_proxy_t *proxy = aa_nrp_find_locked(slot->request.instance_id);
        if (NULL != proxy)
        {
            if (AA_NAME_RESOLVER_PROXY_REQUEST_DO_WORK == slot->request.type)
            {
                proxy->work_in_flight = false;
            }
            if (0 != rc && !slot->waited)
            {
                snprintf(message, sizeof(message), "name resolver '%s' (Python): %s failed: %s",
                    proxy->registration.name,
                    AA_NAME_RESOLVER_PROXY_REQUEST_CREATE == slot->request.type ? "creating it" : "do_work",
                    NULL == error ? "" : error);
                log_to = proxy;
            }
        }
        slot->state = AA_NRP_SLOT_FREE;
        result = 1;
        break;
    }
    /* The log is written under the host mutex: the proxy cannot be deleted meanwhile. */
    if (NULL != log_to)
    {
        aa_nrp_log(log_to, 0 == error_code ? AA_ERROR_CODE_GENERIC_ERROR : error_code, message);
    }
    aa_nrp_unlock();
    return result;
}

int32_t aa_name_resolver_proxy_host_in_flight(void)
{
    int32_t count = 0;
    aa_nrp_lock();
    for (size_t i = 0; i < AA_NAME_RESOLVER_PROXY_SLOTS; i++)
    {
        aa_name_resolver_proxy_slot_state_t state = aa_nrp_host.slots[i].state;
        count += (AA_NRP_SLOT_QUEUED == state || AA_NRP_SLOT_TAKEN == state || AA_NRP_SLOT_ABANDONED == state) ? 1 : 0;
    }
    aa_nrp_unlock();
    return count;
}

void aa_name_resolver_proxy_host_after_fork(void)
{
    pthread_once(&aa_nrp_host.once, aa_nrp_host_init);
    aa_nrp_host_init_locks();
    aa_nrp_host.attached = false;
    for (size_t i = 0; i < AA_NAME_RESOLVER_PROXY_SLOTS; i++)
    {
        aa_nrp_host.slots[i].state = AA_NRP_SLOT_FREE;
    }
    aa_nrp_host.proxies_count = 0;   /* the parent's drivers do not exist here */
    aa_nrp_host.closed_count = 0;
}

/* ---- the registry entry: the supplier and the resolver the driver calls ---- */

typedef struct aa_name_resolver_proxy_resolver_state_stct
{
    aa_name_resolver_proxy_t *proxy;
    aa_name_resolver_context_t context;     /* its pointers outlive the resolver */
}
aa_name_resolver_proxy_resolver_state_t;

static void aa_nrp_log_to_driver(void *clientd, int32_t code, const char *message)
{
    aa_name_resolver_proxy_resolver_state_t *state = clientd;
    if (NULL != state->context.error_log)
    {
        int64_t now_ms = NULL != state->context.clock ? aa_clock_epoch_time(state->context.clock) : aa_epoch_clock();
        aa_distinct_error_log_record(state->context.error_log, now_ms, code, message);
    }
}

static int aa_nrp_resolver_lookup(
    void *state, const char *key, const char *name, bool is_re_lookup, char *out, size_t out_length)
{
    return aa_name_resolver_proxy_lookup(
        ((aa_name_resolver_proxy_resolver_state_t *)state)->proxy, key, name, is_re_lookup, out, out_length);
}

static int aa_nrp_resolver_resolve(
    void *state_ptr, const char *key, const char *host, int family, bool is_re_resolution,
    struct sockaddr_storage *address)
{
    aa_name_resolver_proxy_resolver_state_t *state = state_ptr;
    return aa_name_resolver_proxy_resolve(state->proxy, key, host, family, is_re_resolution, address);
}

static int aa_nrp_resolver_default_resolve(
    void *state_ptr, const char *key, const char *host, int family, bool is_re_resolution,
    struct sockaddr_storage *address)
{
    aa_name_resolver_t *fallback = ((aa_name_resolver_proxy_resolver_state_t *)state_ptr)->context.default_resolver;
    return fallback->resolve(fallback->state, key, host, family, is_re_resolution, address);
}

static int aa_nrp_resolver_do_work(void *state, int64_t now_ms)
{
    return aa_name_resolver_proxy_do_work(((aa_name_resolver_proxy_resolver_state_t *)state)->proxy, now_ms);
}

static void aa_nrp_resolver_close(aa_name_resolver_t *resolver)
{
    aa_name_resolver_proxy_resolver_state_t *state = resolver->state;
    if (NULL != state)
    {
        aa_name_resolver_proxy_delete(state->proxy);
        free(state);
    }
    free(resolver);
}

static int aa_nrp_supplier(
    aa_name_resolver_t **resolver, const char *init_args, const aa_name_resolver_context_t *context, void *clientd)
{
    const aa_name_resolver_proxy_registration_t *registration = clientd;
    *resolver = NULL;
    if (NULL == context || NULL == context->default_resolver)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "name resolver '%s' needs its driver's context", registration->name);
        return -1;
    }
    aa_name_resolver_t *r = aa_name_resolver_new(sizeof(aa_name_resolver_proxy_resolver_state_t), "a Python name resolver");
    if (NULL == r)
    {
        return -1;
    }
    aa_name_resolver_proxy_resolver_state_t *state = r->state;
    state->context = *context;
    if (aa_name_resolver_proxy_create(&state->proxy, registration, init_args, aa_nrp_log_to_driver, state) < 0)
    {
        free(r);
        free(state);
        return -1;
    }
    int32_t flags = registration->flags;
    r->name = state->proxy->registration.name;
    r->lookup = 0 != (flags & AA_NAME_RESOLVER_PROXY_HAS_LOOKUP) ? aa_nrp_resolver_lookup : NULL;
    r->resolve = 0 != (flags & AA_NAME_RESOLVER_PROXY_HAS_RESOLVE) ?
        aa_nrp_resolver_resolve : aa_nrp_resolver_default_resolve;
    r->do_work = 0 != (flags & AA_NAME_RESOLVER_PROXY_HAS_DO_WORK) ? aa_nrp_resolver_do_work : NULL;
    r->close = aa_nrp_resolver_close;
    *resolver = r;
    return 0;
}

static const aa_name_resolver_table_t aa_name_resolver_proxy_table = { aa_nrp_supplier };

int aa_name_resolver_proxy_register(
    const char *name, int32_t flags, int64_t timeout_ns, int64_t work_interval_ms, const char *description)
{
    if (NULL == name || strlen(name) >= AA_NAME_RESOLVER_PROXY_RESOLVER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "a name resolver's name is 1 to %d characters",
            AA_NAME_RESOLVER_PROXY_RESOLVER_LENGTH - 1);
        return -1;
    }
    if (timeout_ns <= 0 || work_interval_ms <= 0 ||
        0 != (flags & ~(AA_NAME_RESOLVER_PROXY_HAS_LOOKUP | AA_NAME_RESOLVER_PROXY_HAS_RESOLVE |
        AA_NAME_RESOLVER_PROXY_HAS_DO_WORK)))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "name resolver '%s': the timeout and work interval must be positive and the flags HAS_*, got %" PRId64
            " ns, %" PRId64 " ms, 0x%x", name, timeout_ns, work_interval_ms, (unsigned)flags);
        return -1;
    }
    aa_name_resolver_proxy_registration_t *registration = calloc(1, sizeof(aa_name_resolver_proxy_registration_t));
    if (NULL == registration)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory");
        return -1;
    }
    aa_nrp_copy(registration->name, sizeof(registration->name), name);
    registration->flags = flags;
    registration->timeout_ns = timeout_ns;
    registration->work_interval_ms = work_interval_ms;
    if (aa_registry_register(AA_STRATEGY_KIND_NAME_RESOLVER, name, &aa_name_resolver_proxy_table, registration,
        NULL == description || '\0' == *description ? "a name resolver written in Python" : description) < 0)
    {
        free(registration);
        return -1;
    }
    return 0;
}
