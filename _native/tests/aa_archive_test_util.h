/* Helpers of the archive file tests: a temporary directory, and counters of the sync calls the
 * code under test makes (the Makefile links these tests with --wrap=fsync,fdatasync,msync). */
#ifndef AA_ARCHIVE_TEST_UTIL_H
#define AA_ARCHIVE_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int g_fsync_calls;
static int g_fdatasync_calls;
static int g_msync_calls;

int __real_fsync(int fd);
int __real_fdatasync(int fd);
int __real_msync(void *addr, size_t length, int flags);

int __wrap_fsync(int fd)
{
    g_fsync_calls++;
    return __real_fsync(fd);
}

/* when set, fdatasync calls this instead of the real one (a test's slow or failing disk) */
static int (*g_fdatasync_hook)(int fd);

int __wrap_fdatasync(int fd)
{
    g_fdatasync_calls++;
    return NULL != g_fdatasync_hook ? g_fdatasync_hook(fd) : __real_fdatasync(fd);
}

int __wrap_msync(void *addr, size_t length, int flags)
{
    g_msync_calls++;
    return __real_msync(addr, length, flags);
}

static void reset_sync_counts(void)
{
    g_fsync_calls = 0;
    g_fdatasync_calls = 0;
    g_msync_calls = 0;
}

static char g_dir[256];

static void remove_temp_dir(void);

/* the directory goes even when a check fails (AA_CHECK exits, and exit runs this) */
static void remove_temp_dir_at_exit(void)
{
    if ('\0' != g_dir[0])
    {
        remove_temp_dir();
    }
}

static const char *make_temp_dir(void)
{
    static int registered;
    if (!registered)
    {
        atexit(remove_temp_dir_at_exit);
        registered = 1;
    }
    snprintf(g_dir, sizeof(g_dir), "/tmp/aa-archive-test-XXXXXX");
    if (NULL == mkdtemp(g_dir))
    {
        perror("mkdtemp");
        exit(1);
    }
    return g_dir;
}

static void remove_temp_dir(void)
{
    char command[512];
    snprintf(command, sizeof(command), "rm -rf '%s'", g_dir);
    if (0 != system(command))
    {
        fprintf(stderr, "could not remove %s\n", g_dir);
    }
    g_dir[0] = '\0';
}

#endif
