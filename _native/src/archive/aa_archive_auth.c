/*
 * The archive's authenticators and roles (archive/aa_archive_auth.h; docs/security.md, "The
 * archive"): allow-all (Aeron's DefaultAuthenticatorSupplier), credentials (principal:secret:role
 * entries, from a file or the environment) and the queue a Python authenticator's thread serves.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive/aa_archive_auth.h"
#include "protocols/aa_archive_codecs.h"
#include "util/aa_array.h"
#include "util/aa_error.h"
#include "util/aa_fs.h"

#define AA_AUTH_FILE_MAX (1024 * 1024)
#define AA_AUTH_QUEUE_MAX 1024

/* ---- roles (reference aeron-wave3.md 6.4: the templates the AuthorisationService is asked about) ---- */

static bool aa_is_read_request(int32_t template_id)
{
    switch (template_id)
    {
        case AA_ARCHIVE_TEMPLATE_REPLAY_REQUEST:
        case AA_ARCHIVE_TEMPLATE_STOP_REPLAY_REQUEST:
        case AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_REQUEST:
        case AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_FOR_URI_REQUEST:
        case AA_ARCHIVE_TEMPLATE_LIST_RECORDING_REQUEST:
        case AA_ARCHIVE_TEMPLATE_RECORDING_POSITION_REQUEST:
        case AA_ARCHIVE_TEMPLATE_STOP_POSITION_REQUEST:
        case AA_ARCHIVE_TEMPLATE_FIND_LAST_MATCHING_RECORDING_REQUEST:
        case AA_ARCHIVE_TEMPLATE_LIST_RECORDING_SUBSCRIPTIONS_REQUEST:
        case AA_ARCHIVE_TEMPLATE_BOUNDED_REPLAY_REQUEST:
        case AA_ARCHIVE_TEMPLATE_STOP_ALL_REPLAYS_REQUEST:
        case AA_ARCHIVE_TEMPLATE_START_POSITION_REQUEST:
        case AA_ARCHIVE_TEMPLATE_KEEP_ALIVE_REQUEST:
        case AA_ARCHIVE_TEMPLATE_MAX_RECORDED_POSITION_REQUEST:
        case AA_ARCHIVE_TEMPLATE_ARCHIVE_ID_REQUEST:
        case AA_ARCHIVE_TEMPLATE_REPLAY_TOKEN_REQUEST:
            return true;
        default:
            return false;
    }
}

static bool aa_is_record_request(int32_t template_id)
{
    switch (template_id)
    {
        case AA_ARCHIVE_TEMPLATE_START_RECORDING_REQUEST:
        case AA_ARCHIVE_TEMPLATE_STOP_RECORDING_REQUEST:
        case AA_ARCHIVE_TEMPLATE_EXTEND_RECORDING_REQUEST:
        case AA_ARCHIVE_TEMPLATE_STOP_RECORDING_SUBSCRIPTION_REQUEST:
        case AA_ARCHIVE_TEMPLATE_START_RECORDING_REQUEST2:
        case AA_ARCHIVE_TEMPLATE_EXTEND_RECORDING_REQUEST2:
        case AA_ARCHIVE_TEMPLATE_STOP_RECORDING_BY_IDENTITY_REQUEST:
            return true;
        default:
            return false;
    }
}

static bool aa_is_asked_about(int32_t template_id)
{
    return (template_id >= 4 && template_id <= 19) || (template_id >= 50 && template_id <= 57) ||
        (template_id >= 61 && template_id <= 68) || 104 == template_id || 105 == template_id || 107 == template_id;
}

bool aa_archive_role_allows(int32_t role, int32_t template_id)
{
    if (role < AA_ARCHIVE_ROLE_ADMIN || role > AA_ARCHIVE_ROLE_READ)
    {
        return false; /* not authenticated */
    }
    if (AA_ARCHIVE_ROLE_ADMIN == role || !aa_is_asked_about(template_id) || aa_is_read_request(template_id))
    {
        return true;
    }
    return AA_ARCHIVE_ROLE_RECORD == role && aa_is_record_request(template_id);
}

const char *aa_archive_roles_allowing(int32_t template_id)
{
    if (aa_is_read_request(template_id))
    {
        return "read, record or admin";
    }
    return aa_is_record_request(template_id) ? "record or admin" : "admin";
}

