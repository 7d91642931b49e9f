/* The archive's authenticators and roles (archive/aa_archive_auth.h; docs/security.md, "The
 * archive"), through a fake session proxy: which role may send which request, the constant-time
 * comparison, the credentials entries (file and environment) and their checks, and the queue a
 * Python authenticator's thread serves (events out, answers back, from another thread). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aa_test.h"
#include "archive/aa_archive_auth.h"
#include "protocols/aa_archive_codecs.h"
#include "util/aa_error.h"

/* the fake proxy: what the authenticator decided */
struct aa_archive_session_proxy_stct
{
    int64_t id;
    int decided; /* 0 none, else AA_ARCHIVE_AUTH_* */
    char principal[AA_ARCHIVE_AUTH_PRINCIPAL_MAX];
    int32_t role;
    uint8_t challenge[64];
    size_t challenge_length;
};

int64_t aa_archive_session_proxy_id(aa_archive_session_proxy_t *proxy)
{
    return proxy->id;
}

bool aa_archive_session_proxy_challenge(aa_archive_session_proxy_t *proxy, const uint8_t *data, size_t length)
{
    proxy->decided = AA_ARCHIVE_AUTH_CHALLENGE;
    proxy->challenge_length = length < sizeof(proxy->challenge) ? length : sizeof(proxy->challenge);
    memcpy(proxy->challenge, data, proxy->challenge_length);
    return true;
}

bool aa_archive_session_proxy_authenticate(aa_archive_session_proxy_t *proxy, const char *principal, int32_t role)
{
    proxy->decided = AA_ARCHIVE_AUTH_ACCEPT;
    snprintf(proxy->principal, sizeof(proxy->principal), "%s", principal);
    proxy->role = role;
    return true;
}

void aa_archive_session_proxy_reject(aa_archive_session_proxy_t *proxy)
{
    proxy->decided = AA_ARCHIVE_AUTH_REJECT;
}

static void test_roles(void)
{
    /* admin: everything; record: read and recording; read: listings, positions, replays */
    AA_CHECK(aa_archive_role_allows(AA_ARCHIVE_ROLE_ADMIN, AA_ARCHIVE_TEMPLATE_PURGE_RECORDING_REQUEST));
    AA_CHECK(!aa_archive_role_allows(AA_ARCHIVE_ROLE_RECORD, AA_ARCHIVE_TEMPLATE_PURGE_RECORDING_REQUEST));
    AA_CHECK(!aa_archive_role_allows(AA_ARCHIVE_ROLE_READ, AA_ARCHIVE_TEMPLATE_PURGE_RECORDING_REQUEST));
    AA_CHECK(!aa_archive_role_allows(AA_ARCHIVE_ROLE_READ, AA_ARCHIVE_TEMPLATE_TRUNCATE_RECORDING_REQUEST));
    AA_CHECK(!aa_archive_role_allows(AA_ARCHIVE_ROLE_READ, AA_ARCHIVE_TEMPLATE_START_RECORDING_REQUEST2));
    AA_CHECK(!aa_archive_role_allows(AA_ARCHIVE_ROLE_READ, AA_ARCHIVE_TEMPLATE_DETACH_SEGMENTS_REQUEST));
    AA_CHECK(aa_archive_role_allows(AA_ARCHIVE_ROLE_RECORD, AA_ARCHIVE_TEMPLATE_START_RECORDING_REQUEST2));
    AA_CHECK(aa_archive_role_allows(AA_ARCHIVE_ROLE_RECORD, AA_ARCHIVE_TEMPLATE_STOP_RECORDING_BY_IDENTITY_REQUEST));
    AA_CHECK(!aa_archive_role_allows(AA_ARCHIVE_ROLE_RECORD, AA_ARCHIVE_TEMPLATE_REPLICATE_REQUEST2));
    int32_t reads[] = { AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_REQUEST, AA_ARCHIVE_TEMPLATE_REPLAY_REQUEST,
        AA_ARCHIVE_TEMPLATE_BOUNDED_REPLAY_REQUEST, AA_ARCHIVE_TEMPLATE_KEEP_ALIVE_REQUEST,
        AA_ARCHIVE_TEMPLATE_ARCHIVE_ID_REQUEST, AA_ARCHIVE_TEMPLATE_MAX_RECORDED_POSITION_REQUEST };
    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
    {
        AA_CHECK(aa_archive_role_allows(AA_ARCHIVE_ROLE_READ, reads[i]));
    }
    /* never asked (reference 6.4): CloseSession, AuthConnect, ChallengeResponse */
    AA_CHECK(aa_archive_role_allows(AA_ARCHIVE_ROLE_READ, AA_ARCHIVE_TEMPLATE_CLOSE_SESSION_REQUEST));
    AA_CHECK(!aa_archive_role_allows(-1, AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_REQUEST));
    AA_CHECK(0 == strcmp(aa_archive_roles_allowing(AA_ARCHIVE_TEMPLATE_PURGE_RECORDING_REQUEST), "admin"));
    AA_CHECK_EQ(aa_archive_role_parse("read", 4), AA_ARCHIVE_ROLE_READ);
    AA_CHECK_EQ(aa_archive_role_parse("reader", 6), -1);
}

