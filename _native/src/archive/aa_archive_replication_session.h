/*
 * A replication's state (Aeron's ReplicationSession, reference aeron-wave3.md 7.2), shared by its two
 * halves: the state machine (aa_archive_replication.c) and the client of the source archive with the
 * requests that start and stop replications (aa_archive_replication_source.c). Private to them.
 */
#ifndef AA_ARCHIVE_REPLICATION_SESSION_H
#define AA_ARCHIVE_REPLICATION_SESSION_H

#include "archive/aa_archive_replication.h"

#define AA_REPL_RESPONSE_STREAM_ID 20            /* Aeron's archive client response stream */
#define AA_REPL_KEEP_ALIVE_NS (1000LL * 1000 * 1000)
#define AA_REPL_MAX_MERGE_WINDOW (32 << 20)      /* min(term length / 4, 32 MiB): Aeron's ReplayMerge window */
#define AA_REPL_CLOSE_WAIT_NS (5LL * 1000 * 1000 * 1000)
#define AA_REPL_CHANNEL_STATUS_ACTIVE 1

enum
{
    AA_REPL_CONNECT,
    AA_REPL_AWAIT_CONNECT,
    AA_REPL_REPLICATE_DESCRIPTOR,
    AA_REPL_SRC_RECORDING_POSITION,
    AA_REPL_EXTEND,
    AA_REPL_REPLAY,
    AA_REPL_AWAIT_IMAGE,
    AA_REPL_REPLICATE,
    AA_REPL_CATCHUP,
    AA_REPL_ATTEMPT_LIVE_JOIN,
    AA_REPL_VERIFY_SOURCE,
    AA_REPL_DONE,
    AA_REPL_CLOSING
};

typedef struct aa_archive_replication_stct
{
    int64_t replication_id;
    int64_t control_session_id; /* the requester: it gets the signals and errors */
    int32_t state;
    /* the request */
    int64_t src_recording_id;
    int64_t dst_recording_id;
    int64_t stop_position;
    int64_t channel_tag_id;
    int64_t subscription_tag_id;
    int32_t src_control_stream_id;
    int32_t file_io_max_length;
    int32_t replication_session_id;
    char src_control_channel[AA_ARCHIVE_CHANNEL_MAX];
    char live_destination[AA_ARCHIVE_CHANNEL_MAX];
    char replication_channel[AA_ARCHIVE_CHANNEL_MAX];
    char response_channel[AA_ARCHIVE_CHANNEL_MAX];
    uint8_t credentials[1024];
    uint32_t credentials_length;
    bool tagged;
    bool live_merge;
    /* the client of the source */
    int64_t response_async;
    aa_subscription_t *response;
    int64_t request_async;
    aa_publication_t *request;
    struct aa_cnc_reader_stct *cnc; /* the driver's counters, to read bound ports */
    int64_t src_session_id;
    int64_t next_correlation_id;
    int64_t awaiting;       /* the correlation id of the request whose answer is awaited, -1: none */
    bool sent;
    bool answered;
    bool challenged;
    int32_t code;
    int64_t relevant_id;
    char answer_error[AA_ARCHIVE_ERROR_TEXT_MAX];
    bool has_descriptor;
    aa_archive_recording_descriptor_t src; /* var fields point into the buffers below */
    char src_stripped[AA_ARCHIVE_CHANNEL_MAX];
    char src_original[AA_ARCHIVE_CHANNEL_MAX];
    char src_identity[256];
    int64_t deadline_ns;
    int64_t keep_alive_ns;
    /* the recording of the replay */
    int64_t recording_subscription_id; /* the registration id of its subscription, -1 before EXTEND */
    int64_t replay_position;
    int64_t replay_session_id;          /* on the source, -1 while no replay runs */
    int32_t replay_stream_id;
    char replay_endpoint[AA_ARCHIVE_CHANNEL_MAX]; /* host:port the replay is sent to */
    char replay_destination[AA_ARCHIVE_CHANNEL_MAX + 32]; /* an MDS's replay destination, as added */
    int64_t destination_async;          /* an MDS destination being added or removed */
    bool replay_destination_added;
    bool live_added;
    bool replay_removed;
    bool merged;
    bool recording_seen;
    int64_t src_recording_position;
    int64_t target_position;  /* ATTEMPT_LIVE_JOIN: the source position read after the live destination */
    int64_t position;         /* the destination's recorded position */
    int64_t close_deadline_ns;
    bool stop_requested;
}
aa_archive_replication_t;

struct aa_archive_replications_stct
{
    aa_archive_replication_t **items;
    size_t count;
    size_t capacity;
    int64_t next_id;
};

/* ---- aa_archive_replication_source.c: channels, the source archive's client ---- */
void aa_repl_channel(char *out, size_t capacity, const char *channel, const char *drop, const char *extra);
/* Ends the replication with an ERROR (correlation id = replication id) to the requester and in the log. */
void aa_repl_fail(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool aa_repl_resolve_endpoint(aa_archive_conductor_t *c, aa_archive_replication_t *r, const char *endpoint,
    int32_t status_id, char *out, size_t capacity);
bool aa_repl_offer(aa_archive_conductor_t *c, aa_archive_replication_t *r, aa_archive_message_t *msg,
    int64_t correlation_id);
bool aa_repl_send_id_request(aa_archive_conductor_t *c, aa_archive_replication_t *r, int32_t template_id,
    int64_t value);
int aa_repl_await(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t now_ns, const char *what);
bool aa_repl_source_gone(aa_archive_replication_t *r);
void aa_repl_release_source(aa_archive_replication_t *r);
int aa_repl_connect(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t now_ns);
/* Reads the source archive's responses: the answer awaited (ControlResponse, Challenge, descriptor). */
int aa_repl_poll_responses(aa_archive_replication_t *r);

#endif
