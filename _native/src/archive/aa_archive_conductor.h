/* The archive conductor's state: control sessions, recording subscriptions, recordings, replays. */
#ifndef AA_ARCHIVE_CONDUCTOR_H
#define AA_ARCHIVE_CONDUCTOR_H

#include "archive/aa_archive_sessions.h"
#include "archive/aa_archive_auth.h"
#include "archive/aa_archive_catalog.h"
#include "protocols/aa_archive_codecs.h"

/* A control session's states (reference aeron-wave3.md 6.2): CONNECTING (its response publication),
 * CONNECTED (the authenticator asked every 200 ms), CHALLENGED (a Challenge sent, the answer awaited),
 * AUTHENTICATED (OK sent until the first request), REJECTED (the error sent every 200 ms until the
 * deadline), ACTIVE, DONE; REFUSED: a cap refused it, the error goes out once its responses connect. */
#define AA_CONTROL_SESSION_CONNECTING 0
#define AA_CONTROL_SESSION_ACTIVE 1
#define AA_CONTROL_SESSION_DONE 2
#define AA_CONTROL_SESSION_CONNECTED 3
#define AA_CONTROL_SESSION_CHALLENGED 4
#define AA_CONTROL_SESSION_AUTHENTICATED 5
#define AA_CONTROL_SESSION_REJECTED 6
#define AA_CONTROL_SESSION_REFUSED 7

typedef struct aa_archive_control_session_stct
{
    int64_t id;
    int32_t state;
    aa_image_t *image;          /* the request image that opened it: requests from others are dropped */
    int64_t publication_async;  /* the response publication, while it is being added */
    aa_publication_t *publication;
    int64_t connect_correlation_id;
    int32_t client_version;
    int64_t deadline_ns;
    int64_t next_ping_ns;
    uint8_t *queue;             /* responses the publication refused: [int32 length][message] ... */
    size_t queue_length;
    size_t queue_capacity;
    int64_t queue_since_ns;
    char *response_channel;
    int32_t response_stream_id;
    int64_t correlation_id;     /* the connect's, then the last ChallengeResponse's: answers to authentication */
    int64_t resend_ns;          /* the next 200 ms step of CONNECTED, AUTHENTICATED and REJECTED */
    int32_t role;               /* AA_ARCHIVE_ROLE_*: what its principal may ask for */
    char principal[AA_ARCHIVE_AUTH_PRINCIPAL_MAX];
    char *refusal;              /* REFUSED: the error it is answered with */
}
aa_archive_control_session_t;

typedef struct aa_archive_replay_tokens_stct aa_archive_replay_tokens_t;

/* A subscription the archive records from (start recording / extend). */
typedef struct aa_archive_recording_subscription_stct
{
    int64_t async_id;
    int64_t subscription_id;   /* its registration id: the relevant id of StartRecording's OK */
    aa_subscription_t *subscription;
    char *original_channel;
    char *stripped_channel;
    char *subscribe_channel;   /* what the archive subscribed with (aeron-spy: for LOCAL UDP) */
    int32_t stream_id;
    bool auto_stop;
    bool stop_requested;
    int64_t extend_recording_id; /* -1: a new recording per image */
    int64_t control_session_id;
    int64_t correlation_id;
    int32_t recording_count;
    /* the OK of a stop request, sent once its recordings have stopped and the catalog holds their stop
     * positions (README.md, "Recording and replay": a list_recording right after shows them); -1: none */
    int64_t stop_reply_session_id;
    int64_t stop_reply_correlation_id;
    int64_t stop_reply_relevant_id;
}
aa_archive_recording_subscription_t;

struct aa_archive_conductor_stct
{
    aa_archive_t *archive;
    aa_client_t *client;
    aa_archive_catalog_t *catalog;
    int64_t local_control_async;
    aa_subscription_t *local_control;
    int64_t udp_control_async;
    aa_subscription_t *udp_control;
    aa_archive_control_session_t **sessions;
    size_t session_count;
    size_t session_capacity;
    int64_t next_session_id;
    aa_archive_recording_subscription_t **subscriptions;
    size_t subscription_count;
    size_t subscription_capacity;
    aa_archive_recording_t **recordings;
    size_t recording_count;
    size_t recording_capacity;
    aa_archive_replay_t **replays;
    size_t replay_count;
    size_t replay_capacity;
    int64_t replay_counter;
    uint8_t *scratch;
    size_t scratch_capacity;
    aa_image_t *request_image; /* the image of the request being handled */
    aa_archive_authenticator_t authenticator;
    struct aa_archive_replications_stct *replications; /* aa_archive_replication.c */
    struct aa_archive_segments_stct *segments; /* segment deletes and retention (aa_archive_segments_mgmt.h) */
    aa_archive_replay_tokens_t *replay_tokens; /* aa_archive_replay_tokens.h */
};

/* aa_archive_conductor.c: the value of a channel's parameter (false when it has none) */
bool aa_archive_channel_param(const char *channel, const char *key, char *value, size_t length);

/* aa_archive_conductor.c: responses (queued when the response publication refuses them) */
void aa_archive_session_send(aa_archive_conductor_t *c, aa_archive_control_session_t *s, const aa_archive_message_t *msg);
void aa_archive_session_send_bytes(aa_archive_conductor_t *c, aa_archive_control_session_t *s, const uint8_t *msg,
    size_t length);
void aa_archive_send_response(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t relevant_id, int32_t code, const char *error);
void aa_archive_send_ok(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id, int64_t relevant_id);
void aa_archive_send_error(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t error_code, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
aa_archive_control_session_t *aa_archive_find_session(aa_archive_conductor_t *c, int64_t id);
void aa_archive_send_signal(aa_archive_conductor_t *c, int64_t control_session_id, int64_t correlation_id,
    int64_t recording_id, int64_t subscription_id, int64_t position, int32_t signal);
int64_t aa_archive_now_ns(aa_archive_conductor_t *c);
int64_t aa_archive_now_ms(aa_archive_conductor_t *c);
/* A request's string field as a C string (malloc; NULL when out of memory). */
char *aa_archive_var_strdup(const aa_archive_var_t *var);

/* aa_archive_requests.c: one handler per request (the session is ACTIVE and the request came on its image) */
void aa_archive_on_request(aa_archive_conductor_t *c, aa_archive_control_session_t *s, const aa_archive_message_t *msg);
/* shared by aa_archive_requests.c and aa_archive_lifecycles.c */
aa_archive_recording_t *aa_archive_find_active_recording(aa_archive_conductor_t *c, int64_t recording_id);
bool aa_archive_find_descriptor(aa_archive_conductor_t *c, int64_t recording_id, aa_archive_recording_descriptor_t *d);
int64_t aa_archive_next_recording_id(aa_archive_conductor_t *c);
int64_t aa_archive_recorded_position(aa_archive_conductor_t *c, const aa_archive_recording_descriptor_t *d);
/* aa_archive_lifecycles.c: an image appeared on a recording subscription */
void aa_archive_on_recording_image(aa_archive_conductor_t *c, aa_archive_recording_subscription_t *rs, aa_image_t *image);
/* the conductor's duty cycle over recordings, subscriptions and replays */
int aa_archive_conductor_check_recordings(aa_archive_conductor_t *c);
int aa_archive_conductor_check_replays(aa_archive_conductor_t *c);
int aa_archive_recover(aa_archive_conductor_t *c);
void aa_archive_conductor_close_all(aa_archive_conductor_t *c);

#endif