static void test_constant_time_equality(void)
{
    AA_CHECK(aa_archive_equal_constant_time((const uint8_t *)"secret", 6, (const uint8_t *)"secret", 6));
    AA_CHECK(!aa_archive_equal_constant_time((const uint8_t *)"secret", 6, (const uint8_t *)"secreT", 6));
    AA_CHECK(!aa_archive_equal_constant_time((const uint8_t *)"secret", 6, (const uint8_t *)"secret\0", 7));
    AA_CHECK(!aa_archive_equal_constant_time((const uint8_t *)"secret", 6, (const uint8_t *)"", 0));
    AA_CHECK(aa_archive_equal_constant_time((const uint8_t *)"", 0, (const uint8_t *)"", 0));
}

static int decide(aa_archive_authenticator_t *a, int64_t id, const char *credentials, aa_archive_session_proxy_t *out)
{
    memset(out, 0, sizeof(*out));
    out->id = id;
    a->on_connect_request(a->state, id, (const uint8_t *)credentials, strlen(credentials), 0);
    a->on_connected_session(a->state, out, 0);
    return out->decided;
}

static void test_credentials_authenticator(void)
{
    char path[] = "/tmp/aa-archive-credentials-XXXXXX";
    int fd = mkstemp(path);
    AA_CHECK(fd >= 0);
    const char *text = "# principals\nadmin:pa:ss:admin\n  reader:r:read  \n\n";
    AA_CHECK_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    aa_archive_context_t ctx;
    unsetenv("AERON_ARCHIVE_CREDENTIALS");
    AA_CHECK_EQ(aa_archive_context_init(&ctx), 0);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_AUTHENTICATOR", "credentials"), 0);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_CREDENTIALS_FILE", path), 0);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_CREDENTIALS", "ops:o:record"), 0);
    aa_archive_authenticator_t a;
    AA_CHECK_EQ(aa_archive_authenticator_create(&a, &ctx), 0);
    aa_archive_session_proxy_t p;
    AA_CHECK_EQ(decide(&a, 1, "admin:pa:ss", &p), AA_ARCHIVE_AUTH_ACCEPT);
    AA_CHECK(0 == strcmp(p.principal, "admin") && AA_ARCHIVE_ROLE_ADMIN == p.role);
    AA_CHECK_EQ(decide(&a, 2, "reader:r", &p), AA_ARCHIVE_AUTH_ACCEPT);
    AA_CHECK_EQ(p.role, AA_ARCHIVE_ROLE_READ);
    AA_CHECK_EQ(decide(&a, 3, "ops:o", &p), AA_ARCHIVE_AUTH_ACCEPT);
    AA_CHECK_EQ(p.role, AA_ARCHIVE_ROLE_RECORD);
    const char *refused[] = { "", "admin", "admin:", "admin:pa", "admin:pa:ss:admin", "reader:R", "nobody:r", ":r" };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
    {
        AA_CHECK_EQ(decide(&a, 10 + (int64_t)i, refused[i], &p), AA_ARCHIVE_AUTH_REJECT);
    }
    /* a session asked about without a connect (it never was told) is rejected */
    memset(&p, 0, sizeof(p));
    p.id = 99;
    a.on_connected_session(a.state, &p, 0);
    AA_CHECK_EQ(p.decided, AA_ARCHIVE_AUTH_REJECT);
    aa_archive_authenticator_close(&a);

    /* a file others may read is refused, naming the mode and the fix; so is a bad entry */
    chmod(path, 0640);
    AA_CHECK_EQ(aa_archive_authenticator_create(&a, &ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "mode 0640") && NULL != strstr(aa_errmsg(), "chmod 600"));
    chmod(path, 0600);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_CREDENTIALS", "ops:o:root"), 0);
    AA_CHECK_EQ(aa_archive_authenticator_create(&a, &ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "unknown role"));
    unlink(path);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_CREDENTIALS", ""), 0);
    AA_CHECK_EQ(aa_archive_authenticator_create(&a, &ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_ARCHIVE_CREDENTIALS_FILE"));
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_AUTHENTICATOR", "nope"), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "allow-all, credentials or python:module:Class"));
}

typedef struct
{
    aa_archive_authenticator_t *a;
    int answered;
}
answerer_t;

/* the Python thread's part: takes two events, challenges the connect and accepts its answer */
static void *answerer(void *arg)
{
    answerer_t *t = arg;
    aa_archive_auth_event_t event;
    while (t->answered < 2)
    {
        if (1 != aa_archive_authenticator_poll(t->a, &event, 1000))
        {
            continue;
        }
        if (AA_ARCHIVE_AUTH_EVENT_CONNECT == event.kind)
        {
            aa_archive_authenticator_answer(t->a, event.session_id, AA_ARCHIVE_AUTH_CHALLENGE, (const uint8_t *)"nonce",
                5, 0);
        }
        else if (AA_ARCHIVE_AUTH_EVENT_CHALLENGE_RESPONSE == event.kind)
        {
            bool good = 6 == event.length && 0 == memcmp(event.data, "answer", 6);
            aa_archive_authenticator_answer(t->a, event.session_id, good ? AA_ARCHIVE_AUTH_ACCEPT : AA_ARCHIVE_AUTH_REJECT,
                (const uint8_t *)"alice", 5, AA_ARCHIVE_ROLE_READ);
        }
        t->answered++;
    }
    return NULL;
}

static void test_python_queue(void)
{
    aa_archive_context_t ctx;
    AA_CHECK_EQ(aa_archive_context_init(&ctx), 0);
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_AUTHENTICATOR", "python:mod:Cls"), 0);
    aa_archive_authenticator_t a;
    AA_CHECK_EQ(aa_archive_authenticator_create(&a, &ctx), 0);
    AA_CHECK(a.is_python);
    aa_archive_auth_event_t event;
    AA_CHECK_EQ(aa_archive_authenticator_poll(&a, &event, 0), 0);
    answerer_t t = { &a, 0 };
    pthread_t thread;
    AA_CHECK_EQ(pthread_create(&thread, NULL, answerer, &t), 0);
    aa_archive_session_proxy_t p;
    memset(&p, 0, sizeof(p));
    p.id = 7;
    a.on_connect_request(a.state, 7, (const uint8_t *)"alice", 5, 0);
    while (0 == p.decided)
    {
        a.on_connected_session(a.state, &p, 0); /* no decision yet: nothing happens, asked again */
        usleep(1000);
    }
    AA_CHECK_EQ(p.decided, AA_ARCHIVE_AUTH_CHALLENGE);
    AA_CHECK(5 == p.challenge_length && 0 == memcmp(p.challenge, "nonce", 5));
    p.decided = 0;
    a.on_challenge_response(a.state, 7, (const uint8_t *)"answer", 6, 0);
    while (0 == p.decided)
    {
        a.on_challenged_session(a.state, &p, 0);
        usleep(1000);
    }
    AA_CHECK_EQ(p.decided, AA_ARCHIVE_AUTH_ACCEPT);
    AA_CHECK(0 == strcmp(p.principal, "alice") && AA_ARCHIVE_ROLE_READ == p.role);
    pthread_join(thread, NULL);
    /* a closed session's event, and a bad answer refused */
    a.on_session_closed(a.state, 7);
    AA_CHECK_EQ(aa_archive_authenticator_poll(&a, &event, 10), 1);
    AA_CHECK(AA_ARCHIVE_AUTH_EVENT_CLOSED == event.kind && 7 == event.session_id);
    AA_CHECK_EQ(aa_archive_authenticator_answer(&a, 8, AA_ARCHIVE_AUTH_ACCEPT, (const uint8_t *)"x", 1, 9), -1);
    aa_archive_authenticator_close(&a);

    /* not a Python authenticator: poll refuses */
    AA_CHECK_EQ(aa_archive_context_set(&ctx, "AERON_ARCHIVE_AUTHENTICATOR", "allow-all"), 0);
    AA_CHECK_EQ(aa_archive_authenticator_create(&a, &ctx), 0);
    AA_CHECK_EQ(aa_archive_authenticator_poll(&a, &event, 0), -1);
    AA_CHECK_EQ(decide(&a, 1, "", &p), AA_ARCHIVE_AUTH_ACCEPT);
    AA_CHECK_EQ(p.role, AA_ARCHIVE_ROLE_ADMIN);
    aa_archive_authenticator_close(&a);
}

int main(void)
{
    AA_RUN(test_roles);
    AA_RUN(test_constant_time_equality);
    AA_RUN(test_credentials_authenticator);
    AA_RUN(test_python_queue);
    return 0;
}
