/*
 * Timestamps written into DATA frames (reference wave 3, section 3; the C driver's aeron_timestamps.c):
 * an int64 of epoch nanoseconds, little-endian, at a channel's offset into the payload (frame + 32), or in
 * the header's reserved value (offset AA_UDP_CHANNEL_TIMESTAMP_RESERVED); a stamp that would not fit the
 * frame's payload is skipped.
 *
 *   channel-snd-ts-offset  the sender, just before the datagram leaves, in place in the publication's term
 *                          buffer (a retransmit is stamped again): the first frame of each datagram when it
 *                          is DATA with frame_length > 0.
 *   channel-rcv-ts-offset  the receiver, into the datagram before it is copied into the image: every DATA
 *                          frame with the B flag wholly inside the datagram, one clock read per datagram.
 *   media-rcv-ts-offset    the same frames, with the kernel's receive time (SO_TIMESTAMPNS).
 *
 * The message path pays nothing when a channel asks for none: the endpoints test one flag they computed
 * when they were created.
 */
#ifndef AA_TIMESTAMPS_H
#define AA_TIMESTAMPS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "media/aa_udp_channel.h"

/* A clock of epoch nanoseconds (CLOCK_REALTIME unless a test stands in). */
typedef int64_t (*aa_timestamps_clock_t)(void *clientd);

static inline int64_t aa_timestamps_realtime_ns(void *clientd)
{
    (void)clientd;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Writes timestamp_ns into the DATA frame at frame (frame_length bytes) at offset. */
void aa_timestamps_set_timestamp(uint8_t *frame, int32_t frame_length, int32_t offset, int64_t timestamp_ns);

/* The sender's stamp of one datagram (length bytes from the term buffer). */
void aa_timestamps_stamp_sent(uint8_t *datagram, size_t length, int32_t offset, int64_t timestamp_ns);

/* The receiver's stamps of one datagram: channel_offset with clock (read at most once, only if a frame is
 * stamped), media_offset with media_timestamp_ns (skipped when has_media_timestamp is false: the kernel
 * gave none). Either offset may be AA_UDP_CHANNEL_TIMESTAMP_OFF. */
void aa_timestamps_stamp_received(
    uint8_t *datagram, size_t length, int32_t channel_offset, aa_timestamps_clock_t clock, void *clock_clientd,
    int32_t media_offset, bool has_media_timestamp, int64_t media_timestamp_ns);

#endif
