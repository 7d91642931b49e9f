/*
 * The driver conductor's duty cycle: client commands in, responses out, the timers, the log-buffer
 * creation every publication and image shares, init and close. The resources live in
 * aa_driver_conductor_{clients,publications,endpoints,images,subscriptions}.c (see
 * aa_driver_conductor_private.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

#define AA_COMMAND_DRAIN_LIMIT 10

void aa_driver_conductor_log_error(aa_driver_conductor_t *conductor, int32_t code, const char *message)
{
    aa_distinct_error_log_record(&conductor->error_log, aa_clock_epoch_time(&conductor->ctx->clock), code, message);
    aa_get_and_add_int64(conductor->system_counters[AA_SYSTEM_COUNTER_ERRORS], 1);
}

/* ---- the media services (aa_media_services.h) ---- */

static void aa_conductor_services_log_error(void *clientd, int32_t code, const char *message)
{
    aa_driver_conductor_log_error(clientd, code, message);
}

static void aa_conductor_services_forget_mapping(void *clientd, const aa_mapped_file_t *mapped)
{
    aa_driver_conductor_t *conductor = clientd;
    aa_prefault_remove(&conductor->prefault, mapped->addr);
}

static void aa_conductor_services_request_image(
    void *clientd, aa_receive_channel_endpoint_t *endpoint, const aa_setup_header_t *setup,
    const struct sockaddr_storage *source, socklen_t source_length)
{
    aa_driver_conductor_proxy_create_publication_image(clientd, endpoint, setup, source, source_length);
}

/* ---- responses ---- */

void aa_conductor_transmit(aa_driver_conductor_t *conductor, int32_t msg_type_id, const void *msg, size_t length)
{
    if (aa_broadcast_transmitter_transmit(&conductor->to_clients, msg_type_id, msg, length) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return;
    }
    aa_doorbell_ring(aa_cnc_clients_doorbell(conductor->cnc)); /* a system call only if a client sleeps on it */
}

static void aa_conductor_transmit_error(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int32_t error_code, const char *message)
{
    size_t message_length = strlen(message);
    size_t max = sizeof(conductor->response) - sizeof(aa_error_response_t);
    message_length = message_length < max ? message_length : max;
    aa_error_response_t *response = (aa_error_response_t *)conductor->response;
    response->offending_command_correlation_id = correlation_id;
    response->error_code = error_code;
    response->error_message_length = (int32_t)message_length;
    memcpy(conductor->response + sizeof(aa_error_response_t), message, message_length);
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_ERROR, conductor->response, sizeof(*response) + message_length);
}

static void aa_conductor_on_error(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int32_t error_code, const char *message)
{
    aa_conductor_transmit_error(conductor, correlation_id, error_code, message);
    aa_driver_conductor_log_error(conductor, error_code, message);
}

void aa_conductor_on_operation_success(aa_driver_conductor_t *conductor, int64_t correlation_id)
{
    aa_operation_succeeded_t response = { .correlation_id = correlation_id };
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_OPERATION_SUCCESS, &response, sizeof(response));
}

void aa_conductor_send_available_image(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int32_t session_id, int32_t stream_id,
    int64_t subscription_registration_id, int32_t position_counter_id, const char *log_path, const char *source_identity)
{
    uint8_t *buf = conductor->response;
    aa_image_buffers_ready_t *response = (aa_image_buffers_ready_t *)buf;
    size_t path_length = strlen(log_path);
    response->correlation_id = correlation_id;
    response->session_id = session_id;
    response->stream_id = stream_id;
    response->subscriber_registration_id = subscription_registration_id;
    response->subscriber_position_id = position_counter_id;
    response->log_file_length = (int32_t)path_length;
    size_t offset = sizeof(*response);
    memcpy(buf + offset, log_path, path_length);
    offset += AA_ALIGN(path_length, sizeof(int32_t));
    int32_t identity_length = (int32_t)strlen(source_identity);
    memcpy(buf + offset, &identity_length, sizeof(identity_length));
    offset += sizeof(identity_length);
    memcpy(buf + offset, source_identity, (size_t)identity_length);
    offset += (size_t)identity_length;
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_AVAILABLE_IMAGE, buf, offset);
}

