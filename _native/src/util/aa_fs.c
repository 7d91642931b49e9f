#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <ftw.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util/aa_fs.h"
#include "util/aa_error.h"

/* ---- modes and owners (docs/security.md, "Files") ---- */

uint32_t aa_fs_dir_mode(const aa_fs_access_t *access)
{
    return NULL != access && access->group ? (S_ISGID | 0750) : 0700;
}

uint32_t aa_fs_file_mode(const aa_fs_access_t *access)
{
    if (NULL == access || !access->group)
    {
        return 0600;
    }
    return access->group_writes ? 0660 : 0640;
}

/* A group by name (name not NULL) or gid: 0 with *gid / the name in out set, 1 when there is none,
 * else an errno (a group with many members needs a larger buffer: grown up to 1 MiB). */
static int aa_fs_group_lookup(const char *name, uint32_t *gid, char *out, size_t length)
{
    for (size_t size = 16384; size <= 1048576; size *= 4)
    {
        char *buf = malloc(size);
        if (NULL == buf)
        {
            return ENOMEM;
        }
        struct group gr, *found = NULL;
        int rc = NULL != name ? getgrnam_r(name, &gr, buf, size, &found) :
            getgrgid_r((gid_t)*gid, &gr, buf, size, &found);
        if (0 == rc && NULL != found)
        {
            *gid = (uint32_t)found->gr_gid;
            if (NULL != out)
            {
                snprintf(out, length, "%s", found->gr_name);
            }
        }
        free(buf);
        if (ERANGE != rc)
        {
            return 0 != rc ? rc : (NULL == found ? 1 : 0);
        }
    }
    return ERANGE;
}

int aa_fs_access_parse(aa_fs_access_t *access, const char *group, bool group_writes, const char *env_name)
{
    memset(access, 0, sizeof(*access));
    access->group_writes = group_writes;
    if (NULL == group || '\0' == group[0])
    {
        return 0;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long gid = strtoull(group, &end, 10);
    if ('\0' != *end || end == group || 0 != errno || gid > UINT32_MAX - 1 || '-' == group[0])
    {
        uint32_t found = 0;
        int rc = aa_fs_group_lookup(group, &found, NULL, 0);
        if (0 != rc)
        {
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                "%s=%s: no such group%s%s; give the name or the numeric gid of an existing group whose members may "
                "use the directory (`getent group`), or leave it empty for the owner only",
                env_name, group, 1 != rc ? ": " : "", 1 != rc ? strerror(rc) : "");
            return -1;
        }
        gid = found;
    }
    access->group = true;
    access->gid = (uint32_t)gid;
    return 0;
}

int aa_fs_access_format(const aa_fs_access_t *access, char *out, size_t length)
{
    if (!access->group)
    {
        return snprintf(out, length, "%s", "");
    }
    uint32_t gid = access->gid;
    char name[256];
    if (0 == aa_fs_group_lookup(NULL, &gid, name, sizeof(name)))
    {
        return snprintf(out, length, "%s", name);
    }
    return snprintf(out, length, "%" PRIu32, access->gid);
}

