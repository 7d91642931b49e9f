/*
 * The driver's name resolver executor (reference 8.1: since Aeron 1.44 resolution runs on an
 * executor, so that DNS never stalls the conductor): AERON_DRIVER_ASYNC_EXECUTOR_THREADS threads
 * that run the resolver's lookup and resolve for requests the conductor submits, and hand the
 * answers back. The conductor submits and polls (never waits); a thread that finishes a request
 * rings the conductor's doorbell through the wake function, so a sleeping conductor picks the
 * answer up at once.
 *
 * A request carries up to AA_NAME_RESOLUTION_MAX_NAMES URI values (endpoint=, control=,
 * interface= of one channel, or one destination / re-resolution), resolved in order; names after
 * the first prefer the first answer's address family (as aa_udp_channel_parse does).
 */
#ifndef AA_NAME_RESOLVER_EXECUTOR_H
#define AA_NAME_RESOLVER_EXECUTOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "resolver/aa_name_resolver.h"
#include "util/aa_udp_address.h"

#define AA_NAME_RESOLUTION_MAX_NAMES 3
#define AA_NAME_RESOLUTION_ERROR_LENGTH 512

typedef struct aa_name_resolution_name_stct
{
    char key[16];                           /* endpoint, control, interface */
    char value[AA_URI_MAX_VALUE_LENGTH];    /* as the URI gives it: host[:port][/prefix] */
    int family;                             /* preferred family, AF_UNSPEC: IPv4 first */
    /* Answers (written by the executor thread): */
    int rc;                                 /* 0 resolved, -1 failed */
    int errcode;
    struct sockaddr_storage address;        /* port included (0 when none) */
    char error[AA_NAME_RESOLUTION_ERROR_LENGTH];
}
aa_name_resolution_name_t;

typedef struct aa_name_resolution_request_stct
{
    struct aa_name_resolution_request_stct *next;
    bool is_re_resolution;
    int32_t names_count;
    aa_name_resolution_name_t names[AA_NAME_RESOLUTION_MAX_NAMES];
    int64_t duration_ns;                    /* how long the executor took (answers) */
    /* The conductor's: what the request is for. */
    int32_t kind;
    int64_t id;
    int64_t registration_key;               /* the registration the command acts on */
    int64_t depends_on;                     /* a command waiting for another request's answer */
    void *subject;                          /* re-resolution: the endpoint */
    struct sockaddr_storage current;        /* re-resolution: the address in use (family 0: none yet) */
    int64_t client_id;
    int32_t msg_type_id;
    uint8_t *command;
    size_t command_length;
    void *channel;                          /* the command's channel as parsed when it came (freed with it) */
    bool is_cancelled;
}
aa_name_resolution_request_t;

typedef void (*aa_name_resolver_executor_wake_func_t)(void *clientd);

typedef struct aa_name_resolver_executor_stct aa_name_resolver_executor_t;

/* Starts threads_count threads resolving with resolver (which must outlive the executor, see close). */
int aa_name_resolver_executor_create(
    aa_name_resolver_executor_t **executor, int32_t threads_count, aa_name_resolver_t *resolver,
    aa_name_resolver_executor_wake_func_t wake, void *wake_clientd);

/* Queues request (owned by the executor until it comes back from poll). Never blocks. */
void aa_name_resolver_executor_submit(aa_name_resolver_executor_t *executor, aa_name_resolution_request_t *request);

/* The requests answered since the last poll, as a list in completion order (NULL when none).
 * Wait-free when none: one atomic load. */
aa_name_resolution_request_t *aa_name_resolver_executor_poll(aa_name_resolver_executor_t *executor);

/* Requests submitted and not yet polled. */
int32_t aa_name_resolver_executor_in_flight(const aa_name_resolver_executor_t *executor);

/* Stops the threads, waiting at most timeout_ns for a lookup in progress. Returns 0 when every
 * thread stopped (requests not answered are freed), or 1 when a thread is still inside the resolver
 * (a DNS server that does not answer): the executor is then left to that thread, which frees it
 * when it returns, and the caller must NOT close the resolver (it is leaked, deliberately). */
int aa_name_resolver_executor_close(aa_name_resolver_executor_t *executor, int64_t timeout_ns);

/* Frees a request (and its command copy). */
void aa_name_resolution_request_free(aa_name_resolution_request_t *request);

/* Resolves every name of request with resolver, filling the answers: what a thread does (exposed
 * for tests and for a caller without an executor). */
void aa_name_resolution_request_run(aa_name_resolution_request_t *request, aa_name_resolver_t *resolver);

#endif