void aa_conductor_send_unavailable_image(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int64_t subscription_registration_id, int32_t stream_id,
    const char *channel)
{
    aa_image_message_t *response = (aa_image_message_t *)conductor->response;
    size_t channel_length = strlen(channel);
    response->correlation_id = correlation_id;
    response->subscription_registration_id = subscription_registration_id;
    response->stream_id = stream_id;
    response->channel_length = (int32_t)channel_length;
    memcpy(conductor->response + sizeof(*response), channel, channel_length);
    aa_conductor_transmit(
        conductor, AA_RESPONSE_ON_UNAVAILABLE_IMAGE, conductor->response, sizeof(*response) + channel_length);
}

/* ---- log buffers ---- */

/* What a log's error messages call it: "log of publication 5 (session 7, stream 10)". */
static void aa_conductor_log_what(const char *folder, const aa_logbuffer_init_params_t *params, char *out, size_t length)
{
    snprintf(out, length, "log of %s %" PRId64 " (session %" PRId32 ", stream %" PRId32 ")",
        0 == strcmp(folder, "images") ? "image" : "publication", params->correlation_id, params->session_id,
        params->stream_id);
}

#define AA_CONDUCTOR_LOG_FIX "lower term-length"

static int aa_conductor_check_storage(aa_driver_conductor_t *conductor, const char *log_path, size_t log_length,
    const char *what)
{
    if (!conductor->ctx->perform_storage_checks)
    {
        return 0;
    }
    struct statvfs vfs;
    if (0 == statvfs(conductor->ctx->aeron_dir, &vfs) && (uint64_t)vfs.f_bavail * vfs.f_frsize < log_length)
    {
        aa_fs_set_no_space_err(log_path, log_length, what, AA_CONDUCTOR_LOG_FIX);
        return -1;
    }
    return 0;
}

int aa_conductor_create_log(
    aa_driver_conductor_t *conductor, const char *folder, aa_logbuffer_init_params_t *params, char *log_path,
    size_t log_path_length, aa_mapped_file_t *mapped, aa_mapped_log_t *log)
{
    aa_driver_context_t *ctx = conductor->ctx;
    params->page_size = (int32_t)ctx->file_page_size;
    /* a stream's own untethered timeouts (its channel's, aeron-wave3.md 5), else the driver's */
    if (0 == params->untethered_window_limit_timeout_ns)
    {
        params->untethered_window_limit_timeout_ns = ctx->untethered_window_limit_timeout_ns;
    }
    if (0 == params->untethered_resting_timeout_ns)
    {
        params->untethered_resting_timeout_ns = ctx->untethered_resting_timeout_ns;
    }
    if (0 == params->untethered_linger_timeout_ns)
    {
        params->untethered_linger_timeout_ns = aa_driver_context_untethered_linger_timeout_ns(ctx);
    }
    params->rejoin = ctx->rejoin_stream;
    snprintf(log_path, log_path_length, "%s/%s/%" PRId64 ".logbuffer", ctx->aeron_dir, folder, params->correlation_id);
    size_t log_length = aa_logbuffer_compute_log_length(params->term_length, params->page_size);
    /* allocated whole whatever sparse= says (docs/security.md, Disks) */
    char what[128];
    aa_conductor_log_what(folder, params, what, sizeof(what));
    if (aa_conductor_check_storage(conductor, log_path, log_length, what) < 0 ||
        aa_map_new_file(mapped, log_path, log_length, what, AA_CONDUCTOR_LOG_FIX, &ctx->dir_access) < 0)
    {
        return -1;
    }
    aa_mapped_log_init(log, mapped->addr, mapped->length, params->term_length);
    aa_logbuffer_metadata_init(log, params);
    return 0;
}

/* ---- command dispatch ---- */

/* A client command the driver refuses as malformed (docs/security.md, "The CnC file"): counted in
 * "Invalid client commands" and logged (distinct, so a flood of one kind is one entry with a count)
 * with the client it names. */
void aa_driver_conductor_log_invalid_command(
    aa_driver_conductor_t *conductor, int32_t code, int64_t client_id, bool has_client_id, const char *what)
{
    char message[512];
    if (has_client_id)
    {
        snprintf(message, sizeof(message), "invalid client command from client %" PRId64 ": %s", client_id, what);
    }
    else
    {
        snprintf(message, sizeof(message), "invalid client command (client id not readable): %s", what);
    }
    aa_get_and_add_int64(conductor->system_counters[AA_SYSTEM_COUNTER_INVALID_CLIENT_COMMANDS], 1);
    aa_driver_conductor_log_error(conductor, code, message);
}

/* A record of the to-driver buffer that no client of Aeron's protocol writes, skipped by the ring
 * buffer (concurrent/aa_mpsc_rb.h). */
