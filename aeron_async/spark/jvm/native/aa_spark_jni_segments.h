/*
 * The JVM connector's view of one recording's segment files (docs/spark.md, "The JVM connector"):
 * mapped read-only one at a time, remapped only when a position lies in another segment. Shared by
 * the walk (aa_spark_jni.c) and the dropRepeats probe (aa_spark_jni_repeats.c).
 */
#ifndef AA_SPARK_JNI_SEGMENTS_H
#define AA_SPARK_JNI_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

/* One recording's segment files, mapped one at a time. */
typedef struct
{
    const char *dir;
    int64_t recording_id;
    int64_t start_position;
    int64_t stop_position;
    int32_t term_length;
    int32_t segment_length;
    int64_t base;           /* of the mapped segment, -1 when none */
    const uint8_t *map;
}
aa_spark_segments_t;

/* Unmaps the mapped segment, if any. */
void aa_spark_segments_unmap(aa_spark_segments_t *s);

/* The mapped bytes from position to the end of its segment file (*available of them), or NULL with
 * the reason in error (length bytes). */
const uint8_t *aa_spark_segments_at(aa_spark_segments_t *s, int64_t position, int64_t *available, char *error,
    size_t length);

#endif