static const char *const aa_role_names[] = { "admin", "record", "read" };

int32_t aa_archive_role_parse(const char *name, size_t length)
{
    for (int32_t i = 0; i < 3; i++)
    {
        if (strlen(aa_role_names[i]) == length && 0 == strncmp(aa_role_names[i], name, length))
        {
            return i;
        }
    }
    return -1;
}

const char *aa_archive_role_name(int32_t role)
{
    return role >= 0 && role < 3 ? aa_role_names[role] : "?";
}

bool aa_archive_equal_constant_time(const uint8_t *a, size_t a_length, const uint8_t *b, size_t b_length)
{
    /* every byte of the longer is visited; the lengths differing counts as a difference */
    size_t n = a_length > b_length ? a_length : b_length;
    volatile uint8_t diff = (uint8_t)(a_length != b_length);
    for (size_t i = 0; i < n; i++)
    {
        uint8_t x = i < a_length ? a[i] : 0;
        uint8_t y = i < b_length ? b[i] : 0;
        diff |= (uint8_t)(x ^ y);
    }
    return 0 == diff;
}

/* ---- decisions: what an authenticator decided about a session, until the conductor asks ---- */

typedef struct aa_auth_decision_stct
{
    int64_t session_id;
    int32_t decision; /* AA_ARCHIVE_AUTH_*; 0: none yet */
    int32_t role;
    uint32_t length;
    uint8_t data[AA_ARCHIVE_AUTH_DATA_MAX]; /* the principal (NUL-terminated) or the challenge */
}
aa_auth_decision_t;

typedef struct aa_auth_decisions_stct
{
    aa_auth_decision_t **items;
    size_t count;
    size_t capacity;
}
aa_auth_decisions_t;

static aa_auth_decision_t *aa_decision_find(aa_auth_decisions_t *d, int64_t session_id, size_t *index)
{
    for (size_t i = 0; i < d->count; i++)
    {
        if (d->items[i]->session_id == session_id)
        {
            if (NULL != index)
            {
                *index = i;
            }
            return d->items[i];
        }
    }
    return NULL;
}

static void aa_decision_remove(aa_auth_decisions_t *d, int64_t session_id)
{
    size_t i;
    aa_auth_decision_t *item = aa_decision_find(d, session_id, &i);
    if (NULL != item)
    {
        d->items[i] = d->items[--d->count];
        free(item);
    }
}

static void aa_decision_set(aa_auth_decisions_t *d, int64_t session_id, int32_t decision, const uint8_t *data,
    size_t length, int32_t role)
{
    aa_auth_decision_t *item = aa_decision_find(d, session_id, NULL);
    if (NULL == item)
    {
        item = calloc(1, sizeof(*item));
        if (NULL == item || aa_array_ensure_capacity((void **)&d->items, &d->capacity, d->count, sizeof(*d->items)) < 0)
        {
            free(item);
            return; /* out of memory: no decision, the session times out */
        }
        item->session_id = session_id;
        d->items[d->count++] = item;
    }
    if (length > AA_ARCHIVE_AUTH_DATA_MAX - 1)
    {
        length = AA_ARCHIVE_AUTH_DATA_MAX - 1;
    }
    item->decision = decision;
    item->role = role;
    item->length = (uint32_t)length;
    if (length > 0)
    {
        memcpy(item->data, data, length);
    }
    item->data[length] = '\0';
}

/* Applies a session's decision through its proxy; false when there is none yet. */
static bool aa_decision_apply(aa_auth_decisions_t *d, aa_archive_session_proxy_t *proxy)
{
    int64_t session_id = aa_archive_session_proxy_id(proxy);
    aa_auth_decision_t *item = aa_decision_find(d, session_id, NULL);
    if (NULL == item || 0 == item->decision)
    {
        return false;
    }
    switch (item->decision)
    {
        case AA_ARCHIVE_AUTH_ACCEPT:
            aa_archive_session_proxy_authenticate(proxy, (const char *)item->data, item->role);
            break;
        case AA_ARCHIVE_AUTH_CHALLENGE:
            aa_archive_session_proxy_challenge(proxy, item->data, item->length);
            break;
        default:
            aa_archive_session_proxy_reject(proxy);
            break;
    }
    aa_decision_remove(d, session_id);
    return true;
}

