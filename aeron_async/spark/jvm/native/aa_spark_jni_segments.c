/*
 * One recording's segment files mapped one at a time (aa_spark_jni_segments.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "archive/aa_archive_segment.h"
#include "util/aa_error.h"

#include "aa_spark_jni_segments.h"

void aa_spark_segments_unmap(aa_spark_segments_t *s)
{
    if (NULL != s->map)
    {
        munmap((void *)s->map, (size_t)s->segment_length);
        s->map = NULL;
        s->base = -1;
    }
}

const uint8_t *aa_spark_segments_at(aa_spark_segments_t *s, int64_t position, int64_t *available, char *error,
    size_t length)
{
    int64_t base = aa_archive_segment_base_position(s->start_position, position, s->term_length, s->segment_length);
    if (base != s->base)
    {
        aa_spark_segments_unmap(s);
        int fd = aa_archive_segment_open(
            s->dir, s->recording_id, base, s->segment_length, AA_ARCHIVE_SEGMENT_READ_ONLY, 0);
        if (fd < 0)
        {
            snprintf(error, length, "recording %" PRId64 " at position %" PRId64 ": %s", s->recording_id, position,
                aa_errmsg());
            return NULL;
        }
        void *map = mmap(NULL, (size_t)s->segment_length, PROT_READ, MAP_SHARED, fd, 0);
        int saved = errno;
        close(fd);
        if (MAP_FAILED == map)
        {
            snprintf(error, length, "recording %" PRId64 ": mapping its segment file at base %" PRId64 ": %s",
                s->recording_id, base, strerror(saved));
            return NULL;
        }
        s->map = map;
        s->base = base;
    }
    int64_t offset = aa_archive_segment_file_offset(s->start_position, position, s->term_length, s->segment_length);
    *available = s->segment_length - offset;
    return s->map + offset;
}
