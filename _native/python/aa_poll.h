/*
 * What the two files of the fragment-handler polls share: aa_poll.c (Header, the reused
 * memoryview, the polls) and aa_assembler.c (FragmentAssembler, ControlledFragmentAssembler).
 */
#ifndef AA_POLL_H
#define AA_POLL_H

#include "aa_speedups.h"
#include "util/aa_bytes.h"

#include <string.h>

#define AA_HEADER_LENGTH 32
#define AA_FLAG_BEGIN 0x80
#define AA_FLAG_END 0x40
#define AA_FLAGS_UNFRAGMENTED 0xC0
#define AA_ALIGN_FRAME(x) (((x) + 31) & ~31)
/* data header offsets (reference §1) */
#define AA_OFF_FRAME_LENGTH 0
#define AA_OFF_VERSION 4
#define AA_OFF_FLAGS 5
#define AA_OFF_TYPE 6
#define AA_OFF_TERM_OFFSET 8
#define AA_OFF_SESSION_ID 12
#define AA_OFF_STREAM_ID 16
#define AA_OFF_TERM_ID 20
#define AA_OFF_RESERVED_VALUE 24

/* The Header object: a copy of the frame header, the image's position constants and the Image. */
struct aa_header_object_stct
{
    PyObject_HEAD
    uint8_t frame[AA_HEADER_LENGTH];
    int32_t initial_term_id;
    int32_t position_bits_to_shift;
    int32_t next_term_offset;
    PyObject *image;
};

extern PyTypeObject HeaderType;
extern char aa_poll_empty_data;

aa_header_object_t *aa_poll_header_new(void);

/* Points the reused memoryview at data (see aa_poll.c). */
static inline void aa_poll_view_point(PyObject *view, const uint8_t *data, Py_ssize_t length)
{
    PyMemoryViewObject *mv = (PyMemoryViewObject *)view;
    mv->view.buf = (void *)data;
    mv->view.len = length;
    mv->view.shape[0] = length;
    mv->hash = -1;
}

/* Calls handler(view over data, *header_slot); returns the action (CONTINUE unless controlled),
 * AA_POLL_STOP when it raised, AA_POLL_CLOSED when it closed `sub` (or its client). */
int aa_poll_deliver(
    SubscriptionBaseObject *sub, PyObject *handler, PyObject **view_slot, aa_header_object_t **header_slot,
    const uint8_t *data, Py_ssize_t length, bool controlled);

/* ---- the fragment assemblers (aa_assembler.c) ---- */

typedef struct
{
    int32_t session_id;
    int32_t term_id;
    int32_t next_term_offset;
    bool active;
    uint8_t first[AA_HEADER_LENGTH];
    uint8_t *data;
    size_t length;
    size_t capacity;
}
aa_builder_t;

typedef struct
{
    PyObject_HEAD
    PyObject *delegate;
    bool controlled;
    bool delivering;
    size_t initial_capacity;
    aa_builder_t *builders;
    size_t count;
    size_t capacity;
    size_t last;
    PyObject *view;
    aa_header_object_t *header;
    vectorcallfunc vectorcall;
}
AssemblerObject;

extern PyTypeObject FragmentAssemblerType;
extern PyTypeObject ControlledFragmentAssemblerType;

/* One fragment of a fragmented message (flags not BEGIN|END) with its header h: appended to its
 * session's buffer, the whole message delivered at END. Returns the action. */
int aa_assembler_fragment(
    AssemblerObject *self, SubscriptionBaseObject *sub, const aa_header_object_t *h, const uint8_t *payload,
    size_t length);

#endif
