/* The modes and owners of the driver's and the archive's directories and files (aa_fs.h;
 * docs/security.md, "Files"): one source of the modes, whatever the umask; refused directories;
 * no symbolic link followed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "aa_test.h"
#include "util/aa_error.h"
#include "util/aa_fs.h"

static void make_base(char *dir, size_t length)
{
    snprintf(dir, length, "/tmp/aa-test-fs-access-%d", (int)getpid());
    aa_delete_dir(dir);
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    AA_CHECK_EQ(lstat(path, &st), 0);
    return (unsigned)(st.st_mode & 07777);
}

static void should_give_one_mode_per_access(void)
{
    aa_fs_access_t owner = { 0 };
    aa_fs_access_t reads = { .group = true, .gid = 5, .group_writes = false };
    aa_fs_access_t writes = { .group = true, .gid = 5, .group_writes = true };
    AA_CHECK_EQ(aa_fs_dir_mode(&owner), 0700u);
    AA_CHECK_EQ(aa_fs_dir_mode(NULL), 0700u);
    AA_CHECK_EQ(aa_fs_dir_mode(&reads), (unsigned)(S_ISGID | 0750));
    AA_CHECK_EQ(aa_fs_dir_mode(&writes), (unsigned)(S_ISGID | 0750));
    AA_CHECK_EQ(aa_fs_file_mode(&owner), 0600u);
    AA_CHECK_EQ(aa_fs_file_mode(&reads), 0640u);
    AA_CHECK_EQ(aa_fs_file_mode(&writes), 0660u);
}

static void should_parse_a_group_by_name_or_gid(void)
{
    aa_fs_access_t access;
    char out[64];
    AA_CHECK_EQ(aa_fs_access_parse(&access, "", true, "AERON_DIR_GROUP"), 0);
    AA_CHECK(!access.group);
    AA_CHECK_EQ(aa_fs_access_format(&access, out, sizeof(out)), 0);
    AA_CHECK_EQ(aa_fs_access_parse(&access, "54321", true, "AERON_DIR_GROUP"), 0);
    AA_CHECK(access.group && 54321 == access.gid && access.group_writes);
    aa_fs_access_format(&access, out, sizeof(out));
    AA_CHECK_EQ(strcmp(out, "54321"), 0);
    AA_CHECK_EQ(aa_fs_access_parse(&access, "root", false, "AERON_DIR_GROUP"), 0);
    AA_CHECK(access.group && 0 == access.gid && !access.group_writes);
    AA_CHECK_EQ(aa_fs_access_parse(&access, "no-such-group-here", false, "AERON_DIR_GROUP"), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_CONFIGURATION);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_DIR_GROUP=no-such-group-here: no such group"));
}

static void should_create_with_the_access_modes_whatever_the_umask(void)
{
    char base[128], path[256];
    make_base(base, sizeof(base));
    mode_t old = umask(0);
    aa_fs_access_t owner = { 0 };
    snprintf(path, sizeof(path), "%s/a/b", base);
    AA_CHECK_EQ(aa_fs_prepare_dir(path, &owner, "the test's option"), 0);
    AA_CHECK_EQ(mode_of(base), 0700u);  /* created on the way: the same mode */
    AA_CHECK_EQ(mode_of(path), 0700u);
    snprintf(path, sizeof(path), "%s/a/b/file", base);
    int fd = aa_fs_create_file(path, O_RDWR, &owner);
    AA_CHECK(fd >= 0);
    close(fd);
    AA_CHECK_EQ(mode_of(path), 0600u);
    AA_CHECK_EQ(aa_fs_create_file(path, O_RDWR, &owner), -1);  /* never one that exists */
    AA_CHECK_EQ(aa_errcode(), EEXIST);
    /* a mapped file: the same mode, every block allocated (docs/security.md, Disks), never one that exists */
    snprintf(path, sizeof(path), "%s/a/b/mapped", base);
    aa_mapped_file_t mapped = { 0 };
    AA_CHECK_EQ(aa_map_new_file(&mapped, path, 65536, "test file", "a smaller one", &owner), 0);
    AA_CHECK(mapped.allocated);
    AA_CHECK_EQ(mode_of(path), 0600u);
    struct stat st;
    AA_CHECK_EQ(stat(path, &st), 0);
    AA_CHECK((uint64_t)st.st_blocks * 512 >= 65536u);
    AA_CHECK_EQ(aa_unmap(&mapped), 0);
    AA_CHECK_EQ(aa_map_new_file(&mapped, path, 65536, "test file", "a smaller one", &owner), -1);
    AA_CHECK_EQ(aa_errcode(), EEXIST);

    aa_fs_access_t shared = { .group = true, .gid = (uint32_t)getegid(), .group_writes = true };
    snprintf(path, sizeof(path), "%s/a", base);
    AA_CHECK_EQ(aa_fs_prepare_dir(path, &shared, "the test's option"), 0);  /* an existing one narrowed or widened */
    AA_CHECK_EQ(mode_of(path), (unsigned)(S_ISGID | 0750));
    snprintf(path, sizeof(path), "%s/a/shared", base);
    fd = aa_fs_create_file(path, O_RDWR, &shared);
    AA_CHECK(fd >= 0);
    close(fd);
    AA_CHECK_EQ(mode_of(path), 0660u);
    aa_fs_access_t found;
    snprintf(path, sizeof(path), "%s/a", base);
    AA_CHECK_EQ(aa_fs_dir_access(path, false, &found), 0);
    AA_CHECK(found.group && found.gid == (uint32_t)getegid() && !found.group_writes);
    AA_CHECK_EQ(aa_fs_dir_access(base, false, &found), 0);
    AA_CHECK(!found.group);
    umask(old);
    AA_CHECK_EQ(aa_delete_dir(base), 0);
}

