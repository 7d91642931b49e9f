/*
 * Name resolvers that run in Python (aeron_async/name_resolver.py): a native proxy resolver that the
 * driver calls like any other, and one host per process that a worker thread (aeron_async's) drains.
 *
 * lookup and resolve run on the driver's resolver executor thread: the proxy copies the request into
 * a slot of the host, wakes the worker and waits for its answer on a condition variable, at most the
 * registration's timeout. The worker runs each call into Python on a thread of its own (see
 * name_resolver.py), so a call that hangs holds only its own thread: later requests are served by
 * others. A request not answered in time is abandoned (its slot freed when the late answer comes, or
 * at once if the worker never took it): the lookup fails with a message naming the resolver, the
 * name and the timeout. A Python exception fails the lookup likewise, naming the class, the method
 * and where it was raised; LookupError means "unknown host" (AA_ERROR_CODE_UNKNOWN_HOST). The driver
 * writes every failed lookup into its error log (the registration's error, a pending name's retry,
 * a re-resolution), so the proxy logs only what no caller sees: a failed CREATE or do_work.
 *
 * do_work runs on the conductor and never waits: it posts a request at most every work interval,
 * and none while the previous one is still running (a do_work that hangs stops only do_work).
 * Methods the Python class does not override never reach Python: lookup is the identity, resolve is
 * the driver's default resolver (getaddrinfo), do_work does nothing.
 *
 * The host is process-wide (a static): the slots, a mutex, a condition variable for the worker and
 * one for the waiters. No worker attached (none started, or stopped): requests fail at once.
 *
 * Threads: create/delete on the conductor (the driver's start and close), lookup/resolve on executor
 * threads, do_work on the conductor, the host functions on the worker's threads.
 */
#ifndef AA_NAME_RESOLVER_PROXY_H
#define AA_NAME_RESOLVER_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* CDEF BEGIN */

#define AA_NAME_RESOLVER_PROXY_SLOTS 64
#define AA_NAME_RESOLVER_PROXY_NAME_LENGTH 256
#define AA_NAME_RESOLVER_PROXY_KEY_LENGTH 32
#define AA_NAME_RESOLVER_PROXY_RESOLVER_LENGTH 64
#define AA_NAME_RESOLVER_PROXY_ERROR_LENGTH 512

/* Request types (aa_name_resolver_proxy_request_t.type). */
#define AA_NAME_RESOLVER_PROXY_REQUEST_CREATE 1
#define AA_NAME_RESOLVER_PROXY_REQUEST_LOOKUP 2
#define AA_NAME_RESOLVER_PROXY_REQUEST_RESOLVE 3
#define AA_NAME_RESOLVER_PROXY_REQUEST_DO_WORK 4
#define AA_NAME_RESOLVER_PROXY_REQUEST_CLOSE 5

/* What the Python class overrides (registration flags). */
#define AA_NAME_RESOLVER_PROXY_HAS_LOOKUP 1
#define AA_NAME_RESOLVER_PROXY_HAS_RESOLVE 2
#define AA_NAME_RESOLVER_PROXY_HAS_DO_WORK 4

/* One request, as the worker receives it. */
typedef struct aa_name_resolver_proxy_request_stct
{
    int64_t request_id;
    int64_t instance_id;
    int32_t type;
    int32_t family;             /* RESOLVE: AF_INET, AF_INET6 or AF_UNSPEC (the preferred family) */
    int32_t is_again;           /* LOOKUP: is_re_lookup; RESOLVE: is_re_resolution */
    int32_t padding;
    int64_t now_ms;             /* DO_WORK: the driver's epoch clock */
    char resolver[AA_NAME_RESOLVER_PROXY_RESOLVER_LENGTH];  /* CREATE: the registered name */
    char key[AA_NAME_RESOLVER_PROXY_KEY_LENGTH];            /* LOOKUP, RESOLVE: the URI parameter */
    char name[AA_NAME_RESOLVER_PROXY_NAME_LENGTH];          /* LOOKUP: the name; RESOLVE: the host; CREATE: init args */
}
aa_name_resolver_proxy_request_t;

