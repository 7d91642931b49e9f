/*
 * The name resolution results table: <aeron_dir>/name-resolutions.dat (ours, not Aeron's), what a
 * driver currently resolves each name to, read by `aeron-async resolve NAME` (aeron_async/resolve.py).
 * Written by the driver conductor only; readers in other processes read an entry between two equal
 * even values of its sequence (a seqlock).
 *
 * Layout (little-endian, all offsets in bytes):
 *   header (256): 0 magic int32 "AANR" (0x524e4141), 4 version int32 (1), 8 entry_length int32
 *                 (AA_NAME_RESOLUTIONS_ENTRY_LENGTH), 12 capacity int32, 16 count int32 (entries in
 *                 use, stored with release after the entry), 20 pid int32, 24 start time int64 (epoch
 *                 ms), 32 resolver char[64] (the driver's resolver name, NUL-padded), 96 reserved.
 *   entries, each AA_NAME_RESOLUTIONS_ENTRY_LENGTH (768):
 *     0 sequence int64 (odd while the conductor writes the entry), 8 last_resolution_ms int64
 *     (epoch), 16 first_resolution_ms int64, 24 change_count int32 (times the address changed),
 *     28 failure_count int32, 32 state int32 (1 resolved, 2 failed: the last attempt failed; the
 *     address is the last good one, if any), 36 reserved, 40 key char[16] (endpoint, control,
 *     interface, neighbour), 56 source char[40] (the resolver that answered), 96 address char[64]
 *     ("a.b.c.d:port" / "[v6]:port", "" when never resolved), 160 name char[256], 416 error char[352]
 *     (the last failure's message).
 */
#ifndef AA_NAME_RESOLUTIONS_H
#define AA_NAME_RESOLUTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "resolver/aa_name_resolver.h"
#include "util/aa_udp_address.h"
#include "util/aa_fs.h"

#define AA_NAME_RESOLUTIONS_FILE "name-resolutions.dat"
#define AA_NAME_RESOLUTIONS_MAGIC 0x524e4141
#define AA_NAME_RESOLUTIONS_VERSION 1
#define AA_NAME_RESOLUTIONS_HEADER_LENGTH 256
#define AA_NAME_RESOLUTIONS_ENTRY_LENGTH 768
#define AA_NAME_RESOLUTIONS_CAPACITY 512

#define AA_NAME_RESOLUTION_STATE_RESOLVED 1
#define AA_NAME_RESOLUTION_STATE_FAILED 2

typedef struct aa_name_resolution_entry_stct
{
    volatile int64_t sequence;
    int64_t last_resolution_ms;
    int64_t first_resolution_ms;
    int32_t change_count;
    int32_t failure_count;
    int32_t state;
    int32_t reserved;
    char key[16];
    char source[40];
    char address[64];
    char name[256];
    char error[352];
}
aa_name_resolution_entry_t;

struct aa_name_resolutions_stct
{
    aa_mapped_file_t file;
    int32_t count;          /* entries in use (the conductor's copy) */
    int32_t evictions;      /* entries overwritten when the table was full (oldest first) */
};

/* Creates <aeron_dir>/name-resolutions.dat (a new file: mode and group from access) naming the
 * driver's resolver. */
int aa_name_resolutions_init(
    aa_name_resolutions_t *table, const char *aeron_dir, const aa_fs_access_t *access, const char *resolver_name,
    int64_t now_ms);
void aa_name_resolutions_close(aa_name_resolutions_t *table);

/* Records that name (for URI parameter or resolver key key) resolved to address (port included,
 * 0 when none) by resolver source at now_ms; counts a change when the entry held another address.
 * Returns 1 when the address changed, 0 when it did not or is new, -1 on bad arguments. CONDUCTOR
 * thread only (the gossip resolver records from do_work). */
int aa_name_resolutions_record(
    aa_name_resolutions_t *table, const char *name, const char *key, const struct sockaddr_storage *address,
    const char *source, int64_t now_ms);
/* Records that resolving name failed with error (the address already known is kept). CONDUCTOR only. */
int aa_name_resolutions_record_failure(
    aa_name_resolutions_t *table, const char *name, const char *key, const char *source, const char *error,
    int64_t now_ms);

#endif
