/*
 * The ids and the log geometry a network stream is created with, on either side: a network
 * publication (and the parameters it is made from) and the publication image that rebuilds it hold
 * the same five, as the log's metadata and every DATA and SETUP frame carry them (reference 4.1).
 */
#ifndef AA_STREAM_LOG_IDS_H
#define AA_STREAM_LOG_IDS_H

#include <stdint.h>

typedef struct aa_stream_log_ids_stct
{
    int32_t session_id;
    int32_t stream_id;
    int32_t initial_term_id;
    int32_t term_length;
    int32_t mtu_length;
}
aa_stream_log_ids_t;

#endif
