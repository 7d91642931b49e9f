/* Memory-mapped files: creation (conductor only), mapping for reading/writing, removal; the
 * directories and files of the driver and the archive, their modes and owners (docs/security.md,
 * "Files"). */
#ifndef AA_FS_H
#define AA_FS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Who may use a directory the driver or archive owns and the files it creates there
 * (docs/security.md, "Files"). All zero is owner only. */
typedef struct aa_fs_access_stct
{
    bool group;         /* a group shares them: gid */
    uint32_t gid;
    bool group_writes;  /* the group's members write the files too (the CnC and the log buffers: clients write them) */
}
aa_fs_access_t;

/* The one source of the modes: directories 0700, or 02750 with a group (it reads and traverses,
 * never creates or removes; setgid keeps the group on what is created inside); files 0600, or 0640
 * with a group, 0660 where the group writes. */
uint32_t aa_fs_dir_mode(const aa_fs_access_t *access);
uint32_t aa_fs_file_mode(const aa_fs_access_t *access);
/* A group option's value: "" is owner only, else a group name or a numeric gid; group_writes as
 * given. -1 naming the option (env_name) and the fix when no such group exists. */
int aa_fs_access_parse(aa_fs_access_t *access, const char *group, bool group_writes, const char *env_name);
/* The group option's value of an access ("" when owner only). */
int aa_fs_access_format(const aa_fs_access_t *access, char *out, size_t length);
/* The access of the files created in dir, as its mode and group say (the group when it may read
 * the directory), group_writes as given: for creators that get only the directory. */
int aa_fs_dir_access(const char *dir, bool group_writes, aa_fs_access_t *access);

/* Creates path and its missing parents (each created one checked to be a directory of this user,
 * not a link, and given access's mode and group), then checks path itself: a real directory (never
 * a symbolic link), owned by this process's user, writable by no one else. A directory that fails
 * is refused with an error naming it, its owner (name and uid), its mode and the fix, where
 * `option` names the setting that chooses another (e.g. "aeron.dir (AERON_DIR)"). With access,
 * its mode and group are then set to access's (a directory of ours that an older version left
 * 0755 is narrowed); NULL leaves an existing one's as they are (a tool that only checks). */
int aa_fs_prepare_dir(const char *path, const aa_fs_access_t *access, const char *option);
/* Creates a new file (O_EXCL, never through a symbolic link) with flags (O_RDWR, O_WRONLY), its
 * mode and group access's whatever the umask; the descriptor, or -1 (an existing file or link
 * included). */
int aa_fs_create_file(const char *path, int flags, const aa_fs_access_t *access);
/* Opens a file never through a symbolic link; it must be a regular file. With access (a writer
 * that owns it: O_CREAT may be in flags) it must be this user's, and its mode and group are set to
 * access's. The descriptor, or -1. */
int aa_fs_open_file(const char *path, int flags, const aa_fs_access_t *access);

typedef struct aa_mapped_file_stct
{
    uint8_t *addr;
    size_t length;
    bool allocated;  /* every block of the file is allocated (not sparse): safe to pre-fault */
}
aa_mapped_file_t;

/* Create a new file of `length` bytes (aa_fs_create_file: not one that exists, not through a link;
 * mode and group from access), allocate every block of it and map it shared read-write
 * (docs/security.md, Disks): a full filesystem fails here with AA_ERROR_CODE_STORAGE_SPACE and a
 * message naming the filesystem, the size, `what` the file is ("log of publication 5 (session 7,
 * stream 10)") and `fix` ("lower term-length"), never later with a SIGBUS in the message path. */
int aa_map_new_file(
    aa_mapped_file_t *mapped,
    const char *path,
    size_t length,
    const char *what,
    const char *fix,
    const aa_fs_access_t *access);
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
int aa_delete_dir(const char *path);
/* Delete everything in a directory but the entry named `keep` (NULL: nothing is kept). */
int aa_delete_dir_contents(const char *path, const char *keep);
/* Lock <dir>/<name> exclusively (flock; between threads too, as each call opens the file anew),
 * creating the directory (aa_fs_prepare_dir with access and option) and the file (never through a
 * link; mode and group from access) as needed, and return its descriptor: closing it, or the
 * process's death, releases the lock. A file deleted or replaced while this waited for it is
 * locked again under its new inode, so whoever deletes the file must hold its lock while it does. */
int aa_lock_file_in_dir(const char *dir, const char *name, const aa_fs_access_t *access, const char *option);
/* Lock again (or release) a descriptor aa_lock_file_in_dir returned. */
int aa_lock_fd(int fd);
void aa_unlock_fd(int fd);
/* Release the lock and close the descriptor. */
void aa_release_lock_fd(int fd);
bool aa_file_exists(const char *path);
int64_t aa_file_length(const char *path);
/* Files of secrets (docs/security.md, "Files of secrets"): one rule for every secret the project
 * reads from a file (the termination token, the archive's credentials, the gossip key, a client's
 * credentials): a regular file (a symbolic link is followed, as Kubernetes mounts Secrets, and the
 * file it reaches is checked) of this process's user or root, readable by its owner only, holding
 * 1 to `capacity` bytes. Returns the bytes read into `out`, or -1 with the error message naming
 * `what` (the option), the path and the fix; `out` is zeroed on a refusal after reading. */
int64_t aa_secret_file_read(const char *what, const char *path, uint8_t *out, size_t capacity);
/* The first line of such a file as a C string (its end, \n or \r\n, not part of it): refused when
 * empty, holding a NUL, or not fitting `length` with its NUL. */
int aa_secret_file_first_line(const char *what, const char *path, char *out, size_t length);
/* The default aeron directory: $AERON_DIR, else /dev/shm/aeron-<user>. */
int aa_default_aeron_dir(char *buf, size_t length);

#endif