static void aa_conductor_on_invalid_record(const aa_rb_invalid_record_t *record, void *clientd)
{
    char what[400];
    snprintf(what, sizeof(what), "to-driver buffer record of type %d: %s", record->msg_type_id, record->reason);
    aa_driver_conductor_log_invalid_command(
        clientd, AA_ERROR_CODE_MALFORMED_COMMAND, record->client_id, AA_RB_NO_CLIENT_ID != record->client_id, what);
}

typedef struct aa_command_context_stct
{
    aa_driver_conductor_t *conductor;
    int64_t now_ns;
    int64_t now_ms;
}
aa_command_context_t;

/* The command's channel, parsed here once (or the one it carries when run again, parsed when it came):
 * NULL when the command is too short for it. */
static const aa_command_channel_t *aa_conductor_command_channel(
    aa_driver_conductor_t *conductor, const void *buffer, size_t length, size_t header_length, int32_t channel_length,
    const aa_command_channel_t *carried)
{
    if (channel_length < 0 || header_length + (size_t)channel_length > length ||
        (size_t)channel_length >= sizeof(carried->text))
    {
        return NULL;
    }
    if (NULL != carried)
    {
        return carried;
    }
    aa_command_channel_t *channel = &conductor->command_channel;
    memcpy(channel->text, (const uint8_t *)buffer + header_length, (size_t)channel_length);
    channel->text[channel_length] = '\0';
    channel->is_parsed = 0 == aa_uri_parse(channel->text, &channel->uri);
    channel->parse_errcode = channel->is_parsed ? 0 : aa_errcode();
    snprintf(channel->parse_error, sizeof(channel->parse_error), "%s", channel->is_parsed ? "" : aa_errmsg());
    aa_err_clear();
    return channel;
}

const aa_uri_t *aa_conductor_channel_uri(const aa_command_channel_t *channel)
{
    if (!channel->is_parsed)
    {
        AA_SET_ERR(channel->parse_errcode, "%s", channel->parse_error);
        return NULL;
    }
    return &channel->uri;
}

/* A command that carries a channel (a header of header_length bytes, the channel's length at
 * length_offset, the registration it acts on at key_offset): its channel taken (parsed once, or the
 * one it carries), then the command deferred when it waits for names. Returns 0 to run it now
 * (*channel set), 1 when it waits (the client is answered later), -1 with the error set (what: the
 * command, named when it is malformed). */
static int aa_conductor_take_channel_command(
    aa_driver_conductor_t *conductor, int32_t msg_type_id, const void *buffer, size_t length, size_t header_length,
    size_t length_offset, size_t key_offset, const aa_command_channel_t *carried, const char *what,
    const aa_command_channel_t **channel)
{
    int32_t channel_length = -1;
    int64_t registration_key = 0;
    if (length >= header_length)
    {
        memcpy(&channel_length, (const uint8_t *)buffer + length_offset, sizeof(channel_length));
        memcpy(&registration_key, (const uint8_t *)buffer + key_offset, sizeof(registration_key));
    }
    *channel = aa_conductor_command_channel(conductor, buffer, length, header_length, channel_length, carried);
    if (NULL == *channel)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "malformed %s command", what);
        return -1;
    }
    return aa_conductor_resolution_defer(conductor, msg_type_id, buffer, length, *channel, registration_key);
}

/* ADD_PUBLICATION and ADD_SUBSCRIPTION (keyed by their correlation id): as above, and to run now the
 * channel must have parsed (0 with *uri set). */
static int aa_conductor_take_uri_command(
    aa_driver_conductor_t *conductor, int32_t msg_type_id, const void *buffer, size_t length, size_t header_length,
    size_t length_offset, const aa_command_channel_t *carried, const char *what, const aa_uri_t **uri)
{
    const aa_command_channel_t *channel = NULL;
    int rc = aa_conductor_take_channel_command(conductor, msg_type_id, buffer, length, header_length, length_offset,
        offsetof(aa_correlated_command_t, correlation_id), carried, what, &channel);
    if (0 == rc && NULL == (*uri = aa_conductor_channel_uri(channel)))
    {
        return -1;
    }
    return rc;
}

