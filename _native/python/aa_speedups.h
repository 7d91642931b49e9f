/*
 * What the two source files of aeron_async._speedups share: aa_speedups.c (Message, offer,
 * poll_messages, the module) and aa_poll.c (Header, FragmentAssembler and the fragment-handler
 * polls).
 */
#ifndef AA_SPEEDUPS_H
#define AA_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "aa_fastpath.h"

/* The core's message-path table, set by bind(). */
extern const aa_fastpath_api_t *aa_speedups_api;

typedef struct aa_header_object_stct aa_header_object_t;

typedef struct
{
    PyObject_HEAD
    PyObject *ptr;
    aa_subscription_t *native;
    uint8_t *buffer;
    size_t buffer_capacity;
    aa_message_t *messages;
    int32_t messages_capacity;
    size_t required;
    /* the fragment polls' reused memoryview and Header, taken while a poll runs (aa_poll.c) */
    PyObject *poll_view;
    aa_header_object_t *poll_header;
}
SubscriptionBaseObject;

/* Dispatches pending image events; raises (returns -1) when the subscription is closed. */
int aa_speedups_subscription_ready(SubscriptionBaseObject *self);
/* After an empty poll: raises (returns -1) why a subscription closed under its owner. */
int aa_speedups_raise_if_dead(SubscriptionBaseObject *self);

/* aa_poll.c */
int aa_poll_module_init(PyObject *module);
void aa_poll_subscription_clear(SubscriptionBaseObject *self);
PyObject *aa_poll_subscription_poll(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *aa_poll_subscription_controlled_poll(
    PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *aa_poll_subscription_block_poll(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *aa_poll_subscription_image_poll(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *aa_poll_subscription_image_block_poll(
    PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

#define AA_POLL_METHODS \
    { "poll", (PyCFunction)(void (*)(void))aa_poll_subscription_poll, METH_FASTCALL | METH_KEYWORDS, \
      "poll($self, /, handler, fragment_limit=10)\n--\n\n" \
      "Call handler(data, header) for up to fragment_limit fragments of every image; returns how many. " \
      "data is a read-only memoryview into the log and header the fragment's Header: both are valid only " \
      "during the call (see Subscription.poll)." }, \
    { "controlled_poll", (PyCFunction)(void (*)(void))aa_poll_subscription_controlled_poll, \
      METH_FASTCALL | METH_KEYWORDS, \
      "controlled_poll($self, /, handler, fragment_limit=10)\n--\n\n" \
      "As poll, with a handler that returns a ControlledPollAction (ABORT, BREAK, COMMIT, CONTINUE)." }, \
    { "block_poll", (PyCFunction)(void (*)(void))aa_poll_subscription_block_poll, METH_FASTCALL | METH_KEYWORDS, \
      "block_poll($self, /, handler, block_length_limit)\n--\n\n" \
      "For every image, hand handler(buffer, offset, length, session_id, term_id) the run of whole frames " \
      "from its position (at most block_length_limit bytes); returns the bytes consumed." }, \
    { "_image_poll", (PyCFunction)(void (*)(void))aa_poll_subscription_image_poll, METH_FASTCALL | METH_KEYWORDS, \
      "_image_poll($self, /, image_address, handler, limit_position, fragment_limit, controlled)\n--\n\n" \
      "The polls of one image of this subscription (Image.poll and friends)." }, \
    { "_image_block_poll", (PyCFunction)(void (*)(void))aa_poll_subscription_image_block_poll, \
      METH_FASTCALL | METH_KEYWORDS, \
      "_image_block_poll($self, /, image_address, handler, block_length_limit)\n--\n\nImage.block_poll." }

#endif
