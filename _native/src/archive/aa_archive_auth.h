/*
 * Who may use the archive (reference aeron-wave3.md 6; docs/security.md, "The archive"): the
 * authenticators a control session goes through between its connect and its first request, and the
 * roles that authorise each request kind (Aeron's AuthorisationService, asked per template id).
 *
 * An authenticator is Aeron's Authenticator as a function table: the conductor tells it about a
 * connect request and a challenge response (with their credentials) and asks it, for a session
 * whose responses are connected (on_connected_session, every 200 ms) or challenged
 * (on_challenged_session, every duty cycle), to decide through the session proxy: challenge it,
 * authenticate it (a principal and a role) or reject it. Built in: "allow-all" (Aeron's default),
 * "credentials" (principal:secret:role entries from a file or the environment, the secret compared in
 * constant time) and "python:<module:Class>" (events queued for a Python thread, which answers; the
 * conductor never calls Python nor waits for it).
 */
#ifndef AA_ARCHIVE_AUTH_H
#define AA_ARCHIVE_AUTH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "archive/aa_archive_context.h"

/* CDEF BEGIN */
/* Roles (what a principal may ask for, per request kind: aa_archive_role_allows). */
#define AA_ARCHIVE_ROLE_ADMIN 0   /* every request */
#define AA_ARCHIVE_ROLE_RECORD 1  /* read, and start, stop and extend recordings */
#define AA_ARCHIVE_ROLE_READ 2    /* listings, positions, replays, the archive id */

/* The events a Python authenticator's thread takes (aa_archive_auth_poll) and its answers
 * (aa_archive_auth_answer). */
#define AA_ARCHIVE_AUTH_EVENT_CONNECT 1
#define AA_ARCHIVE_AUTH_EVENT_CHALLENGE_RESPONSE 2
#define AA_ARCHIVE_AUTH_EVENT_CLOSED 3
#define AA_ARCHIVE_AUTH_ACCEPT 1
#define AA_ARCHIVE_AUTH_CHALLENGE 2
#define AA_ARCHIVE_AUTH_REJECT 3
#define AA_ARCHIVE_AUTH_DATA_MAX 4096
#define AA_ARCHIVE_AUTH_PRINCIPAL_MAX 256

typedef struct aa_archive_auth_event_stct
{
    int32_t kind;
    int64_t session_id;
    int64_t now_ms;
    uint32_t length;
    uint8_t data[4096];
}
aa_archive_auth_event_t;
/* CDEF END */

/* The session an authenticator decides about (the conductor's; aa_archive_conductor.c). */
typedef struct aa_archive_session_proxy_stct aa_archive_session_proxy_t;
int64_t aa_archive_session_proxy_id(aa_archive_session_proxy_t *proxy);
/* Each returns true when its response was sent (Aeron's ControlSessionProxy). */
bool aa_archive_session_proxy_challenge(aa_archive_session_proxy_t *proxy, const uint8_t *data, size_t length);
bool aa_archive_session_proxy_authenticate(aa_archive_session_proxy_t *proxy, const char *principal, int32_t role);
void aa_archive_session_proxy_reject(aa_archive_session_proxy_t *proxy);

typedef struct aa_archive_authenticator_stct
{
    const char *name;
    void *state;
    void (*on_connect_request)(void *state, int64_t session_id, const uint8_t *credentials, size_t length, int64_t now_ms);
    void (*on_challenge_response)(void *state, int64_t session_id, const uint8_t *credentials, size_t length,
        int64_t now_ms);
    void (*on_connected_session)(void *state, aa_archive_session_proxy_t *proxy, int64_t now_ms);
    void (*on_challenged_session)(void *state, aa_archive_session_proxy_t *proxy, int64_t now_ms);
    void (*on_session_closed)(void *state, int64_t session_id);
    void (*close)(void *state);
    bool is_python;
}
aa_archive_authenticator_t;

/* The authenticator the context names (AERON_ARCHIVE_AUTHENTICATOR); the credentials entries are
 * read and checked here (a file must be a regular file of the archive's user, owner-only). */
int aa_archive_authenticator_create(aa_archive_authenticator_t *out, const aa_archive_context_t *ctx);
void aa_archive_authenticator_close(aa_archive_authenticator_t *authenticator);

/* Whether role may send the request of template_id (the reference's templates asked about:
 * 4-19, 50-57, 61-68, 104, 105, 107; others are never asked and pass). */
bool aa_archive_role_allows(int32_t role, int32_t template_id);
/* "admin", "record", "read"; -1 for another name. */
int32_t aa_archive_role_parse(const char *name, size_t length);
const char *aa_archive_role_name(int32_t role);
/* The roles that may send template_id, for the refusal's message ("admin" or "record or admin"). */
const char *aa_archive_roles_allowing(int32_t template_id);

/* Equal bytes, in time that depends only on the lengths (never on where they differ). */
bool aa_archive_equal_constant_time(const uint8_t *a, size_t a_length, const uint8_t *b, size_t b_length);

/* A Python authenticator's thread: the next event (1), none within timeout_ms (0), or -1 (the archive's
 * authenticator is not a Python one, the error set). */
int aa_archive_authenticator_poll(aa_archive_authenticator_t *authenticator, aa_archive_auth_event_t *event,
    int64_t timeout_ms);
/* Its answer for a session: AA_ARCHIVE_AUTH_ACCEPT (data: the principal; role), _CHALLENGE (data: the
 * challenge) or _REJECT. */
int aa_archive_authenticator_answer(aa_archive_authenticator_t *authenticator, int64_t session_id, int32_t decision,
    const uint8_t *data, size_t length, int32_t role);

#endif