int aa_fs_dir_access(const char *dir, bool group_writes, aa_fs_access_t *access)
{
    struct stat st;
    memset(access, 0, sizeof(*access));
    access->group_writes = group_writes;
    if (stat(dir, &st) < 0)
    {
        AA_SET_ERR(errno, "could not stat the directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (0 != (st.st_mode & S_IRWXG))
    {
        access->group = true;
        access->gid = (uint32_t)st.st_gid;
    }
    return 0;
}

static void aa_fs_user_name(uid_t uid, char *out, size_t length)
{
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (0 == getpwuid_r(uid, &pw, buf, sizeof(buf), &found) && NULL != found)
    {
        snprintf(out, length, "%s", found->pw_name);
    }
    else
    {
        snprintf(out, length, "%s", "(no user name)");
    }
}

/* Refuses the directory at path as st says, naming its owner, its mode and the fix. */
static int aa_fs_refuse_dir(const char *path, const struct stat *st, const char *option)
{
    char owner[256], me[256];
    uid_t uid = geteuid();
    aa_fs_user_name(st->st_uid, owner, sizeof(owner));
    aa_fs_user_name(uid, me, sizeof(me));
    unsigned mode = (unsigned)(st->st_mode & 07777);
    if (S_ISLNK(st->st_mode))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "refusing the directory %s: it is a symbolic link (owner %s, uid %u, mode 0%03o), and no link is "
            "followed there, as whoever made it could point it at files to overwrite or read; remove the link and "
            "let the directory be created, give the real directory's path, or choose another %s",
            path, owner, (unsigned)st->st_uid, mode, option);
    }
    else if (!S_ISDIR(st->st_mode))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "refusing the directory %s: it is not a directory (owner %s, uid %u, mode 0%03o); remove it or choose "
            "another %s", path, owner, (unsigned)st->st_uid, mode, option);
    }
    else if (st->st_uid != uid)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "refusing the directory %s: it is owned by %s (uid %u), not by this process's user %s (uid %u), and has "
            "mode 0%03o, so its owner could read or replace every file in it; remove it, or `chown %s` and "
            "`chmod 0700` it, or choose another %s",
            path, owner, (unsigned)st->st_uid, me, (unsigned)uid, mode, me, option);
    }
    else
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "refusing the directory %s: owner %s (uid %u), mode 0%03o lets its group or others write it, so another "
            "user could plant or replace files in it; `chmod 0700` it (or remove it), or choose another %s",
            path, owner, (unsigned)st->st_uid, mode, option);
    }
    return -1;
}

/* Opens path as a directory without following a link and checks it is ours and writable by no one
 * else (a directory created just now is checked the same: a replacement raced in is refused). */
static int aa_fs_open_checked_dir(const char *path, const char *option)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
    {
        int err = errno;
        if ((ELOOP == err || ENOTDIR == err) && 0 == lstat(path, &st))
        {
            return aa_fs_refuse_dir(path, &st, option);
        }
        AA_SET_ERR(err, "could not open the directory %s: %s", path, strerror(err));
        return -1;
    }
    if (fstat(fd, &st) < 0)
    {
        int err = errno;
        close(fd);
        AA_SET_ERR(err, "could not stat the directory %s: %s", path, strerror(err));
        return -1;
    }
    if (st.st_uid != geteuid() || 0 != (st.st_mode & (S_IWGRP | S_IWOTH)))
    {
        close(fd);
        return aa_fs_refuse_dir(path, &st, option);
    }
    return fd;
}

/* Sets the mode and the group of a directory or file of ours as access says. */
static int aa_fs_set_access(int fd, const char *path, uint32_t mode, const aa_fs_access_t *access)
{
    if (NULL != access && access->group && fchown(fd, (uid_t)-1, (gid_t)access->gid) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "could not give %s the group %" PRIu32 ": %s; run as a member of that group (or as root), or choose "
            "another group", path, access->gid, strerror(errno));
        return -1;
    }
    if (fchmod(fd, (mode_t)mode) < 0)
    {
        AA_SET_ERR(errno, "could not set the mode of %s to 0%o: %s", path, (unsigned)mode, strerror(errno));
        return -1;
    }
    return 0;
}

int aa_fs_prepare_dir(const char *path, const aa_fs_access_t *access, const char *option)
{
    char tmp[4096];
    size_t len = strlen(path);
    if (0 == len || len >= sizeof(tmp))
    {
        AA_SET_ERR(ENAMETOOLONG, "directory path too long or empty: '%s'", path);
        return -1;
    }
    memcpy(tmp, path, len + 1);
    while (len > 1 && '/' == tmp[len - 1])
    {
        tmp[--len] = '\0';
    }
    uint32_t mode = aa_fs_dir_mode(access);
    for (char *p = tmp + 1;; p++)
    {
        bool last = '\0' == *p;
        if (!last && '/' != *p)
        {
            continue;
        }
        *p = '\0';
        bool created = 0 == mkdir(tmp, 0700);
        if (!created && EEXIST != errno)
        {
            AA_SET_ERR(errno, "could not create the directory %s: %s", tmp, strerror(errno));
            return -1;
        }
        if (created || last)
        {
            /* one we created (checked: no link raced in) or the directory itself (checked always) */
            int fd = aa_fs_open_checked_dir(tmp, option);
            if (fd < 0)
            {
                return -1;
            }
            int rc = created || NULL != access ? aa_fs_set_access(fd, tmp, mode, access) : 0;
            close(fd);
            if (rc < 0)
            {
                return -1;
            }
        }
        if (last)
        {
            return 0;
        }
        *p = '/';
    }
}

