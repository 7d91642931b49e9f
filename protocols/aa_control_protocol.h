/*
 * Client <-> driver control protocol (reference 9.3): commands on the to-driver ring buffer and
 * responses on the to-clients broadcast buffer. Structs are packed to 4 bytes as in Aeron.
 */
#ifndef AA_CONTROL_PROTOCOL_H
#define AA_CONTROL_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#define AA_COMMAND_ADD_PUBLICATION 0x01
#define AA_COMMAND_REMOVE_PUBLICATION 0x02
#define AA_COMMAND_ADD_EXCLUSIVE_PUBLICATION 0x03
#define AA_COMMAND_ADD_SUBSCRIPTION 0x04
#define AA_COMMAND_REMOVE_SUBSCRIPTION 0x05
#define AA_COMMAND_CLIENT_KEEPALIVE 0x06
#define AA_COMMAND_ADD_DESTINATION 0x07
#define AA_COMMAND_REMOVE_DESTINATION 0x08
#define AA_COMMAND_ADD_COUNTER 0x09
#define AA_COMMAND_REMOVE_COUNTER 0x0A
#define AA_COMMAND_CLIENT_CLOSE 0x0B
#define AA_COMMAND_ADD_RCV_DESTINATION 0x0C
#define AA_COMMAND_REMOVE_RCV_DESTINATION 0x0D
#define AA_COMMAND_TERMINATE_DRIVER 0x0E
#define AA_COMMAND_ADD_STATIC_COUNTER 0x0F
#define AA_COMMAND_REJECT_IMAGE 0x10
#define AA_COMMAND_GET_NEXT_AVAILABLE_SESSION_ID 0x12

#define AA_RESPONSE_ON_ERROR 0x0F01
#define AA_RESPONSE_ON_AVAILABLE_IMAGE 0x0F02
#define AA_RESPONSE_ON_PUBLICATION_READY 0x0F03
#define AA_RESPONSE_ON_OPERATION_SUCCESS 0x0F04
#define AA_RESPONSE_ON_UNAVAILABLE_IMAGE 0x0F05
#define AA_RESPONSE_ON_EXCLUSIVE_PUBLICATION_READY 0x0F06
#define AA_RESPONSE_ON_SUBSCRIPTION_READY 0x0F07
#define AA_RESPONSE_ON_COUNTER_READY 0x0F08
#define AA_RESPONSE_ON_UNAVAILABLE_COUNTER 0x0F09
#define AA_RESPONSE_ON_CLIENT_TIMEOUT 0x0F0A
#define AA_RESPONSE_ON_STATIC_COUNTER 0x0F0B
#define AA_RESPONSE_ON_PUBLICATION_ERROR 0x0F0C
#define AA_RESPONSE_ON_NEXT_AVAILABLE_SESSION_ID 0x0F0D

/* REMOVE_PUBLICATION's flags (aeron-wave3.md 4.1): revoke the publication (an exclusive one). */
#define AA_REMOVE_PUBLICATION_FLAG_REVOKE ((uint64_t)0x1)
/* The longest reason REJECT_IMAGE takes (aeron-wave3.md 4.2). */
#define AA_REJECT_IMAGE_REASON_MAX_LENGTH 1023

#pragma pack(push)
#pragma pack(4)
typedef struct aa_correlated_command_stct
{
    int64_t client_id;
    int64_t correlation_id;
}
aa_correlated_command_t;

typedef struct aa_publication_command_stct
{
    aa_correlated_command_t correlated;
    int32_t stream_id;
    int32_t channel_length;
    /* channel bytes follow */
}
aa_publication_command_t;

typedef struct aa_remove_command_stct
{
    aa_correlated_command_t correlated;
    int64_t registration_id;
}
aa_remove_command_t;

/* REMOVE_PUBLICATION with flags (Aeron 1.48): flags is read only when the command is this long. */
typedef struct aa_remove_publication_command_stct
{
    aa_correlated_command_t correlated;
    int64_t registration_id;
    uint64_t flags;
}
aa_remove_publication_command_t;

/* REJECT_IMAGE (aeron-wave3.md 4.2): position is unused by Aeron's drivers and ours. */
typedef struct aa_reject_image_command_stct
{
    aa_correlated_command_t correlated;
    int64_t image_correlation_id;
    int64_t position;
    int32_t reason_length;
    /* ASCII reason follows */
}
aa_reject_image_command_t;

/* ON_PUBLICATION_ERROR (aeron-wave3.md 4.2): an ERR frame (or an IPC reject) reached a publication. */
typedef struct aa_publication_error_stct
{
    int64_t registration_id;
    int64_t destination_registration_id;
    int32_t session_id;
    int32_t stream_id;
    int64_t receiver_id;
    int64_t group_tag;
    int16_t address_type;
    uint16_t address_port;
    uint8_t address[16];
    int32_t error_code;
    int32_t error_message_length;
    /* error text follows */
}
aa_publication_error_t;

#define AA_PUBLICATION_ERROR_ADDRESS_TYPE_IPV4 1
#define AA_PUBLICATION_ERROR_ADDRESS_TYPE_IPV6 2

typedef struct aa_subscription_command_stct
{
    aa_correlated_command_t correlated;
    int64_t registration_correlation_id;
    int32_t stream_id;
    int32_t channel_length;
    /* channel bytes follow */
}
aa_subscription_command_t;

