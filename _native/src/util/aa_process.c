#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "util/aa_process.h"

uint64_t aa_process_pid_namespace(void)
{
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) < 0)
    {
        return 0;
    }
    return (uint64_t)st.st_ino;
}

/* Whether /proc shows this pid namespace (a container may mount another's). */
static int aa_process_proc_is_ours(void)
{
    char link[32];
    ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);
    if (n <= 0)
    {
        return 0;
    }
    link[n] = '\0';
    return strtol(link, NULL, 10) == (long)getpid();
}

/* A process that has exited but whose parent has not reaped it yet: state Z with no thread left
 * but its leader (a leader that called pthread_exit also shows Z while its other threads run). */
static int aa_process_is_zombie(pid_t pid)
{
    if (!aa_process_proc_is_ours())
    {
        return 0;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (NULL == f)
    {
        return 0;
    }
    char line[256];
    int zombie = 0;
    long threads = -1;
    while (NULL != fgets(line, sizeof(line), f))
    {
        if (0 == strncmp(line, "State:", 6))
        {
            const char *s = line + 6;
            while (' ' == *s || '\t' == *s)
            {
                s++;
            }
            zombie = 'Z' == *s || 'X' == *s;
        }
        else if (0 == strncmp(line, "Threads:", 8))
        {
            threads = strtol(line + 8, NULL, 10);
        }
    }
    fclose(f);
    return zombie && threads <= 1;
}

int aa_process_liveness(int64_t pid, uint64_t pid_namespace)
{
    if (pid <= 0 || pid > (int64_t)INT32_MAX || 0 == pid_namespace || pid_namespace != aa_process_pid_namespace())
    {
        return AA_PROCESS_UNKNOWN;
    }
    if (kill((pid_t)pid, 0) < 0 && ESRCH == errno)
    {
        return AA_PROCESS_DEAD;
    }
    /* kill succeeds (or fails with EPERM: another user's process) for a zombie too */
    return aa_process_is_zombie((pid_t)pid) ? AA_PROCESS_DEAD : AA_PROCESS_ALIVE;
}