/* A client command, from the to-driver buffer, or run again (carried: its channel, parsed when it came). */
static void aa_conductor_run_command(
    aa_command_context_t *cc, int32_t msg_type_id, const void *buffer, size_t length, const aa_command_channel_t *carried)
{
    aa_driver_conductor_t *conductor = cc->conductor;
    const aa_command_channel_t *channel = NULL;
    const aa_uri_t *uri = NULL;
    int64_t correlation_id = 0;
    int rc = 0;
    aa_err_clear();

    if (length < sizeof(aa_correlated_command_t))
    {
        char what[128];
        snprintf(what, sizeof(what), "command of type 0x%x shorter than its 16-byte header", msg_type_id);
        aa_driver_conductor_log_invalid_command(conductor, AA_ERROR_CODE_MALFORMED_COMMAND, 0, false, what);
        return;
    }
    const aa_correlated_command_t *correlated = buffer;
    correlation_id = correlated->correlation_id;
    if (AA_COMMAND_TERMINATE_DRIVER == msg_type_id)
    {
        /* from a requester that is no client (Aeron's requestDriverTermination): no client entry */
        aa_driver_conductor_on_terminate_driver(conductor, buffer, length);
        return;
    }
    aa_driver_client_t *client = aa_conductor_get_or_add_client(conductor, correlated->client_id, cc->now_ms);
    if (NULL == client)
    {
        aa_conductor_on_error(conductor, correlation_id, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return;
    }
    aa_put_int64_release(client->heartbeat, cc->now_ms > *client->heartbeat ? cc->now_ms : *client->heartbeat);

    switch (msg_type_id)
    {
        case AA_COMMAND_ADD_PUBLICATION:
        case AA_COMMAND_ADD_EXCLUSIVE_PUBLICATION:
            rc = aa_conductor_take_uri_command(conductor, msg_type_id, buffer, length, sizeof(aa_publication_command_t),
                offsetof(aa_publication_command_t, channel_length), carried, "add publication", &uri);
            rc = 0 != rc ? (rc < 0 ? -1 : 0) : aa_conductor_on_add_publication(
                conductor, buffer, uri, AA_COMMAND_ADD_EXCLUSIVE_PUBLICATION == msg_type_id, cc->now_ns, cc->now_ms);
            break;

        case AA_COMMAND_REMOVE_PUBLICATION:
            if (length < sizeof(aa_remove_command_t))
            {
                AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "%s", "malformed remove publication command");
                rc = -1;
                break;
            }
            if (0 != (rc = aa_conductor_resolution_defer(conductor, msg_type_id, buffer, length, NULL, ((const aa_remove_command_t *)buffer)->registration_id)))
            {
                rc = rc < 0 ? -1 : 0;
                break;
            }
            /* flags (REVOKE) only when the command carries them, as Aeron reads them (aeron-wave3.md 4.1) */
            rc = aa_conductor_on_remove_publication(conductor, buffer,
                length >= sizeof(aa_remove_publication_command_t) ?
                    ((const aa_remove_publication_command_t *)buffer)->flags : 0, cc->now_ns);
            break;

        case AA_COMMAND_ADD_SUBSCRIPTION:
            rc = aa_conductor_take_uri_command(conductor, msg_type_id, buffer, length, sizeof(aa_subscription_command_t),
                offsetof(aa_subscription_command_t, channel_length), carried, "add subscription", &uri);
            rc = 0 != rc ? (rc < 0 ? -1 : 0) : aa_conductor_on_add_subscription(conductor, buffer, uri, cc->now_ns, cc->now_ms);
            break;

        case AA_COMMAND_REMOVE_SUBSCRIPTION:
            if (length < sizeof(aa_remove_command_t))
            {
                AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "%s", "malformed remove subscription command");
                rc = -1;
                break;
            }
            if (0 != (rc = aa_conductor_resolution_defer(conductor, msg_type_id, buffer, length, NULL, ((const aa_remove_command_t *)buffer)->registration_id)))
            {
                rc = rc < 0 ? -1 : 0;
                break;
            }
            rc = aa_conductor_on_remove_subscription(conductor, buffer, cc->now_ns, cc->now_ms);
            break;

        case AA_COMMAND_CLIENT_KEEPALIVE:
            break;

        case AA_COMMAND_REJECT_IMAGE:
            rc = aa_conductor_on_reject_image(conductor, buffer, length, cc->now_ns, cc->now_ms);
            break;

        case AA_COMMAND_ADD_DESTINATION:
        case AA_COMMAND_REMOVE_DESTINATION:
        case AA_COMMAND_ADD_RCV_DESTINATION:
        case AA_COMMAND_REMOVE_RCV_DESTINATION:
            rc = aa_conductor_take_channel_command(conductor, msg_type_id, buffer, length,
                sizeof(aa_destination_command_t), offsetof(aa_destination_command_t, channel_length),
                offsetof(aa_destination_command_t, registration_id), carried, "destination", &channel);
            rc = 0 != rc ? (rc < 0 ? -1 : 0) : aa_conductor_on_destination_command(
                conductor, msg_type_id, buffer, channel, cc->now_ms);
            break;

        case AA_COMMAND_ADD_COUNTER:
            rc = aa_conductor_on_add_counter(conductor, buffer, length, cc->now_ms);
            break;

        case AA_COMMAND_ADD_STATIC_COUNTER:
            rc = aa_conductor_on_add_static_counter(conductor, buffer, length, cc->now_ms);
            break;

        case AA_COMMAND_GET_NEXT_AVAILABLE_SESSION_ID:
            rc = aa_conductor_on_next_session_id(conductor, buffer, length);
            break;

        case AA_COMMAND_REMOVE_COUNTER:
            if (length < sizeof(aa_remove_command_t))
            {
                AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "%s", "malformed remove counter command");
                rc = -1;
                break;
            }
            rc = aa_conductor_on_remove_counter(conductor, buffer, cc->now_ms);
            break;

        case AA_COMMAND_CLIENT_CLOSE:
            for (size_t i = 0; i < conductor->clients_count; i++)
            {
                if (conductor->clients[i].client_id == correlated->client_id)
                {
                    aa_conductor_remove_client_at(conductor, i, false, cc->now_ns, cc->now_ms);
                    break;
                }
            }
            break;

        default:
            AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_COMMAND_TYPE_ID, "command type 0x%x is not supported by this driver", msg_type_id);
            rc = -1;
            break;
    }

    if (rc < 0)
    {
        int code = aa_errcode();
        if (AA_ERROR_CODE_MALFORMED_COMMAND == code || AA_ERROR_CODE_UNKNOWN_COMMAND_TYPE_ID == code)
        {
            /* the client hears of it (ON_ERROR); the error log has it once, with the client's id */
            char what[400];
            snprintf(what, sizeof(what), "%s", aa_errmsg());
            aa_conductor_transmit_error(conductor, correlation_id, code, what);
            aa_driver_conductor_log_invalid_command(conductor, code, correlated->client_id, true, what);
            return;
        }
        aa_conductor_on_error(conductor, correlation_id, code > 0 && code <= 14 ? code : AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
    }
}

