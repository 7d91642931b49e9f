/*
 * Replay tokens (reference aeron-wave3.md 6.4, 1.5; docs/architecture.md, "Replays over response
 * channels"): ReplayToken (105) returns a random token bound to the control session and a
 * recording, valid for the connect timeout. A Replay or BoundedReplay carrying it may then arrive
 * on a new request image (the client's publication with response-correlation-id=<its replay
 * subscription>): the archive accepts it for that session without the image check and without
 * asking the authoriser (as Aeron), and publishes the replay with response-correlation-id=<that
 * image's correlation id>, so the driver routes it to the client's response subscription.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "archive/aa_archive_replay_tokens.h"
#include "aeron_async.h"
#include "util/aa_array.h"
#include "util/aa_error.h"

typedef struct aa_archive_replay_token_stct
{
    int64_t token;
    int64_t control_session_id;
    int64_t recording_id;
    int64_t expiry_ns;
}
aa_archive_replay_token_t;

struct aa_archive_replay_tokens_stct
{
    aa_archive_replay_token_t *tokens;
    size_t count;
    size_t capacity;
};

static void aa_tokens_expire(aa_archive_replay_tokens_t *t, int64_t now_ns)
{
    for (size_t i = 0; i < t->count;)
    {
        if (t->tokens[i].expiry_ns <= now_ns)
        {
            t->tokens[i] = t->tokens[--t->count];
            continue;
        }
        i++;
    }
}

void aa_archive_on_replay_token_request(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    int64_t correlation_id, int64_t recording_id)
{
    int64_t now_ns = aa_archive_now_ns(c);
    if (NULL == c->replay_tokens)
    {
        c->replay_tokens = calloc(1, sizeof(*c->replay_tokens));
    }
    aa_archive_replay_tokens_t *t = c->replay_tokens;
    uint64_t random_bits = 0;
    if (NULL == t ||
        aa_array_ensure_capacity((void **)&t->tokens, &t->capacity, t->count, sizeof(*t->tokens)) < 0 ||
        (ssize_t)sizeof(random_bits) != getrandom(&random_bits, sizeof(random_bits), 0))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s",
            "could not make a replay token (out of memory or no randomness)");
        return;
    }
    aa_tokens_expire(t, now_ns);
    aa_archive_replay_token_t *token = &t->tokens[t->count++];
    token->token = (int64_t)(random_bits >> 1) | 1; /* positive: never the null values -1 and INT64_MIN */
    token->control_session_id = s->id;
    token->recording_id = recording_id;
    token->expiry_ns = now_ns + c->archive->ctx.connect_timeout_ns;
    aa_archive_send_ok(c, s, correlation_id, token->token);
}

bool aa_archive_replay_by_token(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    const aa_archive_message_t *msg)
{
    int64_t token, recording_id, correlation_id;
    if (AA_ARCHIVE_TEMPLATE_REPLAY_REQUEST == msg->template_id)
    {
        token = msg->replay_request.replay_token;
        recording_id = msg->replay_request.recording_id;
        correlation_id = msg->replay_request.correlation_id;
    }
    else if (AA_ARCHIVE_TEMPLATE_BOUNDED_REPLAY_REQUEST == msg->template_id)
    {
        token = msg->bounded_replay_request.replay_token;
        recording_id = msg->bounded_replay_request.recording_id;
        correlation_id = msg->bounded_replay_request.correlation_id;
    }
    else
    {
        return false;
    }
    if (token <= 0)
    {
        return false; /* no token: a request from an image that is not the session's is dropped */
    }
    aa_archive_replay_tokens_t *t = c->replay_tokens;
    if (NULL != t)
    {
        aa_tokens_expire(t, aa_archive_now_ns(c));
        for (size_t i = 0; i < t->count; i++)
        {
            if (t->tokens[i].token == token && t->tokens[i].control_session_id == s->id &&
                t->tokens[i].recording_id == recording_id)
            {
                t->tokens[i] = t->tokens[--t->count]; /* used once */
                aa_archive_on_request(c, s, msg);
                return true;
            }
        }
    }
    aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
        "Unknown session or token timeout for replayToken=%" PRId64, token);
    return true;
}

void aa_archive_replay_tokens_close(aa_archive_conductor_t *c)
{
    if (NULL != c->replay_tokens)
    {
        free(c->replay_tokens->tokens);
        free(c->replay_tokens);
        c->replay_tokens = NULL;
    }
}
