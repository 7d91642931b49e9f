/* Process liveness (aa_process.h) and the directory lock drivers take turns through (aa_fs.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "aa_test.h"
#include "util/aa_fs.h"
#include "util/aa_process.h"

static void should_find_this_process_alive(void)
{
    uint64_t ns = aa_process_pid_namespace();
    AA_CHECK(ns != 0);
    AA_CHECK_EQ(aa_process_liveness(getpid(), ns), AA_PROCESS_ALIVE);
}

static void should_find_an_exited_process_dead_reaped_or_not(void)
{
    uint64_t ns = aa_process_pid_namespace();
    pid_t child = fork();
    if (0 == child)
    {
        _exit(0);
    }
    AA_CHECK(child > 0);
    siginfo_t info;
    AA_CHECK_EQ(waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT), 0);
    AA_CHECK_EQ(aa_process_liveness(child, ns), AA_PROCESS_DEAD); /* a zombie: exited, not reaped */
    AA_CHECK_EQ(waitpid(child, NULL, 0), child);
    AA_CHECK_EQ(aa_process_liveness(child, ns), AA_PROCESS_DEAD);
}

static void should_not_judge_a_pid_it_cannot_check(void)
{
    uint64_t ns = aa_process_pid_namespace();
    AA_CHECK_EQ(aa_process_liveness(getpid(), 0), AA_PROCESS_UNKNOWN);      /* namespace not recorded */
    AA_CHECK_EQ(aa_process_liveness(getpid(), ns + 1), AA_PROCESS_UNKNOWN); /* another namespace */
    AA_CHECK_EQ(aa_process_liveness(0, ns), AA_PROCESS_UNKNOWN);            /* no pid recorded */
    AA_CHECK_EQ(aa_process_liveness(-5, ns), AA_PROCESS_UNKNOWN);
}

static void make_test_dir(char *dir, size_t length)
{
    snprintf(dir, length, "/tmp/aa-test-lock-%d", (int)getpid());
    aa_delete_dir(dir);
}

static int try_lock(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    AA_CHECK(fd >= 0);
    int rc = flock(fd, LOCK_EX | LOCK_NB);
    int err = errno;
    close(fd);
    return rc < 0 ? err : 0;
}

static void should_lock_exclusively_between_descriptors(void)
{
    char dir[128], path[256];
    make_test_dir(dir, sizeof(dir));
    int fd = aa_lock_file_in_dir(dir, "driver.lock", NULL, "the test directory"); /* creates the directory and the file */
    AA_CHECK(fd >= 0);
    snprintf(path, sizeof(path), "%s/driver.lock", dir);
    AA_CHECK_EQ(try_lock(path), EWOULDBLOCK);
    aa_unlock_fd(fd);
    AA_CHECK_EQ(try_lock(path), 0);
    AA_CHECK_EQ(aa_lock_fd(fd), 0);
    AA_CHECK_EQ(try_lock(path), EWOULDBLOCK);
    close(fd);
    AA_CHECK_EQ(aa_delete_dir(dir), 0);
}

typedef struct
{
    const char *dir;
    int fd;
}
locker_t;

static void *lock_in_thread(void *arg)
{
    locker_t *locker = arg;
    locker->fd = aa_lock_file_in_dir(locker->dir, "driver.lock", NULL, "the test directory");
    return NULL;
}

static void should_lock_the_new_file_when_the_directory_is_deleted_under_the_lock(void)
{
    char dir[128], path[256];
    make_test_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/driver.lock", dir);
    int holder = aa_lock_file_in_dir(dir, "driver.lock", NULL, "the test directory");
    AA_CHECK(holder >= 0);
    locker_t locker = { dir, -1 };
    pthread_t thread;
    AA_CHECK_EQ(pthread_create(&thread, NULL, lock_in_thread, &locker), 0);
    usleep(50 * 1000); /* the thread opens the old file and waits on its lock */
    AA_CHECK_EQ(aa_delete_dir(dir), 0);
    close(holder);
    AA_CHECK_EQ(pthread_join(thread, NULL), 0);
    AA_CHECK(locker.fd >= 0);
    struct stat locked, current;
    AA_CHECK_EQ(fstat(locker.fd, &locked), 0);
    AA_CHECK_EQ(stat(path, &current), 0);
    AA_CHECK_EQ(locked.st_ino, current.st_ino);
    AA_CHECK_EQ(try_lock(path), EWOULDBLOCK);
    close(locker.fd);
    AA_CHECK_EQ(aa_delete_dir(dir), 0);
}

static void should_delete_all_but_the_kept_entry(void)
{
    char dir[128], path[256];
    make_test_dir(dir, sizeof(dir));
    int fd = aa_lock_file_in_dir(dir, "driver.lock", NULL, "the test directory");
    AA_CHECK(fd >= 0);
    snprintf(path, sizeof(path), "%s/publications/sub", dir);
    AA_CHECK_EQ(aa_fs_prepare_dir(path, NULL, "the test directory"), 0);
    snprintf(path, sizeof(path), "%s/publications/sub/1.logbuffer", dir);
    close(open(path, O_CREAT | O_WRONLY, 0644));
    snprintf(path, sizeof(path), "%s/cnc.dat", dir);
    close(open(path, O_CREAT | O_WRONLY, 0644));
    AA_CHECK_EQ(aa_delete_dir_contents(dir, "driver.lock"), 0);
    AA_CHECK(!aa_file_exists(path));
    snprintf(path, sizeof(path), "%s/publications", dir);
    AA_CHECK(!aa_file_exists(path));
    snprintf(path, sizeof(path), "%s/driver.lock", dir);
    AA_CHECK(aa_file_exists(path));
    AA_CHECK_EQ(try_lock(path), EWOULDBLOCK); /* still the locked file */
    close(fd);
    AA_CHECK_EQ(aa_delete_dir(dir), 0);
}

int main(void)
{
    AA_RUN(should_find_this_process_alive);
    AA_RUN(should_find_an_exited_process_dead_reaped_or_not);
    AA_RUN(should_not_judge_a_pid_it_cannot_check);
    AA_RUN(should_lock_exclusively_between_descriptors);
    AA_RUN(should_lock_the_new_file_when_the_directory_is_deleted_under_the_lock);
    AA_RUN(should_delete_all_but_the_kept_entry);
    return 0;
}