static void aa_conductor_on_command(int32_t msg_type_id, const void *buffer, size_t length, void *clientd)
{
    aa_conductor_run_command(clientd, msg_type_id, buffer, length, NULL);
}

void aa_conductor_dispatch_command(
    aa_driver_conductor_t *conductor, int32_t msg_type_id, const void *buffer, size_t length,
    const aa_command_channel_t *channel)
{
    aa_command_context_t cc =
    {
        .conductor = conductor,
        .now_ns = aa_clock_nano_time(&conductor->ctx->clock),
        .now_ms = aa_clock_epoch_time(&conductor->ctx->clock)
    };
    aa_conductor_run_command(&cc, msg_type_id, buffer, length, channel);
}

void aa_conductor_send_error(aa_driver_conductor_t *conductor, int64_t correlation_id, int32_t error_code, const char *message)
{
    aa_conductor_on_error(conductor, correlation_id, error_code, message);
}

/* ---- timers ---- */

static void aa_conductor_on_timer(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    aa_conductor_check_clients(conductor, now_ns, now_ms);
    aa_conductor_check_publications(conductor, now_ns, now_ms);
    aa_conductor_check_network_publications(conductor, now_ns, now_ms);
    aa_conductor_check_send_endpoints(conductor, now_ms);
    aa_conductor_check_images(conductor, now_ns, now_ms);
    aa_conductor_check_receive_endpoints(conductor, now_ns, now_ms);

    /* A client that died between claiming and committing a command blocks the ring buffer:
     * after the client liveness timeout without progress, turn its record into padding. */
    int64_t consumer = aa_mpsc_rb_consumer_position(&conductor->to_driver);
    int64_t producer = aa_mpsc_rb_producer_position(&conductor->to_driver);
    if (producer > consumer && consumer == conductor->last_command_consumer_position)
    {
        if (now_ns > conductor->time_of_last_command_progress_ns + conductor->ctx->client_liveness_timeout_ns &&
            aa_mpsc_rb_unblock(&conductor->to_driver))
        {
            aa_get_and_add_int64(conductor->system_counters[AA_SYSTEM_COUNTER_UNBLOCKED_COMMANDS], 1);
            conductor->time_of_last_command_progress_ns = now_ns;
        }
    }
    else
    {
        conductor->last_command_consumer_position = consumer;
        conductor->time_of_last_command_progress_ns = now_ns;
    }
}