/* Registers a Python resolver under name (the registry's name-resolver kind; its supplier is in
 * aa_name_resolver_proxy_supplier.c): flags say what the class overrides, timeout_ns bounds each
 * lookup and resolve, work_interval_ms spaces do_work. */
int aa_name_resolver_proxy_register(
    const char *name, int32_t flags, int64_t timeout_ns, int64_t work_interval_ms, const char *description);

/* ---- the worker's side (any thread of the worker) ---- */
/* attached false: waiting and later requests fail at once ("no worker"). */
void aa_name_resolver_proxy_host_attach(bool attached);
/* Copies up to capacity waiting requests, oldest first, marking them taken; returns how many. */
int aa_name_resolver_proxy_host_poll(aa_name_resolver_proxy_request_t *requests, int32_t capacity);
/* Sleeps until a request waits or timeout_ns passed (or a wake). Returns 1 when requests wait. */
int aa_name_resolver_proxy_host_wait(int64_t timeout_ns);
void aa_name_resolver_proxy_host_wake(void);
/* The answer to a taken request: rc 0 with answer (LOOKUP: "host[:port]"; RESOLVE: an address
 * literal), or rc -1 with error_code and error. Returns 0 when delivered, 1 when nobody waits any
 * more (abandoned after its timeout, or a request that is not waited for), -1 for an unknown id. */
int aa_name_resolver_proxy_host_answer(
    int64_t request_id, int32_t rc, int32_t error_code, const char *answer, const char *error);
/* Requests queued or taken (tests). */
int32_t aa_name_resolver_proxy_host_in_flight(void);
/* In a child made by fork(): no worker, no requests, fresh locks. */
void aa_name_resolver_proxy_host_after_fork(void);

/* CDEF END */


typedef struct aa_name_resolver_proxy_stct aa_name_resolver_proxy_t;

/* What a registration holds (the registry entry's clientd; never freed: entries live as long as the
 * process). */
typedef struct aa_name_resolver_proxy_registration_stct
{
    char name[AA_NAME_RESOLVER_PROXY_RESOLVER_LENGTH];
    int32_t flags;              /* AA_NAME_RESOLVER_PROXY_HAS_* */
    int64_t timeout_ns;         /* bounds each lookup and resolve */
    int64_t work_interval_ms;   /* spaces do_work */
}
aa_name_resolver_proxy_registration_t;

/* Where a proxy writes what went wrong: the driver's distinct error log. */
typedef void (*aa_name_resolver_proxy_log_func_t)(void *clientd, int32_t code, const char *message);

/* A proxy for a registered resolver: posts CREATE (init_args) to the worker without waiting. log
 * may be NULL. Fails when no worker is attached or every slot is taken. */
int aa_name_resolver_proxy_create(
    aa_name_resolver_proxy_t **proxy, const aa_name_resolver_proxy_registration_t *registration, const char *init_args,
    aa_name_resolver_proxy_log_func_t log, void *log_clientd);
/* Posts CLOSE (the worker drops the instance) and frees the proxy. No request of it may be running. */
void aa_name_resolver_proxy_delete(aa_name_resolver_proxy_t *proxy);
int32_t aa_name_resolver_proxy_flags(const aa_name_resolver_proxy_t *proxy);
const char *aa_name_resolver_proxy_name(const aa_name_resolver_proxy_t *proxy);

/* Blocking, bounded by the timeout: executor threads only. 0, or -1 with AA_SET_ERR. */
int aa_name_resolver_proxy_lookup(
    aa_name_resolver_proxy_t *proxy, const char *key, const char *name, bool is_re_lookup, char *out,
    size_t out_length);
/* The answer is an address literal (no brackets, no port); *address gets it with port 0. */
int aa_name_resolver_proxy_resolve(
    aa_name_resolver_proxy_t *proxy, const char *key, const char *host, int family, bool is_re_resolution,
    struct sockaddr_storage *address);
/* Never waits: returns 1 when it posted a DO_WORK request, else 0. */
int aa_name_resolver_proxy_do_work(aa_name_resolver_proxy_t *proxy, int64_t now_ms);

#endif