static void should_refuse_a_directory_others_may_write_or_own(void)
{
    char base[128];
    make_base(base, sizeof(base));
    AA_CHECK_EQ(mkdir(base, 0700), 0);
    AA_CHECK_EQ(chmod(base, 0777), 0);
    AA_CHECK_EQ(aa_fs_prepare_dir(base, NULL, "aeron.dir (AERON_DIR)"), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_CONFIGURATION);
    AA_CHECK(NULL != strstr(aa_errmsg(), "mode 0777 lets its group or others write it"));
    AA_CHECK(NULL != strstr(aa_errmsg(), "choose another aeron.dir (AERON_DIR)"));
    AA_CHECK_EQ(mode_of(base), 0777u);  /* left as it is */
    if (0 == geteuid())
    {
        AA_CHECK_EQ(chown(base, 65534, 65534), 0);
        AA_CHECK_EQ(chmod(base, 0700), 0);
        AA_CHECK_EQ(aa_fs_prepare_dir(base, NULL, "aeron.dir (AERON_DIR)"), -1);
        AA_CHECK(NULL != strstr(aa_errmsg(), "(uid 65534), not by this process's user"));
    }
    AA_CHECK_EQ(aa_delete_dir(base), 0);
}

static void should_follow_no_symbolic_link(void)
{
    char base[128], link_path[256], target[256];
    make_base(base, sizeof(base));
    AA_CHECK_EQ(mkdir(base, 0700), 0);
    snprintf(target, sizeof(target), "%s/target", base);
    AA_CHECK_EQ(mkdir(target, 0700), 0);
    snprintf(link_path, sizeof(link_path), "%s/link", base);
    AA_CHECK_EQ(symlink(target, link_path), 0);
    AA_CHECK_EQ(aa_fs_prepare_dir(link_path, NULL, "the test's option"), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "it is a symbolic link"));

    /* a file to be created or opened where a link was planted: neither goes through it */
    snprintf(target, sizeof(target), "%s/target/file", base);
    snprintf(link_path, sizeof(link_path), "%s/planted", base);
    AA_CHECK_EQ(symlink(target, link_path), 0);
    AA_CHECK_EQ(aa_fs_create_file(link_path, O_RDWR, NULL), -1);
    AA_CHECK_EQ(aa_fs_open_file(link_path, O_RDWR | O_CREAT, NULL), -1);
    AA_CHECK_EQ(aa_errcode(), ELOOP);
    AA_CHECK(!aa_file_exists(target));
    aa_mapped_file_t mapped = { 0 };
    AA_CHECK_EQ(aa_map_new_file(&mapped, link_path, 4096, "test file", "remove the link", NULL), -1);
    AA_CHECK(!aa_file_exists(target));
    AA_CHECK_EQ(aa_delete_dir(base), 0);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    AA_CHECK(fd >= 0);
    AA_CHECK_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    AA_CHECK_EQ(chmod(path, mode), 0);
}

