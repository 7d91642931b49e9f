/*
 * Aeron's fragment-handler polls for Python, in C: the loop over fragments is the core's
 * (src/client/aa_image_poll.c, through the fast-path table), and each fragment reaches the Python
 * handler as (data, header) with no object built per fragment:
 *
 *  - data is one read-only memoryview, pointed at each fragment's payload in turn. It is reused
 *    only while nobody else holds it: a handler that keeps it (or releases it) gets it released
 *    after the call, so a kept view raises instead of reading log memory that is recycled; the
 *    next fragment gets a new view. Views derived from it (slices, casts, numpy arrays) share its
 *    memory and are not released: copy what must outlive the call.
 *  - header is a Header (a copy of the 32-byte frame header, the image's position constants and
 *    the Image), reused likewise: one the handler keeps keeps its values.
 *
 * FragmentAssembler and ControlledFragmentAssembler (aa_assembler.c) reassemble messages per
 * session; handed to a poll, they run inside the loop, without a call through Python per fragment.
 *
 * A handler that raises: its fragment counts as consumed, the poll stops, stores the position
 * after that fragment and re-raises. A handler that closes the subscription or its client stops the
 * poll at once.
 */
#include "aa_poll.h"

#include <string.h>

static PyObject *str_release;
static PyObject *str_images;
char aa_poll_empty_data;

/* ---- Header ---- */

aa_header_object_t *aa_poll_header_new(void)
{
    aa_header_object_t *h = PyObject_New(aa_header_object_t, &HeaderType);
    if (NULL != h)
    {
        memset(h->frame, 0, sizeof(h->frame));
        h->initial_term_id = 0;
        h->position_bits_to_shift = 0;
        h->next_term_offset = 0;
        h->image = NULL;
    }
    return h;
}

static PyObject *Header_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)type;
    if (PyTuple_GET_SIZE(args) > 0 || (NULL != kwargs && PyDict_GET_SIZE(kwargs) > 0))
    {
        PyErr_SetString(PyExc_TypeError, "Header() takes no arguments: polls hand handlers their fragments' headers");
        return NULL;
    }
    return (PyObject *)aa_poll_header_new();
}

static void Header_dealloc(aa_header_object_t *self)
{
    Py_CLEAR(self->image);
    PyObject_Free(self);
}

enum
{
    HEADER_FRAME_LENGTH, HEADER_VERSION, HEADER_FLAGS, HEADER_TYPE, HEADER_TERM_OFFSET, HEADER_SESSION_ID,
    HEADER_STREAM_ID, HEADER_TERM_ID, HEADER_RESERVED_VALUE, HEADER_POSITION, HEADER_INITIAL_TERM_ID,
    HEADER_POSITION_BITS_TO_SHIFT, HEADER_NEXT_TERM_OFFSET,
};

static int64_t header_position(const aa_header_object_t *h)
{
    int64_t term_count = (int64_t)(int32_t)((uint32_t)aa_get_i32(h->frame + AA_OFF_TERM_ID) - (uint32_t)h->initial_term_id);
    return term_count * ((int64_t)1 << h->position_bits_to_shift) + h->next_term_offset;
}

static PyObject *Header_get(aa_header_object_t *self, void *closure)
{
    switch ((int)(intptr_t)closure)
    {
        case HEADER_FRAME_LENGTH: return PyLong_FromLong(aa_get_i32(self->frame + AA_OFF_FRAME_LENGTH));
        case HEADER_VERSION: return PyLong_FromLong(self->frame[AA_OFF_VERSION]);
        case HEADER_FLAGS: return PyLong_FromLong(self->frame[AA_OFF_FLAGS]);
        case HEADER_TYPE:
        {
            uint16_t type;
            memcpy(&type, self->frame + AA_OFF_TYPE, sizeof(type));
            return PyLong_FromLong(type);
        }
        case HEADER_TERM_OFFSET: return PyLong_FromLong(aa_get_i32(self->frame + AA_OFF_TERM_OFFSET));
        case HEADER_SESSION_ID: return PyLong_FromLong(aa_get_i32(self->frame + AA_OFF_SESSION_ID));
        case HEADER_STREAM_ID: return PyLong_FromLong(aa_get_i32(self->frame + AA_OFF_STREAM_ID));
        case HEADER_TERM_ID: return PyLong_FromLong(aa_get_i32(self->frame + AA_OFF_TERM_ID));
        case HEADER_RESERVED_VALUE:
        {
            int64_t value;
            memcpy(&value, self->frame + AA_OFF_RESERVED_VALUE, sizeof(value));
            return PyLong_FromLongLong(value);
        }
        case HEADER_POSITION: return PyLong_FromLongLong(header_position(self));
        case HEADER_INITIAL_TERM_ID: return PyLong_FromLong(self->initial_term_id);
        case HEADER_POSITION_BITS_TO_SHIFT: return PyLong_FromLong(self->position_bits_to_shift);
        case HEADER_NEXT_TERM_OFFSET: return PyLong_FromLong(self->next_term_offset);
        default: Py_RETURN_NONE;
    }
}

