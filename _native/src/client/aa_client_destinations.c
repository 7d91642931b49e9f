/*
 * Destinations (reference 7.3, 9.3): ADD_DESTINATION / REMOVE_DESTINATION for a manual
 * multi-destination-cast publication, ADD_RCV_DESTINATION / REMOVE_RCV_DESTINATION for a
 * subscription. Each is a registration the driver answers with ON_OPERATION_SUCCESS or ON_ERROR,
 * polled with aa_client_async_destination_poll. The command names the publication by the driver's
 * registration id of it (Aeron's originalRegistrationId) and the subscription by its own.
 * REJECT_IMAGE (aeron-wave3.md 4.2) is answered the same way and polled alike.
 */
#include <string.h>

#include "client/aa_client.h"
#include "aeron_async.h"
#include "protocols/aa_control_protocol.h"
#include "uri/aa_uri.h"
#include "util/aa_error.h"

static int64_t aa_client_async_destination(
    aa_client_t *client, int32_t command_type, int64_t registration_id, const char *destination)
{
    if (NULL == destination)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s", "a destination is a channel, aeron:udp?endpoint=host:port");
        return -1;
    }
    size_t channel_length = strlen(destination);
    if (channel_length > AA_URI_MAX_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "destination of %zu characters: at most %d (aeron:udp?endpoint=host:port)",
            channel_length, AA_URI_MAX_LENGTH);
        return -1;
    }
    uint8_t buffer[sizeof(aa_destination_command_t) + AA_URI_MAX_LENGTH];
    int64_t correlation_id = aa_client_registration_begin(client);
    if (correlation_id < 0)
    {
        return -1;
    }
    aa_destination_command_t *command = (aa_destination_command_t *)buffer;
    command->registration_id = registration_id;
    command->channel_length = (int32_t)channel_length;
    memcpy(buffer + sizeof(*command), destination, channel_length);
    return aa_client_registration_send(
        client, correlation_id, command_type, buffer, sizeof(*command) + channel_length, 0, NULL);
}

static int aa_client_check_open(volatile int32_t *is_closed, const char *what)
{
    if (aa_get_int32_acquire(is_closed))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "the %s is closed", what);
        return -1;
    }
    return 0;
}

static int64_t aa_publication_destination(aa_publication_t *pub, int32_t command_type, const char *destination)
{
    return aa_client_check_open(&pub->is_closed, "publication") < 0 ? -1 : aa_client_async_destination(
        pub->client, command_type, pub->original_registration_id, destination);
}

static int64_t aa_subscription_destination(aa_subscription_t *sub, int32_t command_type, const char *destination)
{
    return aa_client_check_open(&sub->is_closed, "subscription") < 0 ? -1 : aa_client_async_destination(
        sub->client, command_type, sub->registration_id, destination);
}

int64_t aa_publication_async_add_destination(aa_publication_t *pub, const char *destination)
{
    return aa_publication_destination(pub, AA_COMMAND_ADD_DESTINATION, destination);
}

int64_t aa_publication_async_remove_destination(aa_publication_t *pub, const char *destination)
{
    return aa_publication_destination(pub, AA_COMMAND_REMOVE_DESTINATION, destination);
}

int64_t aa_subscription_async_add_destination(aa_subscription_t *sub, const char *destination)
{
    return aa_subscription_destination(sub, AA_COMMAND_ADD_RCV_DESTINATION, destination);
}

int64_t aa_subscription_async_remove_destination(aa_subscription_t *sub, const char *destination)
{
    return aa_subscription_destination(sub, AA_COMMAND_REMOVE_RCV_DESTINATION, destination);
}

int aa_client_async_destination_poll(aa_client_t *client, int64_t correlation_id)
{
    void *unused = NULL;
    return aa_client_async_poll(client, correlation_id, &unused);
}

int64_t aa_image_async_reject(aa_image_t *image, const char *reason)
{
    aa_subscription_t *sub = image->subscription;
    if (aa_client_check_open(&sub->is_closed, "subscription") < 0)
    {
        return -1;
    }
    if (NULL != sub->channel && 0 == strncmp(sub->channel, "aeron-spy:", strlen("aeron-spy:")))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s", "spies can not reject images");
        return -1;
    }
    size_t reason_length = NULL == reason ? 0 : strlen(reason);
    if (reason_length > AA_REJECT_IMAGE_REASON_MAX_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s", "Invalidation reason_text must be 1023 bytes or less");
        return -1;
    }
    uint8_t buffer[sizeof(aa_reject_image_command_t) + AA_REJECT_IMAGE_REASON_MAX_LENGTH];
    int64_t correlation_id = aa_client_registration_begin(sub->client);
    if (correlation_id < 0)
    {
        return -1;
    }
    aa_reject_image_command_t *command = (aa_reject_image_command_t *)buffer;
    command->image_correlation_id = image->correlation_id;
    command->position = aa_image_position(image);
    command->reason_length = (int32_t)reason_length;
    memcpy(buffer + sizeof(*command), reason, reason_length);
    return aa_client_registration_send(
        sub->client, correlation_id, AA_COMMAND_REJECT_IMAGE, buffer, sizeof(*command) + reason_length, 0, NULL);
}