/* ADD_DESTINATION, REMOVE_DESTINATION (registration_id: the publication's) and ADD_RCV_DESTINATION,
 * REMOVE_RCV_DESTINATION (the subscription's), as Aeron's aeron_destination_command_t. */
typedef struct aa_destination_command_stct
{
    aa_correlated_command_t correlated;
    int64_t registration_id;
    int32_t channel_length;
    /* the destination's channel follows */
}
aa_destination_command_t;

typedef struct aa_terminate_driver_command_stct
{
    aa_correlated_command_t correlated;
    int32_t token_length;
}
aa_terminate_driver_command_t;

typedef struct aa_publication_buffers_ready_stct
{
    int64_t correlation_id;
    int64_t registration_id;
    int32_t session_id;
    int32_t stream_id;
    int32_t position_limit_counter_id;
    int32_t channel_status_indicator_id;
    int32_t log_file_length;
    /* log file name follows */
}
aa_publication_buffers_ready_t;

typedef struct aa_subscription_ready_stct
{
    int64_t correlation_id;
    int32_t channel_status_indicator_id;
}
aa_subscription_ready_t;

typedef struct aa_image_buffers_ready_stct
{
    int64_t correlation_id;
    int32_t session_id;
    int32_t stream_id;
    int64_t subscriber_registration_id;
    int32_t subscriber_position_id;
    int32_t log_file_length;
    /* log file name, then int32 source identity length and the source identity */
}
aa_image_buffers_ready_t;

typedef struct aa_image_message_stct
{
    int64_t correlation_id;
    int64_t subscription_registration_id;
    int32_t stream_id;
    int32_t channel_length;
    /* channel follows */
}
aa_image_message_t;

typedef struct aa_operation_succeeded_stct
{
    int64_t correlation_id;
}
aa_operation_succeeded_t;

typedef struct aa_error_response_stct
{
    int64_t offending_command_correlation_id;
    int32_t error_code;
    int32_t error_message_length;
    /* message follows */
}
aa_error_response_t;

/* ADD_COUNTER: then int32 key length, the key, padding to 4 bytes, int32 label length, the label. */
typedef struct aa_counter_command_stct
{
    aa_correlated_command_t correlated;
    int32_t type_id;
}
aa_counter_command_t;

/* ON_COUNTER_READY (correlation id of the ADD_COUNTER) and ON_UNAVAILABLE_COUNTER (its registration id). */
typedef struct aa_counter_update_stct
{
    int64_t correlation_id;
    int32_t counter_id;
}
aa_counter_update_t;

/* ADD_STATIC_COUNTER (Aeron's aeron_static_counter_command_t): the counter's registration id (the
 * application's, with type_id its key) and type id, then the key and label as ADD_COUNTER's. The answer
 * is ON_STATIC_COUNTER, an aa_counter_update_t with the command's correlation id. */
typedef struct aa_static_counter_command_stct
{
    aa_correlated_command_t correlated;
    int64_t registration_id;
    int32_t type_id;
}
aa_static_counter_command_t;

/* GET_NEXT_AVAILABLE_SESSION_ID and its answer ON_NEXT_AVAILABLE_SESSION_ID (Aeron's
 * aeron_get_next_available_session_id_command_t, aeron_next_available_session_id_response_t). */
typedef struct aa_next_session_id_command_stct
{
    aa_correlated_command_t correlated;
    int32_t stream_id;
}
aa_next_session_id_command_t;

typedef struct aa_next_session_id_response_stct
{
    int64_t correlation_id;
    int32_t next_session_id;
}
aa_next_session_id_response_t;

typedef struct aa_client_timeout_stct
{
    int64_t client_id;
}
aa_client_timeout_t;
#pragma pack(pop)

_Static_assert(sizeof(aa_correlated_command_t) == 16, "correlated command is 16 bytes");
_Static_assert(sizeof(aa_remove_publication_command_t) == 32, "remove publication with flags is 32 bytes");
_Static_assert(sizeof(aa_reject_image_command_t) == 36, "reject image is 36 bytes before the reason");
_Static_assert(offsetof(aa_publication_error_t, address_type) == 40, "address_type @40");
_Static_assert(offsetof(aa_publication_error_t, error_code) == 60, "error_code @60");
_Static_assert(sizeof(aa_publication_error_t) == 68, "publication error is 68 bytes before the text");
_Static_assert(sizeof(aa_publication_buffers_ready_t) == 36, "publication ready is 36 bytes");
_Static_assert(sizeof(aa_image_buffers_ready_t) == 32, "image ready is 32 bytes");
_Static_assert(sizeof(aa_destination_command_t) == 28, "destination command is 28 bytes");
_Static_assert(sizeof(aa_counter_command_t) == 20, "counter command is 20 bytes");
_Static_assert(sizeof(aa_counter_update_t) == 12, "counter update is 12 bytes");
_Static_assert(sizeof(aa_static_counter_command_t) == 28, "static counter command is 28 bytes");
_Static_assert(sizeof(aa_next_session_id_command_t) == 20, "next session id command is 20 bytes");
_Static_assert(sizeof(aa_next_session_id_response_t) == 12, "next session id response is 12 bytes");

#endif