static void aa_decisions_free(aa_auth_decisions_t *d)
{
    for (size_t i = 0; i < d->count; i++)
    {
        free(d->items[i]);
    }
    free(d->items);
}

/* ---- allow-all: Aeron's DefaultAuthenticatorSupplier (an empty principal, every request) ---- */

static void aa_allow_all_on_request(void *state, int64_t session_id, const uint8_t *credentials, size_t length,
    int64_t now_ms)
{
    (void)state; (void)session_id; (void)credentials; (void)length; (void)now_ms;
}

static void aa_allow_all_on_session(void *state, aa_archive_session_proxy_t *proxy, int64_t now_ms)
{
    (void)state; (void)now_ms;
    aa_archive_session_proxy_authenticate(proxy, "", AA_ARCHIVE_ROLE_ADMIN);
}

static void aa_allow_all_on_closed(void *state, int64_t session_id)
{
    (void)state; (void)session_id;
}

static void aa_allow_all_close(void *state)
{
    (void)state;
}

/* ---- credentials: principal:secret:role entries ---- */

typedef struct aa_credential_stct
{
    char principal[AA_ARCHIVE_AUTH_PRINCIPAL_MAX];
    uint8_t *secret;
    size_t secret_length;
    int32_t role;
}
aa_credential_t;

typedef struct aa_credentials_auth_stct
{
    aa_credential_t *entries;
    size_t count;
    size_t capacity;
    aa_auth_decisions_t decisions;
}
aa_credentials_auth_t;

static void aa_credentials_free(aa_credentials_auth_t *a)
{
    for (size_t i = 0; i < a->count; i++)
    {
        if (NULL != a->entries[i].secret)
        {
            memset(a->entries[i].secret, 0, a->entries[i].secret_length);
            free(a->entries[i].secret);
        }
    }
    free(a->entries);
    aa_decisions_free(&a->decisions);
    free(a);
}

/* One principal:secret:role entry (the secret may hold ':'; the role follows the last one). */
static int aa_credentials_add(aa_credentials_auth_t *a, const char *line, size_t length, const char *source, int number)
{
    const char *first = memchr(line, ':', length);
    const char *last = NULL;
    for (size_t i = length; i > 0; i--)
    {
        if (':' == line[i - 1])
        {
            last = line + i - 1;
            break;
        }
    }
    if (NULL == first || first == last || first == line)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "%s, entry %d: not principal:secret:role (roles: admin, record, read); write one entry per line", source,
            number);
        return -1;
    }
    size_t principal_length = (size_t)(first - line);
    size_t secret_length = (size_t)(last - first - 1);
    int32_t role = aa_archive_role_parse(last + 1, (size_t)(line + length - last - 1));
    if (role < 0 || principal_length >= AA_ARCHIVE_AUTH_PRINCIPAL_MAX || 0 == secret_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "%s, entry %d: %s; write principal:secret:role with a role of admin, record or read, a non-empty secret and "
            "a principal under %d bytes", source, number, role < 0 ? "unknown role" : "bad principal or secret",
            AA_ARCHIVE_AUTH_PRINCIPAL_MAX);
        return -1;
    }
    if (aa_array_ensure_capacity((void **)&a->entries, &a->capacity, a->count, sizeof(*a->entries)) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory");
        return -1;
    }
    aa_credential_t *e = &a->entries[a->count];
    memset(e, 0, sizeof(*e));
    memcpy(e->principal, line, principal_length);
    e->secret = malloc(secret_length);
    if (NULL == e->secret)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory");
        return -1;
    }
    memcpy(e->secret, first + 1, secret_length);
    e->secret_length = secret_length;
    e->role = role;
    a->count++;
    return 0;
}

/* Entries separated by newlines (and, from the environment, commas); blank lines and # comments skipped. */
static int aa_credentials_parse(aa_credentials_auth_t *a, const char *text, size_t length, const char *separators,
    const char *source)
{
    int number = 0;
    size_t start = 0;
    while (start < length)
    {
        size_t end = start;
        while (end < length && NULL == strchr(separators, text[end]))
        {
            end++;
        }
        size_t s = start, e = end;
        while (s < e && (' ' == text[s] || '\t' == text[s]))
        {
            s++;
        }
        while (e > s && (' ' == text[e - 1] || '\t' == text[e - 1] || '\r' == text[e - 1]))
        {
            e--;
        }
        number++;
        if (e > s && '#' != text[s] && aa_credentials_add(a, text + s, e - s, source, number) < 0)
        {
            return -1;
        }
        start = end + 1;
    }
    return 0;
}