int aa_driver_conductor_do_work(void *state)
{
    aa_driver_conductor_t *conductor = state;
    int64_t now_ns = aa_clock_nano_time(&conductor->ctx->clock);
    int64_t now_ms = aa_clock_epoch_time(&conductor->ctx->clock);
    int work_count = 0;

    if (now_ms != conductor->last_heartbeat_ms)
    {
        aa_mpsc_rb_consumer_heartbeat_time(&conductor->to_driver, now_ms);
        conductor->last_heartbeat_ms = now_ms;
    }

    aa_command_context_t cc = { .conductor = conductor, .now_ns = now_ns, .now_ms = now_ms };
    work_count += (int)aa_mpsc_rb_read(&conductor->to_driver, aa_conductor_on_command, &cc, AA_COMMAND_DRAIN_LIMIT);
    work_count += aa_command_queue_drain(&conductor->commands, conductor, AA_COMMAND_DRAIN_LIMIT);

    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        work_count += aa_ipc_publication_update_pub_pos_and_lmt(conductor->ipc_publications[i]);
    }
    for (size_t i = 0; i < conductor->network_publications_count; i++)
    {
        work_count += aa_network_publication_update_pub_pos_and_lmt(conductor->network_publications[i]);
    }
    for (size_t i = 0; i < conductor->images_count; i++)
    {
        work_count += aa_publication_image_update_subscriber_positions(conductor->images[i]);
    }
    work_count += aa_prefault_do_work(&conductor->prefault);
    work_count += aa_conductor_resolution_do_work(conductor, now_ns, now_ms);

    /* Timers are housekeeping, not a sign that more work is coming: they do not count as work, so
     * an idle driver's backoff reaches its longest park instead of restarting every timer interval. */
    if (now_ns >= conductor->next_timer_ns)
    {
        conductor->next_timer_ns = now_ns + conductor->ctx->timer_interval_ns;
        aa_conductor_on_timer(conductor, now_ns, now_ms);
    }

    aa_media_services_record_cycle(
        &conductor->services, aa_clock_nano_time(&conductor->ctx->clock) - now_ns,
        conductor->ctx->conductor_cycle_threshold_ns,
        AA_SYSTEM_COUNTER_CONDUCTOR_MAX_CYCLE_TIME, AA_SYSTEM_COUNTER_CONDUCTOR_CYCLE_TIME_THRESHOLD_EXCEEDED);
    return work_count;
}

/* ---- lifecycle ---- */

/* The loss report file, before clients can see the driver (the CnC version is set last). */
static int aa_driver_conductor_map_loss_report(aa_driver_conductor_t *conductor)
{
    const aa_driver_context_t *ctx = conductor->ctx;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", ctx->aeron_dir, AA_LOSS_REPORT_FILE);
    size_t length = AA_ALIGN((size_t)ctx->loss_report_buffer_length, (size_t)ctx->file_page_size);
    aa_fs_access_t read_access = aa_driver_read_access(ctx);
    if (aa_map_new_file(&conductor->loss_report_file, path, length, "loss report file",
            "lower AERON_LOSS_REPORT_BUFFER_LENGTH", &read_access) < 0 ||
        aa_loss_reporter_init(&conductor->loss_reporter, conductor->loss_report_file.addr, length) < 0)
    {
        AA_APPEND_ERR("%s", "creating the loss report file");
        return -1;
    }
    conductor->services.loss_reporter = &conductor->loss_reporter;
    conductor->services.clock = &conductor->ctx->clock;
    return 0;
}