static PyObject *Header_get_image(aa_header_object_t *self, void *closure)
{
    (void)closure;
    return Py_NewRef(NULL != self->image ? self->image : Py_None);
}

static PyObject *Header_repr(aa_header_object_t *self)
{
    return PyUnicode_FromFormat("<Header session=%d stream=%d term=%d@%d length=%d flags=0x%02x position=%lld>",
        (int)aa_get_i32(self->frame + AA_OFF_SESSION_ID), (int)aa_get_i32(self->frame + AA_OFF_STREAM_ID),
        (int)aa_get_i32(self->frame + AA_OFF_TERM_ID), (int)aa_get_i32(self->frame + AA_OFF_TERM_OFFSET),
        (int)aa_get_i32(self->frame + AA_OFF_FRAME_LENGTH), (unsigned)self->frame[AA_OFF_FLAGS],
        (long long)header_position(self));
}

#define HEADER_FIELD(name, id, doc) { name, (getter)Header_get, NULL, doc, (void *)(intptr_t)(id) }

static PyGetSetDef Header_getset[] = {
    HEADER_FIELD("frame_length", HEADER_FRAME_LENGTH,
        "the frame's length, header included (of a reassembled message: 32 + the message's length)"),
    HEADER_FIELD("version", HEADER_VERSION, "the frame header's version"),
    HEADER_FIELD("flags", HEADER_FLAGS, "BEGIN (0x80), END (0x40) and EOS (0x20) flags"),
    HEADER_FIELD("type", HEADER_TYPE, "the frame type (1: DATA)"),
    HEADER_FIELD("term_offset", HEADER_TERM_OFFSET,
        "the frame's offset in its term (of a message: its first fragment's)"),
    HEADER_FIELD("session_id", HEADER_SESSION_ID, "the publisher's session id"),
    HEADER_FIELD("stream_id", HEADER_STREAM_ID, "the stream id"),
    HEADER_FIELD("term_id", HEADER_TERM_ID, "the frame's term id"),
    HEADER_FIELD("reserved_value", HEADER_RESERVED_VALUE, "the reserved value the publisher set"),
    HEADER_FIELD("position", HEADER_POSITION,
        "the stream position just after the fragment (of a message: after its last fragment)"),
    HEADER_FIELD("initial_term_id", HEADER_INITIAL_TERM_ID, "the image's initial term id"),
    HEADER_FIELD("position_bits_to_shift", HEADER_POSITION_BITS_TO_SHIFT, "log2 of the term length"),
    HEADER_FIELD("next_term_offset", HEADER_NEXT_TERM_OFFSET, "the term offset just after the fragment (aligned)"),
    { "image", (getter)Header_get_image, NULL, "the Image the fragment came from (None if it is gone)", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject HeaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "aeron_async.Header",
    .tp_basicsize = sizeof(aa_header_object_t),
    .tp_dealloc = (destructor)Header_dealloc,
    .tp_repr = (reprfunc)Header_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The DATA frame header of the fragment (or reassembled message) being handled, as Aeron's Header.\n\n"
        "A poll reuses one Header for each fragment unless the handler keeps a reference to it: one kept keeps "
        "its values.",
    .tp_getset = Header_getset,
    .tp_new = Header_new,
};

/* ---- the reused memoryview ---- */

static PyObject *view_new(void)
{
    return PyMemoryView_FromMemory(&aa_poll_empty_data, 0, PyBUF_READ);
}

/* Nobody but us holds it, nothing was exported from it, it was not released: it may be re-pointed. */
static inline bool view_is_private(PyObject *view)
{
    PyMemoryViewObject *mv = (PyMemoryViewObject *)view;
    return 1 == Py_REFCNT(view) && 0 == mv->exports && 1 == mv->mbuf->exports &&
        0 == (mv->flags & _Py_MEMORYVIEW_RELEASED);
}

/* A view the handler kept: release it (so it cannot read the log later) and let it go. */
static void view_let_go(PyObject **slot)
{
    PyObject *view = *slot;
    PyMemoryViewObject *mv = (PyMemoryViewObject *)view;
    *slot = NULL;
    if (Py_REFCNT(view) > 1 && 0 == mv->exports && 0 == (mv->flags & _Py_MEMORYVIEW_RELEASED))
    {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyObject *r = PyObject_CallMethodNoArgs(view, str_release);
        if (NULL == r)
        {
            PyErr_Clear();
        }
        Py_XDECREF(r);
        PyErr_Restore(type, value, traceback);
    }
    Py_DECREF(view);
}

/* A Header the handler kept keeps its values (and Image); the next fragment gets a new one. */
static inline void header_settle(aa_header_object_t **slot)
{
    if (1 != Py_REFCNT(*slot))
    {
        aa_header_object_t *h = *slot;
        *slot = NULL;
        Py_DECREF(h);
    }
}

static int action_of(PyObject *result)
{
    if (PyLong_Check(result) && !PyBool_Check(result))
    {
        long value = PyLong_AsLong(result);
        if (value >= AA_POLL_ABORT && value <= AA_POLL_CONTINUE)
        {
            return (int)value;
        }
        PyErr_Clear();
    }
    PyErr_Format(PyExc_TypeError,
        "a controlled handler must return ControlledPollAction.ABORT, BREAK, COMMIT or CONTINUE, not %R", result);
    return AA_POLL_STOP;
}

/* Calls handler(view over data, *header_slot); returns the action (CONTINUE unless controlled),
 * AA_POLL_STOP when it raised, AA_POLL_CLOSED when it closed `sub` (or its client). */
int aa_poll_deliver(
    SubscriptionBaseObject *sub, PyObject *handler, PyObject **view_slot, aa_header_object_t **header_slot,
    const uint8_t *data, Py_ssize_t length, bool controlled)
{
    PyObject *view = *view_slot;
    if (NULL == view)
    {
        if (NULL == (view = view_new()))
        {
            return AA_POLL_STOP;
        }
        *view_slot = view;
    }
    aa_poll_view_point(view, data, length);
    PyObject *stack[3] = { NULL, view, (PyObject *)*header_slot };
    PyObject *result = PyObject_Vectorcall(handler, stack + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    if (!view_is_private(view))
    {
        view_let_go(view_slot);
    }
    header_settle(header_slot);
    int action = AA_POLL_CONTINUE;
    if (NULL == result)
    {
        action = AA_POLL_STOP;
    }
    else
    {
        if (controlled)
        {
            action = action_of(result);
        }
        Py_DECREF(result);
    }
    if (NULL != sub && NULL == sub->native)
    {
        return AA_POLL_CLOSED;
    }
    return action;
}

/* ---- the polls ---- */

typedef struct
{
    SubscriptionBaseObject *sub;
    PyObject *handler;
    AssemblerObject *assembler;
    PyObject *images;
    aa_image_t *image;
    PyObject *image_object;
    PyObject *view;
    aa_header_object_t *header;
    bool controlled;
}
poll_context_t;

static int poll_start(poll_context_t *ctx, SubscriptionBaseObject *sub, PyObject *handler, bool controlled)
{
    if (!PyCallable_Check(handler))
    {
        PyErr_Format(PyExc_TypeError, "handler must be callable as handler(data, header), not %.100s",
            Py_TYPE(handler)->tp_name);
        return -1;
    }
    PyTypeObject *type = Py_TYPE(handler);
    if (controlled && type == &FragmentAssemblerType)
    {
        PyErr_SetString(PyExc_TypeError,
            "controlled_poll needs a ControlledFragmentAssembler (whose handler returns a ControlledPollAction), "
            "not a FragmentAssembler");
        return -1;
    }
    if (!controlled && type == &ControlledFragmentAssemblerType)
    {
        PyErr_SetString(PyExc_TypeError,
            "a ControlledFragmentAssembler belongs to controlled_poll; give poll a FragmentAssembler");
        return -1;
    }
    ctx->sub = sub;
    ctx->handler = handler;
    ctx->assembler = type == &FragmentAssemblerType || type == &ControlledFragmentAssemblerType ?
        (AssemblerObject *)handler : NULL;
    ctx->images = PyObject_GetAttr((PyObject *)sub, str_images);
    if (NULL == ctx->images)
    {
        PyErr_Clear();
    }
    else if (!PyDict_Check(ctx->images))
    {
        Py_CLEAR(ctx->images);
    }
    ctx->image = NULL;
    ctx->image_object = NULL;
    ctx->view = sub->poll_view;
    sub->poll_view = NULL;
    ctx->header = sub->poll_header;
    sub->poll_header = NULL;
    ctx->controlled = controlled;
    return 0;
}

static void poll_finish(poll_context_t *ctx)
{
    SubscriptionBaseObject *sub = ctx->sub;
    if (NULL != ctx->view)
    {
        aa_poll_view_point(ctx->view, (const uint8_t *)&aa_poll_empty_data, 0);
        if (NULL == sub->poll_view)
        {
            sub->poll_view = ctx->view;
        }
        else
        {
            Py_DECREF(ctx->view);
        }
    }
    if (NULL != ctx->header)
    {
        Py_CLEAR(ctx->header->image);
        if (NULL == sub->poll_header)
        {
            sub->poll_header = ctx->header;
        }
        else
        {
            Py_DECREF(ctx->header);
        }
    }
    Py_CLEAR(ctx->image_object);
    Py_CLEAR(ctx->images);
}

static int on_fragment(void *clientd, const aa_poll_fragment_t *fragment)
{
    poll_context_t *ctx = clientd;
    if (fragment->image != ctx->image)
    {
        PyObject *image = NULL;
        if (NULL != ctx->images)
        {
            PyObject *key = PyLong_FromVoidPtr(fragment->image);
            if (NULL == key)
            {
                return AA_POLL_STOP;
            }
            image = PyDict_GetItemWithError(ctx->images, key);
            Py_DECREF(key);
            if (NULL == image && PyErr_Occurred())
            {
                return AA_POLL_STOP;
            }
        }
        Py_XSETREF(ctx->image_object, Py_XNewRef(image));
        ctx->image = fragment->image;
    }
    aa_header_object_t *h = ctx->header;
    if (NULL == h && NULL == (h = ctx->header = aa_poll_header_new()))
    {
        return AA_POLL_STOP;
    }
    memcpy(h->frame, fragment->frame, AA_HEADER_LENGTH);
    h->initial_term_id = fragment->initial_term_id;
    h->position_bits_to_shift = fragment->position_bits_to_shift;
    h->next_term_offset = AA_ALIGN_FRAME(aa_get_i32(fragment->frame + AA_OFF_TERM_OFFSET) + fragment->frame_length);
    if (h->image != ctx->image_object)
    {
        Py_XSETREF(h->image, Py_XNewRef(ctx->image_object));
    }
    const uint8_t *payload = fragment->frame + AA_HEADER_LENGTH;
    Py_ssize_t length = fragment->frame_length - AA_HEADER_LENGTH;
    AssemblerObject *assembler = ctx->assembler;
    if (NULL == assembler)
    {
        return aa_poll_deliver(ctx->sub, ctx->handler, &ctx->view, &ctx->header, payload, length, ctx->controlled);
    }
    if (AA_FLAGS_UNFRAGMENTED == (h->frame[AA_OFF_FLAGS] & AA_FLAGS_UNFRAGMENTED))
    {
        return aa_poll_deliver(
            ctx->sub, assembler->delegate, &ctx->view, &ctx->header, payload, length, assembler->controlled);
    }
    return aa_assembler_fragment(assembler, ctx->sub, h, payload, (size_t)length);
}

/* Parses up to `count` arguments named `names`, the first `required` of them required. */
static int parse_args(
    const char *method, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *const *names,
    int count, int required, PyObject **out)
{
    if (nargs > count)
    {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", method, count, nargs);
        return -1;
    }
    for (int i = 0; i < count; i++)
    {
        out[i] = i < nargs ? args[i] : NULL;
    }
    if (NULL != kwnames)
    {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++)
        {
            PyObject *name = PyTuple_GET_ITEM(kwnames, k);
            int slot = -1;
            for (int i = 0; i < count && slot < 0; i++)
            {
                if (0 == PyUnicode_CompareWithASCIIString(name, names[i]))
                {
                    slot = i;
                }
            }
            if (slot < 0 || NULL != out[slot])
            {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected or repeated keyword argument '%U'", method, name);
                return -1;
            }
            out[slot] = args[nargs + k];
        }
    }
    for (int i = 0; i < required; i++)
    {
        if (NULL == out[i])
        {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", method, names[i]);
            return -1;
        }
    }
    return 0;
}

static int parse_int32(PyObject *value, int32_t fallback, const char *name, int32_t *out)
{
    if (NULL == value)
    {
        *out = fallback;
        return 0;
    }
    long long v = PyLong_AsLongLong(value);
    if (-1 == v && PyErr_Occurred())
    {
        if (PyErr_ExceptionMatches(PyExc_TypeError))
        {
            PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", name, Py_TYPE(value)->tp_name);
        }
        return -1;
    }
    *out = v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : (int32_t)v;
    return 0;
}

static PyObject *poll_result(SubscriptionBaseObject *self, int64_t n)
{
    if (PyErr_Occurred())
    {
        return NULL;
    }
    if (0 == n && aa_speedups_raise_if_dead(self) < 0)
    {
        return NULL;
    }
    return PyLong_FromLongLong(n);
}

static PyObject *subscription_poll(
    const char *method, PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, bool controlled)
{
    static const char *const names[] = { "handler", "fragment_limit" };
    SubscriptionBaseObject *self = (SubscriptionBaseObject *)op;
    PyObject *given[2];
    int32_t fragment_limit;
    if (parse_args(method, args, nargs, kwnames, names, 2, 1, given) < 0 ||
        parse_int32(given[1], 10, "fragment_limit", &fragment_limit) < 0 ||
        aa_speedups_subscription_ready(self) < 0)
    {
        return NULL;
    }
    poll_context_t ctx;
    if (poll_start(&ctx, self, given[0], controlled) < 0)
    {
        return NULL;
    }
    int32_t n = aa_speedups_api->subscription_controlled_poll(self->native, on_fragment, &ctx, fragment_limit);
    poll_finish(&ctx);
    return poll_result(self, n);
}

PyObject *aa_poll_subscription_poll(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return subscription_poll("poll", op, args, nargs, kwnames, false);
}

PyObject *aa_poll_subscription_controlled_poll(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return subscription_poll("controlled_poll", op, args, nargs, kwnames, true);
}

static aa_image_t *image_argument(SubscriptionBaseObject *self, PyObject *address)
{
    if (NULL == self->native)
    {
        aa_speedups_subscription_ready(self); /* raises: closed */
        return NULL;
    }
    aa_image_t *image = PyLong_AsVoidPtr(address);
    if (NULL == image && !PyErr_Occurred())
    {
        PyErr_SetString(PyExc_ValueError, "null image address");
    }
    return image;
}

PyObject *aa_poll_subscription_image_poll(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = { "image_address", "handler", "limit_position", "fragment_limit", "controlled" };
    SubscriptionBaseObject *self = (SubscriptionBaseObject *)op;
    PyObject *given[5];
    int32_t fragment_limit;
    if (parse_args("_image_poll", args, nargs, kwnames, names, 5, 5, given) < 0 ||
        parse_int32(given[3], 10, "fragment_limit", &fragment_limit) < 0)
    {
        return NULL;
    }
    long long limit_position = PyLong_AsLongLong(given[2]);
    int controlled = PyObject_IsTrue(given[4]);
    if ((-1 == limit_position && PyErr_Occurred()) || controlled < 0)
    {
        return NULL;
    }
    aa_image_t *image = image_argument(self, given[0]);
    if (NULL == image)
    {
        return NULL;
    }
    poll_context_t ctx;
    if (poll_start(&ctx, self, given[1], controlled) < 0)
    {
        return NULL;
    }
    int32_t n = aa_speedups_api->image_bounded_controlled_poll(image, on_fragment, &ctx, limit_position, fragment_limit);
    poll_finish(&ctx);
    if (PyErr_Occurred())
    {
        return NULL;
    }
    return PyLong_FromLong(n);
}

/* ---- block polls ---- */

typedef struct
{
    SubscriptionBaseObject *sub;
    PyObject *handler;
}
block_context_t;

static int on_block(void *clientd, const uint8_t *term_buffer, int32_t term_length, int32_t offset, int32_t length,
    int32_t session_id, int32_t term_id)
{
    block_context_t *ctx = clientd;
    PyObject *args[5] = { NULL, NULL, NULL, NULL, NULL };
    PyObject *result = NULL;
    args[0] = PyMemoryView_FromMemory((char *)term_buffer, term_length, PyBUF_READ);
    args[1] = PyLong_FromLong(offset);
    args[2] = PyLong_FromLong(length);
    args[3] = PyLong_FromLong(session_id);
    args[4] = PyLong_FromLong(term_id);
    if (NULL != args[0] && NULL != args[1] && NULL != args[2] && NULL != args[3] && NULL != args[4])
    {
        result = PyObject_Vectorcall(ctx->handler, args, 5, NULL);
    }
    if (NULL != args[0])
    {
        view_let_go(&args[0]);
    }
    for (int i = 1; i < 5; i++)
    {
        Py_XDECREF(args[i]);
    }
    if (NULL == ctx->sub->native)
    {
        Py_XDECREF(result);
        return AA_POLL_CLOSED;
    }
    if (NULL == result)
    {
        return AA_POLL_STOP;
    }
    Py_DECREF(result);
    return 0;
}

static PyObject *block_poll(SubscriptionBaseObject *self, aa_image_t *image, PyObject *handler, PyObject *limit)
{
    int32_t block_length_limit;
    if (parse_int32(limit, 0, "block_length_limit", &block_length_limit) < 0)
    {
        return NULL;
    }
    if (!PyCallable_Check(handler))
    {
        PyErr_Format(PyExc_TypeError,
            "handler must be callable as handler(buffer, offset, length, session_id, term_id), not %.100s",
            Py_TYPE(handler)->tp_name);
        return NULL;
    }
    block_context_t ctx = { .sub = self, .handler = handler };
    int64_t n = NULL == image ?
        aa_speedups_api->subscription_block_poll(self->native, on_block, &ctx, block_length_limit) :
        aa_speedups_api->image_block_poll(image, on_block, &ctx, block_length_limit);
    return NULL == image ? poll_result(self, n) : PyErr_Occurred() ? NULL : PyLong_FromLongLong(n);
}

PyObject *aa_poll_subscription_block_poll(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = { "handler", "block_length_limit" };
    SubscriptionBaseObject *self = (SubscriptionBaseObject *)op;
    PyObject *given[2];
    if (parse_args("block_poll", args, nargs, kwnames, names, 2, 2, given) < 0 ||
        aa_speedups_subscription_ready(self) < 0)
    {
        return NULL;
    }
    return block_poll(self, NULL, given[0], given[1]);
}

PyObject *aa_poll_subscription_image_block_poll(
    PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = { "image_address", "handler", "block_length_limit" };
    SubscriptionBaseObject *self = (SubscriptionBaseObject *)op;
    PyObject *given[3];
    if (parse_args("_image_block_poll", args, nargs, kwnames, names, 3, 3, given) < 0)
    {
        return NULL;
    }
    aa_image_t *image = image_argument(self, given[0]);
    if (NULL == image)
    {
        return NULL;
    }
    return block_poll(self, image, given[1], given[2]);
}

/* ---- set-up ---- */

void aa_poll_subscription_clear(SubscriptionBaseObject *self)
{
    Py_CLEAR(self->poll_view);
    Py_CLEAR(self->poll_header);
}

int aa_poll_module_init(PyObject *module)
{
    if (PyType_Ready(&HeaderType) < 0 || PyType_Ready(&FragmentAssemblerType) < 0 ||
        PyType_Ready(&ControlledFragmentAssemblerType) < 0)
    {
        return -1;
    }
    str_release = PyUnicode_InternFromString("release");
    str_images = PyUnicode_InternFromString("_images");
    if (NULL == str_release || NULL == str_images)
    {
        return -1;
    }
    if (PyModule_AddObjectRef(module, "Header", (PyObject *)&HeaderType) < 0 ||
        PyModule_AddObjectRef(module, "FragmentAssembler", (PyObject *)&FragmentAssemblerType) < 0 ||
        PyModule_AddObjectRef(module, "ControlledFragmentAssembler", (PyObject *)&ControlledFragmentAssemblerType) < 0 ||
        PyModule_AddIntConstant(module, "ABORT", AA_POLL_ABORT) < 0 ||
        PyModule_AddIntConstant(module, "BREAK", AA_POLL_BREAK) < 0 ||
        PyModule_AddIntConstant(module, "COMMIT", AA_POLL_COMMIT) < 0 ||
        PyModule_AddIntConstant(module, "CONTINUE", AA_POLL_CONTINUE) < 0)
    {
        return -1;
    }
    return 0;
}