/* The credentials file: a file of secrets (util/aa_fs.h; docs/security.md, "Files of secrets"). */
static int aa_credentials_read_file(aa_credentials_auth_t *a, const char *path)
{
    uint8_t *text = malloc(AA_AUTH_FILE_MAX);
    if (NULL == text)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory reading AERON_ARCHIVE_CREDENTIALS_FILE");
        return -1;
    }
    int64_t n = aa_secret_file_read("AERON_ARCHIVE_CREDENTIALS_FILE", path, text, AA_AUTH_FILE_MAX);
    if (n < 0)
    {
        free(text);
        return -1;
    }
    char source[AA_ARCHIVE_PATH_MAX + 64];
    snprintf(source, sizeof(source), "AERON_ARCHIVE_CREDENTIALS_FILE %s", path);
    int rc = aa_credentials_parse(a, (const char *)text, (size_t)n, "\n", source);
    memset(text, 0, (size_t)n);
    free(text);
    return rc;
}

/* The AuthConnect's credentials are principal:secret; an unknown principal is compared against a
 * secret of its own so that the time taken does not tell which principals exist. */
static void aa_credentials_on_connect(void *state, int64_t session_id, const uint8_t *credentials, size_t length,
    int64_t now_ms)
{
    (void)now_ms;
    aa_credentials_auth_t *a = state;
    static const uint8_t nobody[] = "\x01 no principal has this secret \x01";
    const uint8_t *colon = NULL == credentials ? NULL : memchr(credentials, ':', length);
    size_t principal_length = NULL == colon ? 0 : (size_t)(colon - credentials);
    const aa_credential_t *found = NULL;
    for (size_t i = 0; NULL != colon && i < a->count; i++)
    {
        if (strlen(a->entries[i].principal) == principal_length &&
            0 == memcmp(a->entries[i].principal, credentials, principal_length))
        {
            found = &a->entries[i];
        }
    }
    const uint8_t *secret = NULL == colon ? (const uint8_t *)"" : colon + 1;
    size_t secret_length = NULL == colon ? 0 : length - principal_length - 1;
    bool equal = NULL != found ?
        aa_archive_equal_constant_time(found->secret, found->secret_length, secret, secret_length) :
        aa_archive_equal_constant_time(nobody, sizeof(nobody) - 1, secret, secret_length);
    if (NULL != found && equal)
    {
        aa_decision_set(&a->decisions, session_id, AA_ARCHIVE_AUTH_ACCEPT, (const uint8_t *)found->principal,
            strlen(found->principal), found->role);
    }
    else
    {
        aa_decision_set(&a->decisions, session_id, AA_ARCHIVE_AUTH_REJECT, NULL, 0, 0);
    }
}

static void aa_credentials_on_challenge_response(void *state, int64_t session_id, const uint8_t *credentials,
    size_t length, int64_t now_ms)
{
    (void)credentials; (void)length; (void)now_ms;
    aa_credentials_auth_t *a = state;
    aa_decision_set(&a->decisions, session_id, AA_ARCHIVE_AUTH_REJECT, NULL, 0, 0); /* it never challenges */
}

static void aa_credentials_on_session(void *state, aa_archive_session_proxy_t *proxy, int64_t now_ms)
{
    (void)now_ms;
    aa_credentials_auth_t *a = state;
    if (!aa_decision_apply(&a->decisions, proxy))
    {
        aa_archive_session_proxy_reject(proxy);
    }
}

static void aa_credentials_on_closed(void *state, int64_t session_id)
{
    aa_credentials_auth_t *a = state;
    aa_decision_remove(&a->decisions, session_id);
}

static void aa_credentials_close(void *state)
{
    aa_credentials_free(state);
}