int aa_fs_create_file(const char *path, int flags, const aa_fs_access_t *access)
{
    int fd = open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
    {
        int err = errno;
        AA_SET_ERR(ENOSPC == err || EDQUOT == err ? AA_ERROR_CODE_STORAGE_SPACE : err, "could not create %s: %s%s",
            path, strerror(err), EEXIST == err ? " (a file or link of that name is there already)" : "");
        return -1;
    }
    if (aa_fs_set_access(fd, path, aa_fs_file_mode(access), access) < 0)
    {
        close(fd);
        unlink(path);
        return -1;
    }
    return fd;
}

int aa_fs_open_file(const char *path, int flags, const aa_fs_access_t *access)
{
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
    {
        int err = errno;
        AA_SET_ERR(err, "could not open %s: %s%s", path, strerror(err),
            ELOOP == err ? " (it is a symbolic link, which is not followed: remove it)" : "");
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0)
    {
        int err = errno;
        close(fd);
        AA_SET_ERR(err, "could not stat %s: %s", path, strerror(err));
        return -1;
    }
    if (!S_ISREG(st.st_mode) || (NULL != access && st.st_uid != geteuid()))
    {
        close(fd);
        char owner[256];
        aa_fs_user_name(st.st_uid, owner, sizeof(owner));
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "refusing %s: %s (owner %s, uid %u, mode 0%03o); remove it", path,
            !S_ISREG(st.st_mode) ? "not a regular file" : "not owned by this process's user", owner,
            (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        return -1;
    }
    if (NULL != access && aa_fs_set_access(fd, path, aa_fs_file_mode(access), access) < 0)
    {
        close(fd);
        return -1;
    }
    return fd;
}

/* "48 MiB", "192 KiB", "1.5 GiB" or "100 bytes" */
static void aa_fs_format_size(uint64_t length, char *out, size_t out_length)
{
    static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
    int unit = 0;
    double value = (double)length;
    while (value >= 1024.0 && unit < 4)
    {
        value /= 1024.0;
        unit++;
    }
    if (0 == unit)
    {
        snprintf(out, out_length, "%" PRIu64 " bytes", length);
    }
    else
    {
        snprintf(out, out_length, value == (double)(uint64_t)value ? "%.0f %s" : "%.1f %s", value, units[unit]);
    }
}

int aa_fs_mount_point(const char *path, char *out, size_t out_length)
{
    char current[PATH_MAX];
    if (NULL == realpath(path, current))
    {
        snprintf(out, out_length, "%s", path);
        return -1;
    }
    struct stat st;
    if (stat(current, &st) < 0)
    {
        snprintf(out, out_length, "%s", current);
        return -1;
    }
    dev_t dev = st.st_dev;
    for (;;)
    {
        char *slash = strrchr(current, '/');
        if (NULL == slash || slash == current)
        {
            /* the parent is the root: it is the mount point unless current is on another device */
            struct stat root;
            if (0 == stat("/", &root) && root.st_dev == dev)
            {
                snprintf(current, sizeof(current), "/");
            }
            break;
        }
        *slash = '\0';
        struct stat parent;
        if (stat(current, &parent) < 0 || parent.st_dev != dev)
        {
            *slash = '/';
            break;
        }
    }
    snprintf(out, out_length, "%s", current);
    return 0;
}

void aa_fs_set_no_space_err(const char *path, uint64_t length, const char *what, const char *fix)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (NULL != slash && slash != dir)
    {
        *slash = '\0';
    }
    char mount[PATH_MAX];
    aa_fs_mount_point(dir, mount, sizeof(mount));
    char size[32], free_text[64] = "";
    aa_fs_format_size(length, size, sizeof(size));
    struct statvfs vfs;
    if (0 == statvfs(dir, &vfs))
    {
        char free_size[32];
        aa_fs_format_size((uint64_t)vfs.f_bavail * vfs.f_frsize, free_size, sizeof(free_size));
        snprintf(free_text, sizeof(free_text), " (%s free)", free_size);
    }
    AA_SET_ERR(AA_ERROR_CODE_STORAGE_SPACE, "no space left on %s for a %s %s at %s%s; free space there or %s",
        mount, size, what, path, free_text, fix);
}