int aa_driver_conductor_init(
    aa_driver_conductor_t *conductor, aa_driver_context_t *ctx, aa_driver_sender_t *sender, aa_driver_receiver_t *receiver)
{
    memset(conductor, 0, sizeof(*conductor));
    conductor->ctx = ctx;
    conductor->sender = sender;
    conductor->receiver = receiver;
    conductor->services.system_counters = conductor->system_counters;
    conductor->services.clientd = conductor;
    conductor->services.log_error = aa_conductor_services_log_error;
    conductor->services.forget_mapping = aa_conductor_services_forget_mapping;
    conductor->services.request_image = aa_conductor_services_request_image;
    conductor->services.request_re_resolution = aa_conductor_services_request_re_resolution;
    conductor->services.on_publication_error = aa_conductor_services_on_publication_error;
    conductor->services.response_setup = aa_conductor_services_response_setup;
    conductor->services.response_connected = aa_conductor_services_response_connected;
    if (aa_flow_control_proxy_host_init(&conductor->flow_control_proxy_host, aa_conductor_services_log_error, conductor) < 0)
    {
        return -1;
    }
    conductor->services.flow_control_proxy_host = &conductor->flow_control_proxy_host;
    if (aa_command_queue_init(&conductor->commands, AA_COMMAND_QUEUE_CAPACITY_DEFAULT) < 0)
    {
        AA_APPEND_ERR("%s", "creating the conductor's command queue");
        return -1;
    }

    size_t counters_metadata_length = (size_t)ctx->counters_values_buffer_length * 4;
    size_t total = (size_t)ctx->to_driver_buffer_length + (size_t)ctx->to_clients_buffer_length +
        counters_metadata_length + (size_t)ctx->counters_values_buffer_length + (size_t)ctx->error_buffer_length;
    size_t cnc_length = aa_cnc_computed_length(total, (size_t)ctx->file_page_size);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", ctx->aeron_dir, AA_CNC_FILE);
    if (aa_map_new_file(&conductor->cnc_file, path, cnc_length, "CnC file",
            "lower the CnC's buffer lengths (AERON_COUNTERS_BUFFER_LENGTH, AERON_ERROR_BUFFER_LENGTH...)",
            &ctx->dir_access) < 0)
    {
        AA_APPEND_ERR("%s", "creating the CnC file");
        aa_command_queue_close(&conductor->commands);
        return -1;
    }
    aa_cnc_metadata_t *cnc = (aa_cnc_metadata_t *)conductor->cnc_file.addr;
    conductor->cnc = cnc;
    cnc->to_driver_buffer_length = (int32_t)ctx->to_driver_buffer_length;
    cnc->to_clients_buffer_length = (int32_t)ctx->to_clients_buffer_length;
    cnc->counters_metadata_buffer_length = (int32_t)counters_metadata_length;
    cnc->counters_values_buffer_length = (int32_t)ctx->counters_values_buffer_length;
    cnc->error_log_buffer_length = (int32_t)ctx->error_buffer_length;
    cnc->client_liveness_timeout = ctx->client_liveness_timeout_ns;
    cnc->start_timestamp = aa_clock_epoch_time(&conductor->ctx->clock);
    cnc->pid = getpid();

    if (aa_mpsc_rb_init(&conductor->to_driver, aa_cnc_to_driver_buffer(cnc), (size_t)cnc->to_driver_buffer_length) < 0 ||
        aa_broadcast_transmitter_init(&conductor->to_clients, aa_cnc_to_clients_buffer(cnc), (size_t)cnc->to_clients_buffer_length) < 0 ||
        aa_counters_manager_init(
            &conductor->counters, aa_cnc_counters_metadata_buffer(cnc), counters_metadata_length,
            aa_cnc_counters_values_buffer(cnc), (size_t)cnc->counters_values_buffer_length,
            ctx->counters_free_to_reuse_timeout_ns / 1000000) < 0)
    {
        aa_unmap(&conductor->cnc_file);
        aa_command_queue_close(&conductor->commands);
        return -1;
    }
    if (aa_distinct_error_log_init(&conductor->error_log, aa_cnc_error_log_buffer(cnc), (size_t)cnc->error_log_buffer_length) < 0)
    {
        aa_counters_manager_close(&conductor->counters);
        aa_unmap(&conductor->cnc_file);
        aa_command_queue_close(&conductor->commands);
        return -1;
    }

    aa_mpsc_rb_on_invalid(&conductor->to_driver, aa_conductor_on_invalid_record, conductor);

    int64_t now_ms = aa_clock_epoch_time(&conductor->ctx->clock);
    for (int i = 0; i < AA_SYSTEM_COUNTER_COUNT; i++)
    {
        int32_t key = i;
        const char *label = aa_system_counter_labels[i];
        int32_t id = aa_counters_manager_allocate(
            &conductor->counters, now_ms, AA_COUNTER_TYPE_SYSTEM, (const uint8_t *)&key, sizeof(key), label, strlen(label));
        if (id < 0)
        {
            aa_driver_conductor_on_close(conductor);
            return -1;
        }
        conductor->system_counters[i] = aa_counters_manager_addr(&conductor->counters, id);
    }
    if (aa_conductor_resolution_init(conductor, now_ms) < 0)
    {
        aa_driver_conductor_on_close(conductor);
        return -1;
    }

    if (aa_driver_conductor_map_loss_report(conductor) < 0)
    {
        aa_driver_conductor_on_close(conductor);
        return -1;
    }

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    srand((unsigned)(ts.tv_nsec ^ getpid()));
    conductor->next_session_id = (int32_t)rand();
    conductor->next_timer_ns = aa_clock_nano_time(&conductor->ctx->clock);
    aa_mpsc_rb_consumer_heartbeat_time(&conductor->to_driver, now_ms);
    conductor->last_heartbeat_ms = now_ms;
    aa_put_int32_release(&cnc->cnc_version, AA_CNC_VERSION);
    return 0;
}