static int aa_credentials_create(aa_archive_authenticator_t *out, const aa_archive_context_t *ctx)
{
    aa_credentials_auth_t *a = calloc(1, sizeof(*a));
    if (NULL == a)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory");
        return -1;
    }
    if (('\0' != ctx->credentials_file[0] && aa_credentials_read_file(a, ctx->credentials_file) < 0) ||
        ('\0' != ctx->credentials[0] &&
            aa_credentials_parse(a, ctx->credentials, strlen(ctx->credentials), "\n,", "AERON_ARCHIVE_CREDENTIALS") < 0))
    {
        aa_credentials_free(a);
        return -1;
    }
    if (0 == a->count)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "AERON_ARCHIVE_AUTHENTICATOR=credentials has no entries: give AERON_ARCHIVE_CREDENTIALS_FILE (a file of "
            "principal:secret:role lines, mode 600) or AERON_ARCHIVE_CREDENTIALS");
        aa_credentials_free(a);
        return -1;
    }
    out->name = "credentials";
    out->state = a;
    out->on_connect_request = aa_credentials_on_connect;
    out->on_challenge_response = aa_credentials_on_challenge_response;
    out->on_connected_session = aa_credentials_on_session;
    out->on_challenged_session = aa_credentials_on_session;
    out->on_session_closed = aa_credentials_on_closed;
    out->close = aa_credentials_close;
    return 0;
}

/* ---- python: events for a Python thread, its answers back (docs/security.md, "The archive") ---- */

typedef struct aa_python_auth_stct
{
    pthread_mutex_t lock;
    pthread_cond_t available;
    aa_archive_auth_event_t **events; /* a FIFO: [head, head + count) modulo AA_AUTH_QUEUE_MAX */
    size_t head;
    size_t count;
    aa_auth_decisions_t decisions;
}
aa_python_auth_t;

/* Queues an event; a full queue (the Python thread fell behind) rejects the session. */
static void aa_python_push(aa_python_auth_t *p, int32_t kind, int64_t session_id, const uint8_t *data, size_t length,
    int64_t now_ms)
{
    aa_archive_auth_event_t *event = malloc(sizeof(*event));
    pthread_mutex_lock(&p->lock);
    if (NULL == event || p->count >= AA_AUTH_QUEUE_MAX)
    {
        if (AA_ARCHIVE_AUTH_EVENT_CLOSED != kind)
        {
            aa_decision_set(&p->decisions, session_id, AA_ARCHIVE_AUTH_REJECT, NULL, 0, 0);
        }
        pthread_mutex_unlock(&p->lock);
        free(event);
        return;
    }
    event->kind = kind;
    event->session_id = session_id;
    event->now_ms = now_ms;
    event->length = (uint32_t)(length > AA_ARCHIVE_AUTH_DATA_MAX ? AA_ARCHIVE_AUTH_DATA_MAX : length);
    if (event->length > 0)
    {
        memcpy(event->data, data, event->length);
    }
    p->events[(p->head + p->count) % AA_AUTH_QUEUE_MAX] = event;
    p->count++;
    pthread_cond_signal(&p->available);
    pthread_mutex_unlock(&p->lock);
}

static void aa_python_on_connect(void *state, int64_t session_id, const uint8_t *credentials, size_t length,
    int64_t now_ms)
{
    aa_python_push(state, AA_ARCHIVE_AUTH_EVENT_CONNECT, session_id, credentials, length, now_ms);
}

static void aa_python_on_challenge_response(void *state, int64_t session_id, const uint8_t *credentials, size_t length,
    int64_t now_ms)
{
    aa_python_push(state, AA_ARCHIVE_AUTH_EVENT_CHALLENGE_RESPONSE, session_id, credentials, length, now_ms);
}

static void aa_python_on_session(void *state, aa_archive_session_proxy_t *proxy, int64_t now_ms)
{
    (void)now_ms;
    aa_python_auth_t *p = state;
    pthread_mutex_lock(&p->lock);
    aa_decision_apply(&p->decisions, proxy); /* none yet: ask again later (the session's deadline bounds it) */
    pthread_mutex_unlock(&p->lock);
}

static void aa_python_on_closed(void *state, int64_t session_id)
{
    aa_python_auth_t *p = state;
    pthread_mutex_lock(&p->lock);
    aa_decision_remove(&p->decisions, session_id);
    pthread_mutex_unlock(&p->lock);
    aa_python_push(p, AA_ARCHIVE_AUTH_EVENT_CLOSED, session_id, NULL, 0, 0);
}

