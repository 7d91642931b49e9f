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

/* Create (or truncate) a file of `length` bytes, allocate every block of it and map it shared
 * read-write (docs/security.md, Disks): a full filesystem fails here with AA_ERROR_CODE_STORAGE_SPACE
 * and a message naming the filesystem, the size, `what` the file is ("log of publication 5 (session
 * 7, stream 10)") and `fix` ("lower term-length"), never later with a SIGBUS in the message path. */
int aa_map_new_file(aa_mapped_file_t *mapped, const char *path, size_t length, const char *what, const char *fix);
/* Allocate [offset, offset + length) of an open file (extending it as needed), with the same error
 * as aa_map_new_file when there is no space. */
int aa_fs_allocate_range(int fd, const char *path, size_t offset, size_t length, const char *what, const char *fix);
/* Set the error "no space left on <mount point> for a <size> <what> at <path> (<free> free); free
 * space there or <fix>" (AA_ERROR_CODE_STORAGE_SPACE). */
void aa_fs_set_no_space_err(const char *path, uint64_t length, const char *what, const char *fix);
/* The mount point of the filesystem that holds `path` (the path itself, resolved, when it fails). */
int aa_fs_mount_point(const char *path, char *out, size_t out_length);
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
/* Read a secret (a token, a password) from the first line of a file (docs/security.md, Secrets on the
 * command line): the line's end (\n or \r\n) is not part of it; an empty secret, one that does not
 * fit `length` with its NUL, or a path that is no regular file (a symlink is not followed) is refused. */
int aa_read_secret_file(const char *path, char *out, size_t length);
/* The default aeron directory: $AERON_DIR, else /dev/shm/aeron-<user>. */
int aa_default_aeron_dir(char *buf, size_t length);

#endif