/* Allocates every block of [offset, offset + length) (docs/security.md, Disks): a write into a
 * mapping of a file whose blocks are not allocated faults them in, and on a full filesystem that
 * fault is a SIGBUS, so a file that is mapped is allocated whole before it is, or not mapped at all.
 * posix_fallocate is the one guarantee (tmpfs has no reserve); a filesystem that cannot allocate
 * (EOPNOTSUPP) is checked for the free space instead. */
int aa_fs_allocate_range(int fd, const char *path, size_t offset, size_t length, const char *what, const char *fix)
{
    int rc = posix_fallocate(fd, (off_t)offset, (off_t)length);
    if (EOPNOTSUPP == rc || EINVAL == rc)
    {
        struct statvfs vfs;
        rc = 0 == fstatvfs(fd, &vfs) && (uint64_t)vfs.f_bavail * vfs.f_frsize < length ? ENOSPC : 0;
        struct stat st;
        if (0 == rc && 0 == fstat(fd, &st) && (uint64_t)st.st_size < (uint64_t)(offset + length) &&
            ftruncate(fd, (off_t)(offset + length)) < 0)
        {
            rc = errno;
        }
    }
    if (ENOSPC == rc || EDQUOT == rc || EFBIG == rc)
    {
        aa_fs_set_no_space_err(path, length, what, fix);
        return -1;
    }
    if (0 != rc)
    {
        AA_SET_ERR(rc, "could not allocate %zu bytes for the %s %s: %s", length, what, path, strerror(rc));
        return -1;
    }
    return 0;
}

int aa_map_new_file(
    aa_mapped_file_t *mapped,
    const char *path,
    size_t length,
    const char *what,
    const char *fix,
    const aa_fs_access_t *access)
{
    int fd = aa_fs_create_file(path, O_RDWR, access);
    if (fd < 0)
    {
        return -1;
    }
    if (aa_fs_allocate_range(fd, path, 0, length, what, fix) < 0)
    {
        close(fd);
        unlink(path);
        return -1;
    }
    void *addr = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (MAP_FAILED == addr)
    {
        int err = errno;
        unlink(path);
        AA_SET_ERR(err, "could not map %s: %s", path, strerror(err));
        return -1;
    }
    mapped->addr = addr;
    mapped->length = length;
    mapped->allocated = true;
    return 0;
}

/* Whether the file has all of its blocks allocated (not sparse). */
static bool aa_file_is_allocated(int fd)
{
    struct stat st;
    return 0 == fstat(fd, &st) && st.st_size > 0 && (uint64_t)st.st_blocks * 512 >= (uint64_t)st.st_size;
}

int aa_map_existing_file(aa_mapped_file_t *mapped, const char *path, size_t length)
{
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
    {
        AA_SET_ERR(errno, "could not open %s: %s", path, strerror(errno));
        return -1;
    }
    if (0 == length)
    {
        struct stat st;
        if (fstat(fd, &st) < 0)
        {
            int err = errno;
            close(fd);
            AA_SET_ERR(err, "could not stat %s: %s", path, strerror(err));
            return -1;
        }
        length = (size_t)st.st_size;
    }
    if (0 == length)
    {
        close(fd);
        AA_SET_ERR(EINVAL, "file %s is empty", path);
        return -1;
    }
    /* a file another driver created sparse (Aeron's sparse=true) is allocated before it is mapped
     * (docs/security.md, Disks) */
    if (!aa_file_is_allocated(fd) && aa_fs_allocate_range(fd, path, 0, length, "sparse file mapped by this process",
        "create it unsparse (sparse=false)") < 0)
    {
        close(fd);
        return -1;
    }
    bool allocated = aa_file_is_allocated(fd);
    void *addr = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (MAP_FAILED == addr)
    {
        AA_SET_ERR(errno, "could not map %s: %s", path, strerror(errno));
        return -1;
    }
    mapped->addr = addr;
    mapped->length = length;
    mapped->allocated = allocated;
    return 0;
}