static void aa_python_close(void *state)
{
    aa_python_auth_t *p = state;
    for (size_t i = 0; i < p->count; i++)
    {
        free(p->events[(p->head + i) % AA_AUTH_QUEUE_MAX]);
    }
    free(p->events);
    aa_decisions_free(&p->decisions);
    pthread_cond_destroy(&p->available);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static int aa_python_create(aa_archive_authenticator_t *out)
{
    aa_python_auth_t *p = calloc(1, sizeof(*p));
    if (NULL == p || NULL == (p->events = calloc(AA_AUTH_QUEUE_MAX, sizeof(*p->events))))
    {
        free(p);
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory");
        return -1;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&p->available, &attr);
    pthread_condattr_destroy(&attr);
    out->name = "python";
    out->state = p;
    out->on_connect_request = aa_python_on_connect;
    out->on_challenge_response = aa_python_on_challenge_response;
    out->on_connected_session = aa_python_on_session;
    out->on_challenged_session = aa_python_on_session;
    out->on_session_closed = aa_python_on_closed;
    out->close = aa_python_close;
    out->is_python = true;
    return 0;
}

int aa_archive_authenticator_poll(aa_archive_authenticator_t *authenticator, aa_archive_auth_event_t *event,
    int64_t timeout_ms)
{
    if (!authenticator->is_python)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "the archive's authenticator is %s, not a Python one",
            authenticator->name);
        return -1;
    }
    aa_python_auth_t *p = authenticator->state;
    pthread_mutex_lock(&p->lock);
    if (0 == p->count && timeout_ms > 0)
    {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (timeout_ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000)
        {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        while (0 == p->count && ETIMEDOUT != pthread_cond_timedwait(&p->available, &p->lock, &until))
        {
        }
    }
    aa_archive_auth_event_t *taken = NULL;
    if (p->count > 0)
    {
        taken = p->events[p->head];
        p->head = (p->head + 1) % AA_AUTH_QUEUE_MAX;
        p->count--;
    }
    pthread_mutex_unlock(&p->lock);
    if (NULL == taken)
    {
        return 0;
    }
    memcpy(event, taken, sizeof(*event));
    free(taken);
    return 1;
}

int aa_archive_authenticator_answer(aa_archive_authenticator_t *authenticator, int64_t session_id, int32_t decision,
    const uint8_t *data, size_t length, int32_t role)
{
    if (!authenticator->is_python)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "the archive's authenticator is %s, not a Python one",
            authenticator->name);
        return -1;
    }
    if (decision < AA_ARCHIVE_AUTH_ACCEPT || decision > AA_ARCHIVE_AUTH_REJECT ||
        (AA_ARCHIVE_AUTH_ACCEPT == decision && (role < 0 || role > AA_ARCHIVE_ROLE_READ ||
            length >= AA_ARCHIVE_AUTH_PRINCIPAL_MAX)) || length >= AA_ARCHIVE_AUTH_DATA_MAX)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "authenticator answer %d for session %" PRId64 " is not valid: accept (a principal under %d bytes and a "
            "role), challenge (under %d bytes) or reject", decision, session_id, AA_ARCHIVE_AUTH_PRINCIPAL_MAX,
            AA_ARCHIVE_AUTH_DATA_MAX);
        return -1;
    }
    aa_python_auth_t *p = authenticator->state;
    pthread_mutex_lock(&p->lock);
    aa_decision_set(&p->decisions, session_id, decision, data, length, role);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

/* ---- which ---- */

int aa_archive_authenticator_create(aa_archive_authenticator_t *out, const aa_archive_context_t *ctx)
{
    memset(out, 0, sizeof(*out));
    if (0 == strcmp(ctx->authenticator, "credentials"))
    {
        return aa_credentials_create(out, ctx);
    }
    if (0 == strncmp(ctx->authenticator, "python:", 7))
    {
        return aa_python_create(out);
    }
    out->name = "allow-all";
    out->on_connect_request = aa_allow_all_on_request;
    out->on_challenge_response = aa_allow_all_on_request;
    out->on_connected_session = aa_allow_all_on_session;
    out->on_challenged_session = aa_allow_all_on_session;
    out->on_session_closed = aa_allow_all_on_closed;
    out->close = aa_allow_all_close;
    return 0;
}

void aa_archive_authenticator_close(aa_archive_authenticator_t *authenticator)
{
    if (NULL != authenticator->close)
    {
        authenticator->close(authenticator->state);
    }
    memset(authenticator, 0, sizeof(*authenticator));
}