/* A log at driver close: its end of stream where it stands, its readers woken (a publication's
 * log also marked not connected) and its file removed, as Aeron frees a log on close: nothing is
 * left in the directory. */
static void aa_conductor_end_log(
    aa_logbuffer_metadata_t *metadata, int64_t end_position, bool disconnect, const char *log_path)
{
    aa_put_int64_release(&metadata->end_of_stream_position, end_position);
    aa_doorbell_ring(aa_logbuffer_doorbell(metadata));
    if (disconnect)
    {
        aa_logbuffer_set_connected(metadata, false);
    }
    unlink(log_path);
}

void aa_driver_conductor_on_close(void *state)
{
    aa_driver_conductor_t *conductor = state;
    /* first: the executor's threads ring the CnC doorbell, and the resolver may free counters */
    aa_conductor_resolution_close(conductor);
    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        aa_ipc_publication_t *pub = conductor->ipc_publications[i];
        aa_conductor_end_log(pub->log.metadata, aa_ipc_publication_producer_position(pub), true, pub->log_path);
        aa_ipc_publication_free(pub);
    }
    AA_ARRAY_FREE(conductor->ipc_publications);
    for (size_t i = 0; i < conductor->network_publications_count; i++)
    {
        aa_network_publication_t *pub = conductor->network_publications[i];
        aa_conductor_end_log(pub->log.metadata, aa_network_publication_producer_position(pub), true, pub->log_path);
        aa_network_publication_free(pub);
    }
    AA_ARRAY_FREE(conductor->network_publications);
    for (size_t i = 0; i < conductor->send_endpoints_count; i++)
    {
        aa_send_channel_endpoint_delete(conductor->send_endpoints[i]);
    }
    AA_ARRAY_FREE(conductor->send_endpoints);
    for (size_t i = 0; i < conductor->images_count; i++)
    {
        aa_publication_image_t *image = conductor->images[i];
        aa_conductor_end_log(image->log.metadata, aa_get_int64_acquire(image->rcv_pos), false, image->log_path);
        aa_publication_image_free(image);
    }
    AA_ARRAY_FREE(conductor->images);
    for (size_t i = 0; i < conductor->receive_endpoints_count; i++)
    {
        aa_receive_channel_endpoint_delete(conductor->receive_endpoints[i]);
    }
    AA_ARRAY_FREE(conductor->receive_endpoints);
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        free(conductor->subscription_links[i].channel);
        aa_udp_channel_delete(conductor->subscription_links[i].spy_channel);
    }
    AA_ARRAY_FREE(conductor->subscription_links);
    AA_ARRAY_FREE(conductor->publication_links);
    AA_ARRAY_FREE(conductor->counter_links);
    AA_ARRAY_FREE(conductor->clients);
    aa_prefault_close(&conductor->prefault);
    aa_flow_control_proxy_host_close(&conductor->flow_control_proxy_host);
    aa_distinct_error_log_close(&conductor->error_log);
    aa_counters_manager_close(&conductor->counters);
    if (NULL != conductor->to_driver.consumer_heartbeat)
    {
        aa_cnc_mark_closed(&conductor->to_driver); /* last, as Aeron's conductor does */
    }
    aa_unmap(&conductor->cnc_file);
    conductor->services.loss_reporter = NULL;
    aa_unmap(&conductor->loss_report_file);
    aa_command_queue_close(&conductor->commands);
}