/* docs/security.md, "Files of secrets": one rule for every file of secrets */
static void should_read_a_file_of_secrets_only_when_its_owner_alone_may(void)
{
    char base[128], path[256], link_path[256], line[16];
    uint8_t out[64];
    make_base(base, sizeof(base));
    AA_CHECK_EQ(mkdir(base, 0700), 0);
    snprintf(path, sizeof(path), "%s/secret", base);
    snprintf(link_path, sizeof(link_path), "%s/link", base);

    write_file(path, "s3cret\r\nsecond line\n", 0400);
    AA_CHECK_EQ(aa_secret_file_read("THE_OPTION", path, out, sizeof(out)), 20);
    AA_CHECK_EQ(memcmp(out, "s3cret\r\nsecond line\n", 20), 0);
    AA_CHECK_EQ(aa_secret_file_first_line("THE_OPTION", path, line, sizeof(line)), 0);
    AA_CHECK(0 == strcmp(line, "s3cret"));
    /* a symbolic link is followed (Kubernetes mounts Secrets so); the file it reaches is checked */
    AA_CHECK_EQ(symlink(path, link_path), 0);
    AA_CHECK_EQ(aa_secret_file_first_line("THE_OPTION", link_path, line, sizeof(line)), 0);

    AA_CHECK_EQ(chmod(path, 0640), 0);
    AA_CHECK_EQ(aa_secret_file_read("THE_OPTION", link_path, out, sizeof(out)), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_CONFIGURATION);
    AA_CHECK(NULL != strstr(aa_errmsg(), "THE_OPTION: '") && NULL != strstr(aa_errmsg(), "has mode 0640") &&
        NULL != strstr(aa_errmsg(), "chmod 600"));
    AA_CHECK_EQ(chmod(path, 0600), 0);
    if (0 == geteuid())
    {
        AA_CHECK_EQ(chown(path, 65534, 65534), 0);
        AA_CHECK_EQ(aa_secret_file_read("THE_OPTION", path, out, sizeof(out)), -1);
        AA_CHECK(NULL != strstr(aa_errmsg(), "belongs to uid 65534") && NULL != strstr(aa_errmsg(), "chown 0"));
        AA_CHECK_EQ(chown(path, 0, 0), 0);
    }
    AA_CHECK_EQ(aa_secret_file_read("THE_OPTION", path, out, 8), -1);   /* longer than allowed */
    AA_CHECK(NULL != strstr(aa_errmsg(), "holds more than the 8 bytes allowed"));
    AA_CHECK_EQ(aa_secret_file_first_line("THE_OPTION", path, line, 4), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "is 6 bytes; at most 3 are allowed"));
    write_file(path, "", 0600);
    AA_CHECK_EQ(aa_secret_file_read("THE_OPTION", path, out, sizeof(out)), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "is empty"));
    write_file(path, "\nsecret on line two\n", 0600);
    AA_CHECK_EQ(aa_secret_file_first_line("THE_OPTION", path, line, sizeof(line)), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "has an empty first line"));
    AA_CHECK_EQ(aa_secret_file_read("THE_OPTION", "/dev/null", out, sizeof(out)), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "is not a regular file"));
    AA_CHECK_EQ(aa_secret_file_read("THE_OPTION", "/nonexistent/secret", out, sizeof(out)), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "THE_OPTION: cannot open '/nonexistent/secret'"));
    AA_CHECK_EQ(aa_delete_dir(base), 0);
}

int main(void)
{
    AA_RUN(should_give_one_mode_per_access);
    AA_RUN(should_parse_a_group_by_name_or_gid);
    AA_RUN(should_create_with_the_access_modes_whatever_the_umask);
    AA_RUN(should_refuse_a_directory_others_may_write_or_own);
    AA_RUN(should_follow_no_symbolic_link);
    AA_RUN(should_read_a_file_of_secrets_only_when_its_owner_alone_may);
    return 0;
}
