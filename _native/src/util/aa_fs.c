#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/aa_fs.h"
#include "util/aa_error.h"

int aa_map_new_file(aa_mapped_file_t *mapped, const char *path, size_t length, bool sparse)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
    {
        AA_SET_ERR(errno, "could not create %s: %s", path, strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)length) < 0)
    {
        int err = errno;
        close(fd);
        unlink(path);
        AA_SET_ERR(err == ENOSPC ? AA_ERROR_CODE_STORAGE_SPACE : err,
            "could not size %s to %zu bytes: %s", path, length, strerror(err));
        return -1;
    }
    if (!sparse)
    {
        int rc = posix_fallocate(fd, 0, (off_t)length);
        if (0 != rc && EOPNOTSUPP != rc && EINVAL != rc)
        {
            close(fd);
            unlink(path);
            AA_SET_ERR(rc == ENOSPC ? AA_ERROR_CODE_STORAGE_SPACE : rc,
                "insufficient storage for %s (%zu bytes): %s; free space in the aeron directory or use "
                "shorter terms", path, length, strerror(rc));
            return -1;
        }
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
    mapped->allocated = !sparse;
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
    int fd = open(path, O_RDWR);
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

int aa_mkdirs(const char *path)
{
    char tmp[4096];
    size_t len = strlen(path);
    if (len >= sizeof(tmp))
    {
        AA_SET_ERR(ENAMETOOLONG, "path too long: %s", path);
        return -1;
    }
    memcpy(tmp, path, len + 1);
    for (char *p = tmp + 1; *p; p++)
    {
        if ('/' == *p)
        {
            *p = '\0';
            if (mkdir(tmp, 0777) < 0 && EEXIST != errno)
            {
                AA_SET_ERR(errno, "could not create directory %s: %s", tmp, strerror(errno));
                return -1;
            }
            *p = '/';
        }
    }
    if (mkdir(tmp, 0777) < 0 && EEXIST != errno)
    {
        AA_SET_ERR(errno, "could not create directory %s: %s", tmp, strerror(errno));
        return -1;
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

int aa_lock_file_in_dir(const char *dir, const char *name)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
    {
        AA_SET_ERR(ENAMETOOLONG, "path too long: %s/%s", dir, name);
        return -1;
    }
    for (;;)
    {
        if (aa_mkdirs(dir) < 0)
        {
            return -1;
        }
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
        {
            if (ENOENT == errno)
            {
                continue; /* the directory was deleted between mkdir and open */
            }
            AA_SET_ERR(errno, "could not open the lock file %s: %s", path, strerror(errno));
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
