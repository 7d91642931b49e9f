/* Memory-mapped files: creation (conductor only), mapping for reading/writing, removal. */
#ifndef AA_FS_H
#define AA_FS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef struct aa_mapped_file_stct
{
    uint8_t *addr;
    size_t length;
    bool allocated;  /* every block of the file is allocated (not sparse): safe to pre-fault */
}
aa_mapped_file_t;

/* Create (or truncate) a file of `length` bytes and map it shared read-write.
 * With `sparse` false the blocks are allocated up front so that a full disk fails here
 * (STORAGE_SPACE) rather than with SIGBUS in the message path. */
int aa_map_new_file(aa_mapped_file_t *mapped, const char *path, size_t length, bool sparse);
/* Map an existing file shared read-write; `length` 0 maps the whole file. */
int aa_map_existing_file(aa_mapped_file_t *mapped, const char *path, size_t length);
int aa_unmap(aa_mapped_file_t *mapped);
int aa_mkdirs(const char *path);
int aa_delete_dir(const char *path);
/* Delete everything in a directory but the entry named `keep` (NULL: nothing is kept). */
int aa_delete_dir_contents(const char *path, const char *keep);
/* Lock <dir>/<name> exclusively (flock; between threads too, as each call opens the file anew),
 * creating the directory and the file as needed, and return its descriptor: closing it, or the
 * process's death, releases the lock. A file deleted or replaced while this waited for it is
 * locked again under its new inode, so whoever deletes the file must hold its lock while it does. */
int aa_lock_file_in_dir(const char *dir, const char *name);
/* Lock again (or release) a descriptor aa_lock_file_in_dir returned. */
int aa_lock_fd(int fd);
void aa_unlock_fd(int fd);
/* Release the lock and close the descriptor. */
void aa_release_lock_fd(int fd);
bool aa_file_exists(const char *path);
int64_t aa_file_length(const char *path);
/* The default aeron directory: $AERON_DIR, else /dev/shm/aeron-<user>. */
int aa_default_aeron_dir(char *buf, size_t length);

#endif