int aa_unmap(aa_mapped_file_t *mapped)
{
    if (NULL != mapped->addr)
    {
        if (munmap(mapped->addr, mapped->length) < 0)
        {
            AA_SET_ERR(errno, "munmap failed: %s", strerror(errno));
            return -1;
        }
        mapped->addr = NULL;
        mapped->length = 0;
        mapped->allocated = false;
    }
    return 0;
}

static int aa_unlink_cb(const char *fpath, const struct stat *sb, int typeflag, struct FTW *ftwbuf)
{
    (void)sb;
    (void)typeflag;
    (void)ftwbuf;
    remove(fpath);
    return 0;
}

int aa_delete_dir(const char *path)
{
    if (nftw(path, aa_unlink_cb, 64, FTW_DEPTH | FTW_PHYS) < 0 && ENOENT != errno)
    {
        AA_SET_ERR(errno, "could not delete %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int aa_delete_dir_contents(const char *path, const char *keep)
{
    DIR *dir = opendir(path);
    if (NULL == dir)
    {
        AA_SET_ERR(errno, "could not open directory %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *entry;
    char child[4096];
    while (NULL != (entry = readdir(dir)))
    {
        const char *name = entry->d_name;
        if (0 == strcmp(name, ".") || 0 == strcmp(name, "..") || (NULL != keep && 0 == strcmp(name, keep)))
        {
            continue;
        }
        if ((size_t)snprintf(child, sizeof(child), "%s/%s", path, name) >= sizeof(child))
        {
            AA_SET_ERR(ENAMETOOLONG, "path too long: %s/%s", path, name);
            rc = -1;
            break;
        }
        if (unlink(child) < 0 && ENOENT != errno && aa_delete_dir(child) < 0)
        {
            rc = -1;
            break;
        }
    }
    closedir(dir);
    return rc;
}

int aa_lock_file_in_dir(const char *dir, const char *name, const aa_fs_access_t *access, const char *option)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
    {
        AA_SET_ERR(ENAMETOOLONG, "path too long: %s/%s", dir, name);
        return -1;
    }
    for (;;)
    {
        if (aa_fs_prepare_dir(dir, access, option) < 0)
        {
            return -1;
        }
        int fd = aa_fs_open_file(path, O_RDWR | O_CREAT, access);
        if (fd < 0)
        {
            if (ENOENT == aa_errcode())
            {
                continue; /* the directory was deleted between mkdir and open */
            }
            AA_APPEND_ERR("opening the lock file %s", path);
            return -1;
        }
        if (aa_lock_fd(fd) < 0)
        {
            AA_APPEND_ERR("locking %s", path);
            close(fd);
            return -1;
        }
        /* Whoever deletes the file (a driver deleting its directory on close) holds the lock while
         * it does: a file that is gone or replaced by now was locked too late, so lock the new one. */
        struct stat locked, current;
        if (0 == fstat(fd, &locked) && 0 == stat(path, &current) &&
            locked.st_dev == current.st_dev && locked.st_ino == current.st_ino)
        {
            return fd;
        }
        close(fd);
    }
}

int aa_lock_fd(int fd)
{
    while (flock(fd, LOCK_EX) < 0)
    {
        if (EINTR != errno)
        {
            AA_SET_ERR(errno, "flock failed: %s", strerror(errno));
            return -1;
        }
    }
    return 0;
}

void aa_unlock_fd(int fd)
{
    flock(fd, LOCK_UN);
}

void aa_release_lock_fd(int fd)
{
    flock(fd, LOCK_UN); /* a child forked meanwhile shares the descriptor: close alone would not release it */
    close(fd);
}

bool aa_file_exists(const char *path)
{
    struct stat st;
    return 0 == stat(path, &st);
}

int64_t aa_file_length(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
    {
        return -1;
    }
    return (int64_t)st.st_size;
}

int aa_default_aeron_dir(char *buf, size_t length)
{
    const char *env = getenv("AERON_DIR");
    if (NULL != env && '\0' != env[0])
    {
        snprintf(buf, length, "%s", env);
        return 0;
    }
    const char *user = getenv("USER");
    char namebuf[256];
    if (NULL == user || '\0' == user[0])
    {
        struct passwd pw, *result = NULL;
        char pwbuf[1024];
        if (0 == getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &result) && NULL != result)
        {
            snprintf(namebuf, sizeof(namebuf), "%s", pw.pw_name);
        }
        else
        {
            snprintf(namebuf, sizeof(namebuf), "%d", (int)getuid());
        }
        user = namebuf;
    }
    snprintf(buf, length, "/dev/shm/aeron-%s", user);
    return 0;
}

int64_t aa_secret_file_read(const char *what, const char *path, uint8_t *out, size_t capacity)
{
    /* symbolic links are followed (Kubernetes mounts a Secret's keys through them); the checks below
     * are of the file reached, as fstat sees the descriptor read */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: cannot open '%s': %s (give the path of a file of this user "
            "that only it may read: chmod 600)", what, path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
    {
        close(fd);
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' is not a regular file: give the path of the file itself",
            what, path);
        return -1;
    }
    if (0 != (st.st_mode & (S_IRWXG | S_IRWXO)))
    {
        close(fd);
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' has mode %04o, open to its group or others: a file of "
            "secrets must be readable by its owner only (chmod 600 '%s'; defaultMode: 0400 for a Kubernetes Secret)",
            what, path, (unsigned)(st.st_mode & 07777), path);
        return -1;
    }
    if (st.st_uid != geteuid() && 0 != st.st_uid)
    {
        close(fd);
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' belongs to uid %u, not to this process's user (uid %u) or "
            "root: another user could change it (chown %u '%s')", what, path, (unsigned)st.st_uid,
            (unsigned)geteuid(), (unsigned)geteuid(), path);
        return -1;
    }
    size_t total = 0;
    uint8_t extra;
    ssize_t more = 0;
    for (;;)
    {
        ssize_t n = total < capacity ? read(fd, out + total, capacity - total) : read(fd, &extra, 1);
        if (n < 0 && EINTR == errno)
        {
            continue;
        }
        if (n < 0)
        {
            int err = errno;
            close(fd);
            memset(out, 0, capacity);
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: cannot read '%s': %s", what, path, strerror(err));
            return -1;
        }
        if (0 == n || total >= capacity)
        {
            more = total >= capacity ? n : 0;
            break;
        }
        total += (size_t)n;
    }
    close(fd);
    if (more > 0)
    {
        memset(out, 0, capacity);
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' holds more than the %zu bytes allowed", what, path, capacity);
        return -1;
    }
    if (0 == total)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' is empty; write the secret in it", what, path);
        return -1;
    }
    return (int64_t)total;
}

int aa_secret_file_first_line(const char *what, const char *path, char *out, size_t length)
{
    uint8_t buffer[4096];
    int64_t n = aa_secret_file_read(what, path, buffer, sizeof(buffer));
    if (n < 0)
    {
        return -1;
    }
    size_t line = 0;
    while (line < (size_t)n && '\n' != buffer[line])
    {
        line++;
    }
    if (line > 0 && '\r' == buffer[line - 1])
    {
        line--;
    }
    int rc = 0;
    if (0 == line)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: '%s' has an empty first line; write the secret on it", what, path);
        rc = -1;
    }
    else if (line >= length || NULL != memchr(buffer, '\0', line))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: the secret in '%s' is %zu bytes%s; at most %zu are allowed, with "
            "no NUL byte", what, path, line, line >= length ? "" : " holding a NUL byte", length - 1);
        rc = -1;
    }
    else
    {
        memcpy(out, buffer, line);
        out[line] = '\0';
    }
    memset(buffer, 0, sizeof(buffer));
    return rc;
}
