/*
 * Rejecting images (aeron-wave3.md 4.2): the REJECT_IMAGE command, and ON_PUBLICATION_ERROR, which
 * tells a publication's clients that a receiver sent an ERR frame (network publications, from the
 * sender) or that its IPC image was rejected.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_error.h"

void aa_conductor_send_publication_error(
    aa_driver_conductor_t *conductor, const aa_publication_error_t *error, const uint8_t *text)
{
    size_t text_length = error->error_message_length > 0 ? (size_t)error->error_message_length : 0;
    text_length = text_length < AA_REJECT_IMAGE_REASON_MAX_LENGTH ? text_length : AA_REJECT_IMAGE_REASON_MAX_LENGTH;
    uint8_t *buf = conductor->response;
    aa_publication_error_t *response = (aa_publication_error_t *)buf;
    *response = *error;
    response->error_message_length = (int32_t)text_length;
    memcpy(buf + sizeof(*response), text, text_length);
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_PUBLICATION_ERROR, buf, sizeof(*response) + text_length);
}

/* The queued ERR of a sender: the message is on the heap (its text does not fit a queue slot). */
typedef struct aa_publication_error_args_stct
{
    aa_publication_error_t *message;
}
aa_publication_error_args_t;

static void aa_conductor_on_queued_publication_error(void *agent, const void *args)
{
    aa_publication_error_t *message = ((const aa_publication_error_args_t *)args)->message;
    aa_conductor_send_publication_error(agent, message, (const uint8_t *)(message + 1));
    free(message);
}

void aa_conductor_services_on_publication_error(void *clientd, const aa_publication_error_t *error, const uint8_t *text)
{
    aa_driver_conductor_t *conductor = clientd;
    size_t text_length = error->error_message_length > 0 ? (size_t)error->error_message_length : 0;
    text_length = text_length < AA_REJECT_IMAGE_REASON_MAX_LENGTH ? text_length : AA_REJECT_IMAGE_REASON_MAX_LENGTH;
    aa_publication_error_args_t args = { .message = malloc(sizeof(aa_publication_error_t) + text_length) };
    if (NULL == args.message)
    {
        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_CONDUCTOR_PROXY_FAILS, 1);
        return;
    }
    *args.message = *error;
    args.message->error_message_length = (int32_t)text_length;
    memcpy(args.message + 1, text, text_length);
    /* from the sender: its own queue to the conductor (each queue has one producer) */
    if (!aa_command_queue_offer(
        &conductor->sender_commands, aa_conductor_on_queued_publication_error, &args, sizeof(args)))
    {
        free(args.message);
        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_CONDUCTOR_PROXY_FAILS, 1);
        return;
    }
    aa_doorbell_ring(aa_cnc_doorbell(conductor->cnc)); /* the conductor may be sleeping deeply */
}

int aa_conductor_on_reject_image(
    aa_driver_conductor_t *conductor, const uint8_t *buffer, size_t length, int64_t now_ns, int64_t now_ms)
{
    aa_reject_image_command_t command;
    if (length < sizeof(command))
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "%s", "malformed reject image command");
        return -1;
    }
    memcpy(&command, buffer, sizeof(command));
    if (command.reason_length < 0 || (size_t)command.reason_length > length - sizeof(command))
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND,
            "malformed reject image command: reason_length=%" PRId32 " beyond the command's %zu bytes",
            command.reason_length, length);
        return -1;
    }
    if (command.reason_length > AA_REJECT_IMAGE_REASON_MAX_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "Invalidation reason_text must be 1023 bytes or less");
        return -1;
    }
    const char *reason = (const char *)buffer + sizeof(command);
    size_t reason_length = (size_t)command.reason_length;
    aa_publication_image_t *image = NULL;
    aa_ipc_publication_t *pub = NULL;
    for (size_t i = 0; NULL == image && i < conductor->images_count; i++)
    {
        image = conductor->images[i]->correlation_id == command.image_correlation_id ? conductor->images[i] : NULL;
    }
    for (size_t i = 0; NULL == image && NULL == pub && i < conductor->ipc_publications_count; i++)
    {
        aa_ipc_publication_t *candidate = conductor->ipc_publications[i];
        pub = candidate->registration_id == command.image_correlation_id &&
            AA_IPC_PUBLICATION_STATE_ACTIVE == candidate->state ? candidate : NULL;
    }
    if (NULL == image && NULL == pub)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "Unable to resolve image for correlationId=%" PRId64,
            command.image_correlation_id);
        return -1;
    }
    /* counted before the publisher can hear of it */
    aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_IMAGES_REJECTED, 1);
    if (NULL != image)
    {
        aa_publication_image_reject(image, reason, reason_length);
    }
    else
    {
        aa_conductor_ipc_publication_reject(conductor, pub, reason, reason_length, now_ns, now_ms);
    }
    aa_conductor_on_operation_success(conductor, command.correlated.correlation_id);
    return 0;
}
