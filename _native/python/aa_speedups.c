/*
 * aeron_async._speedups: the CPython side of the message path.
 *
 * The native core is the cffi module; cffi is fine for set-up and control calls but costs a few
 * hundred nanoseconds per call and per struct field read, which is the whole budget of a message.
 * This module gives the Python classes C base types whose message-path methods are one C call:
 *
 *   PublicationBase.offer(data, reserved_value=0)       one message, returns position or code
 *   PublicationBase.offer_batch(messages, reserved_value=0)
 *                                                       many messages, returns how many went in
 *   SubscriptionBase.poll_messages(max_messages, fragment_limit)
 *                                                       whole messages as a list of Message
 *   SubscriptionBase._poll_image_messages(image_address, max_messages, fragment_limit)
 *   Message                                             a small immutable record (not GC-tracked)
 *
 * and, in aa_poll.c, Aeron's fragment-handler polls (poll, controlled_poll, block_poll and the
 * image forms), Header and FragmentAssembler / ControlledFragmentAssembler.
 *
 * It links none of the core: bind(api_address, address_of, raise_last_error) hands it the table of
 * core functions (src/aa_fastpath.h) once at import. The GIL is held across the core calls
 * (they never block; only offers of large messages release it for the copy), and nothing is
 * allocated per call except the Python objects returned.
 *
 * Errors and closed resources are turned into exceptions by the Python subclasses: the C code
 * calls back `self._fail(code)` (publications), `self._checked()`, `self._dispatch_image_events()`
 * and `self._client._raise_if_dead()` (subscriptions), so one exception hierarchy stays in Python.
 */
#include "aa_speedups.h"

#include <structmember.h>

#include <string.h>

#define AA_SPEEDUPS_BATCH_CHUNK 64
#define AA_SPEEDUPS_RELEASE_GIL_LENGTH (256 * 1024)
#define AA_SPEEDUPS_INITIAL_BUFFER (1 << 20)
/* The most messages one poll returns (its message array is kept for the subscription's life). */
#define AA_SPEEDUPS_MAX_POLL_MESSAGES (1 << 16)

const aa_fastpath_api_t *aa_speedups_api = NULL;
static PyObject *address_of = NULL;       /* callable: cffi pointer -> int address */
static PyObject *raise_last_error = NULL; /* callable: raises the core's last error */

static PyObject *str_fail;
static PyObject *str_checked;
static PyObject *str_dispatch_image_events;
static PyObject *str_client;
static PyObject *str_raise_if_dead;

static int require_bound(void)
{
    if (NULL == aa_speedups_api)
    {
        PyErr_SetString(PyExc_RuntimeError, "aeron_async._speedups is not bound to the native core: import aeron_async");
        return -1;
    }
    return 0;
}

/* ---- Message ---- */

typedef struct
{
    PyObject_HEAD
    PyObject *data;
    int64_t position;
    int64_t reserved_value;
    int32_t session_id;
    int32_t stream_id;
}
MessageObject;

static PyTypeObject MessageType;

static inline PyObject *message_new_owned(PyObject *data, int32_t session_id, int32_t stream_id, int64_t position,
    int64_t reserved_value)
{
    MessageObject *m = PyObject_Malloc(sizeof(MessageObject));
    if (NULL == m)
    {
        Py_DECREF(data);
        return PyErr_NoMemory();
    }
    PyObject_Init((PyObject *)m, &MessageType);
    m->data = data;
    m->session_id = session_id;
    m->stream_id = stream_id;
    m->position = position;
    m->reserved_value = reserved_value;
    return (PyObject *)m;
}

static PyObject *Message_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = { "data", "session_id", "stream_id", "position", "reserved_value", NULL };
    PyObject *data;
    int session_id = 0;
    int stream_id = 0;
    long long position = 0;
    long long reserved_value = 0;
    if (!PyArg_ParseTupleAndKeywords(
        args, kwargs, "O|iiLL:Message", names, &data, &session_id, &stream_id, &position, &reserved_value))
    {
        return NULL;
    }
    /* Only bytes are kept, so a Message can never be part of a reference cycle (it is not GC-tracked). */
    PyObject *bytes = PyBytes_CheckExact(data) ? Py_NewRef(data) : PyBytes_FromObject(data);
    if (NULL == bytes)
    {
        return NULL;
    }
    (void)type;
    return message_new_owned(bytes, session_id, stream_id, position, reserved_value);
}

static void Message_dealloc(MessageObject *self)
{
    Py_XDECREF(self->data);
    PyObject_Free(self);
}

static PyObject *Message_repr(MessageObject *self)
{
    return PyUnicode_FromFormat("<Message %zd bytes session=%d position=%lld>",
        PyBytes_GET_SIZE(self->data), (int)self->session_id, (long long)self->position);
}

static PyObject *Message_reduce(MessageObject *self, PyObject *unused)
{
    (void)unused;
    return Py_BuildValue("(O(OiiLL))", (PyObject *)&MessageType, self->data, (int)self->session_id,
        (int)self->stream_id, (long long)self->position, (long long)self->reserved_value);
}

static PyMemberDef Message_members[] = {
    { "data", T_OBJECT_EX, offsetof(MessageObject, data), READONLY, "the message's bytes (reassembled)" },
    { "session_id", T_INT, offsetof(MessageObject, session_id), READONLY, "the publisher's session id" },
    { "stream_id", T_INT, offsetof(MessageObject, stream_id), READONLY, "the stream id" },
    { "position", T_LONGLONG, offsetof(MessageObject, position), READONLY,
      "the stream position just after the message (its last fragment)" },
    { "reserved_value", T_LONGLONG, offsetof(MessageObject, reserved_value), READONLY,
      "the reserved value the publisher set (of the first fragment)" },
    { NULL, 0, 0, 0, NULL },
};

static PyMethodDef Message_methods[] = {
    { "__reduce__", (PyCFunction)Message_reduce, METH_NOARGS, NULL },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject MessageType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "aeron_async.Message",
    .tp_basicsize = sizeof(MessageObject),
    .tp_dealloc = (destructor)Message_dealloc,
    .tp_repr = (reprfunc)Message_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A whole (reassembled) message with the stream coordinates of its last fragment.\n\n"
        "Message(data, session_id=0, stream_id=0, position=0, reserved_value=0)",
    .tp_members = Message_members,
    .tp_methods = Message_methods,
    .tp_new = Message_new,
};

/* ---- the native pointer both base types carry, set through `_ptr` ---- */

static int set_native(PyObject **holder, void **native, PyObject *value)
{
    if (NULL == value)
    {
        PyErr_SetString(PyExc_AttributeError, "_ptr cannot be deleted");
        return -1;
    }
    void *address = NULL;
    if (value != Py_None)
    {
        if (require_bound() < 0)
        {
            return -1;
        }
        PyObject *integer = PyObject_CallOneArg(address_of, value);
        if (NULL == integer)
        {
            return -1;
        }
        address = PyLong_AsVoidPtr(integer);
        Py_DECREF(integer);
        if (NULL == address && PyErr_Occurred())
        {
            return -1;
        }
    }
    Py_XSETREF(*holder, Py_NewRef(value));
    *native = address;
    return 0;
}

/* Parse (first, [int64 second]) from a vectorcall with an optional keyword `second_name`. */
static int parse_object_and_int64(
    const char *method, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *first_name,
    const char *second_name, PyObject **first, int64_t *second)
{
    PyObject *second_obj = NULL;
    *first = NULL;
    if (nargs > 2)
    {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 2 arguments (%zd given)", method, nargs);
        return -1;
    }
    if (nargs >= 1)
    {
        *first = args[0];
    }
    if (nargs == 2)
    {
        second_obj = args[1];
    }
    if (NULL != kwnames)
    {
        Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t i = 0; i < nk; i++)
        {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i);
            if (PyUnicode_CompareWithASCIIString(name, second_name) == 0 && NULL == second_obj)
            {
                second_obj = args[nargs + i];
            }
            else if (PyUnicode_CompareWithASCIIString(name, first_name) == 0 && NULL == *first)
            {
                *first = args[nargs + i];
            }
            else
            {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected or repeated keyword argument '%U'", method, name);
                return -1;
            }
        }
    }
    if (NULL == *first)
    {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", method, first_name);
        return -1;
    }
    *second = 0;
    if (NULL != second_obj)
    {
        long long value = PyLong_AsLongLong(second_obj);
        if (-1 == value && PyErr_Occurred())
        {
            return -1;
        }
        *second = value;
    }
    return 0;
}

/* ---- PublicationBase ---- */

typedef struct
{
    PyObject_HEAD
    PyObject *ptr;
    aa_publication_t *native;
}
PublicationBaseObject;

static void PublicationBase_dealloc(PublicationBaseObject *self)
{
    Py_CLEAR(self->ptr);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *PublicationBase_get_ptr(PublicationBaseObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(self->ptr ? self->ptr : Py_None);
}

static int PublicationBase_set_ptr(PublicationBaseObject *self, PyObject *value, void *closure)
{
    (void)closure;
    return set_native(&self->ptr, (void **)&self->native, value);
}

/* A result below ADMIN_ACTION (closed, max position, error) goes to the Python `_fail`, which raises
 * or returns the code. */
static PyObject *publication_result(PyObject *self, int64_t rc)
{
    if (rc < AA_PUBLICATION_ADMIN_ACTION)
    {
        PyObject *code = PyLong_FromLongLong(rc);
        if (NULL == code)
        {
            return NULL;
        }
        PyObject *result = PyObject_CallMethodOneArg(self, str_fail, code);
        Py_DECREF(code);
        return result;
    }
    return PyLong_FromLongLong(rc);
}

static PyObject *PublicationBase_offer(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PublicationBaseObject *self = (PublicationBaseObject *)op;
    PyObject *data;
    int64_t reserved_value = 0;
    if (1 == nargs && NULL == kwnames)
    {
        data = args[0];
    }
    else if (parse_object_and_int64("offer", args, nargs, kwnames, "data", "reserved_value", &data, &reserved_value) < 0)
    {
        return NULL;
    }
    aa_publication_t *native = self->native;
    if (NULL == native)
    {
        return publication_result(op, AA_PUBLICATION_CLOSED);
    }
    int64_t rc;
    if (PyBytes_CheckExact(data))
    {
        Py_ssize_t length = PyBytes_GET_SIZE(data);
        const uint8_t *buffer = (const uint8_t *)PyBytes_AS_STRING(data);
        if (length < AA_SPEEDUPS_RELEASE_GIL_LENGTH)
        {
            rc = aa_speedups_api->publication_offer(native, buffer, (size_t)length, reserved_value);
        }
        else
        {
            Py_BEGIN_ALLOW_THREADS
            rc = aa_speedups_api->publication_offer(native, buffer, (size_t)length, reserved_value);
            Py_END_ALLOW_THREADS
        }
    }
    else
    {
        Py_buffer view;
        if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        {
            return NULL;
        }
        if (view.len < AA_SPEEDUPS_RELEASE_GIL_LENGTH)
        {
            rc = aa_speedups_api->publication_offer(native, view.buf, (size_t)view.len, reserved_value);
        }
        else
        {
            Py_BEGIN_ALLOW_THREADS
            rc = aa_speedups_api->publication_offer(native, view.buf, (size_t)view.len, reserved_value);
            Py_END_ALLOW_THREADS
        }
        PyBuffer_Release(&view);
    }
    return publication_result(op, rc);
}

static PyObject *PublicationBase_offer_batch(
    PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PublicationBaseObject *self = (PublicationBaseObject *)op;
    PyObject *messages;
    int64_t reserved_value = 0;
    if (parse_object_and_int64(
        "offer_batch", args, nargs, kwnames, "messages", "reserved_value", &messages, &reserved_value) < 0)
    {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(messages, "offer_batch() takes a list or tuple of bytes-like messages");
    if (NULL == seq)
    {
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    Py_ssize_t total = 0;
    int64_t rc = 0;
    aa_iovec_t iov[AA_SPEEDUPS_BATCH_CHUNK];
    Py_buffer views[AA_SPEEDUPS_BATCH_CHUNK];
    bool held[AA_SPEEDUPS_BATCH_CHUNK];

    while (total < count)
    {
        aa_publication_t *native = self->native;
        if (NULL == native)
        {
            rc = AA_PUBLICATION_CLOSED;
            break;
        }
        Py_ssize_t chunk = count - total < AA_SPEEDUPS_BATCH_CHUNK ? count - total : AA_SPEEDUPS_BATCH_CHUNK;
        Py_ssize_t filled = 0;
        int failed = 0;
        for (; filled < chunk; filled++)
        {
            PyObject *item = items[total + filled];
            if (PyBytes_CheckExact(item))
            {
                held[filled] = false;
                iov[filled].base = (const uint8_t *)PyBytes_AS_STRING(item);
                iov[filled].length = (size_t)PyBytes_GET_SIZE(item);
            }
            else
            {
                if (PyObject_GetBuffer(item, &views[filled], PyBUF_SIMPLE) < 0)
                {
                    failed = 1;
                    break;
                }
                held[filled] = true;
                iov[filled].base = views[filled].buf;
                iov[filled].length = (size_t)views[filled].len;
            }
        }
        /* A message that is not a contiguous bytes-like object stops the batch like a refusal: the
         * ones before it are offered and counted (the caller must learn they went in), and the error
         * is raised only when it is the first message, i.e. when the caller offers the rest again. */
        if (failed && (filled > 0 || total > 0))
        {
            PyErr_Clear();
            failed = 0;
            count = total + filled;
        }
        size_t accepted = 0;
        if (!failed)
        {
            rc = aa_speedups_api->publication_offer_batch(native, iov, (size_t)filled, reserved_value, &accepted);
        }
        for (Py_ssize_t i = 0; i < filled; i++)
        {
            if (held[i])
            {
                PyBuffer_Release(&views[i]);
            }
        }
        if (failed)
        {
            Py_DECREF(seq);
            return NULL;
        }
        total += (Py_ssize_t)accepted;
        if ((Py_ssize_t)accepted < filled)
        {
            break;
        }
    }
    Py_DECREF(seq);
    if (total > 0 || count == 0)
    {
        return PyLong_FromSsize_t(total);
    }
    return publication_result(op, rc);
}

static PyGetSetDef PublicationBase_getset[] = {
    { "_ptr", (getter)PublicationBase_get_ptr, (setter)PublicationBase_set_ptr,
      "the native publication (cffi pointer), None once closed", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef PublicationBase_methods[] = {
    { "offer", (PyCFunction)(void (*)(void))PublicationBase_offer, METH_FASTCALL | METH_KEYWORDS,
      "offer($self, /, data, reserved_value=0)\n--\n\n"
      "Append one message (any contiguous bytes-like object). Returns the new stream position, or a "
      "negative OfferResult: NOT_CONNECTED, BACK_PRESSURED or ADMIN_ACTION (retry), MAX_POSITION_EXCEEDED." },
    { "offer_batch", (PyCFunction)(void (*)(void))PublicationBase_offer_batch, METH_FASTCALL | METH_KEYWORDS,
      "offer_batch($self, /, messages, reserved_value=0)\n--\n\n"
      "Append a list (or tuple) of messages in order, each its own message, in one call. Returns how many "
      "were appended from the front (offer the rest again later), or a negative OfferResult when none was. "
      "It stops at the first message it cannot take; a message that is too long or not bytes-like raises "
      "only when it is the first (MessageTooLongError, TypeError or BufferError)." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject PublicationBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "aeron_async._speedups.PublicationBase",
    .tp_basicsize = sizeof(PublicationBaseObject),
    .tp_dealloc = (destructor)PublicationBase_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The message path of a publication (base of aeron_async.Publication).",
    .tp_methods = PublicationBase_methods,
    .tp_getset = PublicationBase_getset,
    .tp_new = PyType_GenericNew,
};

/* ---- SubscriptionBase ---- */

static void SubscriptionBase_dealloc(SubscriptionBaseObject *self)
{
    Py_CLEAR(self->ptr);
    aa_poll_subscription_clear(self);
    PyMem_Free(self->buffer);
    PyMem_Free(self->messages);
    self->buffer = NULL;
    self->messages = NULL;
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *SubscriptionBase_get_ptr(SubscriptionBaseObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(self->ptr ? self->ptr : Py_None);
}

static int SubscriptionBase_set_ptr(SubscriptionBaseObject *self, PyObject *value, void *closure)
{
    (void)closure;
    return set_native(&self->ptr, (void **)&self->native, value);
}

static int ensure_buffers(SubscriptionBaseObject *self, int32_t max_messages, size_t capacity)
{
    if (self->buffer_capacity < capacity)
    {
        uint8_t *buffer = PyMem_Malloc(capacity);
        if (NULL == buffer)
        {
            PyErr_NoMemory();
            return -1;
        }
        PyMem_Free(self->buffer);
        self->buffer = buffer;
        self->buffer_capacity = capacity;
    }
    if (self->messages_capacity < max_messages)
    {
        aa_message_t *messages = PyMem_Malloc(sizeof(aa_message_t) * (size_t)max_messages);
        if (NULL == messages)
        {
            PyErr_NoMemory();
            return -1;
        }
        PyMem_Free(self->messages);
        self->messages = messages;
        self->messages_capacity = max_messages;
    }
    return 0;
}

static int parse_poll_args(
    const char *method, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int first, int32_t *max_messages,
    int32_t *fragment_limit)
{
    static const char *names[] = { "max_messages", "fragment_limit" };
    long values[2] = { 256, 1L << 30 };
    PyObject *given[2] = { NULL, NULL };
    Py_ssize_t positional = nargs - first;
    if (positional > 2)
    {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 2 arguments (%zd given)", method, positional);
        return -1;
    }
    for (Py_ssize_t i = 0; i < positional; i++)
    {
        given[i] = args[first + i];
    }
    if (NULL != kwnames)
    {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++)
        {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i);
            int slot = PyUnicode_CompareWithASCIIString(name, names[0]) == 0 ? 0 :
                PyUnicode_CompareWithASCIIString(name, names[1]) == 0 ? 1 : -1;
            if (slot < 0 || NULL != given[slot])
            {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected or repeated keyword argument '%U'", method, name);
                return -1;
            }
            given[slot] = args[nargs + i];
        }
    }
    for (int i = 0; i < 2; i++)
    {
        if (NULL != given[i])
        {
            values[i] = PyLong_AsLong(given[i]);
            if (-1 == values[i] && PyErr_Occurred())
            {
                return -1;
            }
        }
    }
    *max_messages = values[0] < 0 ? 0 :
        values[0] > AA_SPEEDUPS_MAX_POLL_MESSAGES ? AA_SPEEDUPS_MAX_POLL_MESSAGES : (int32_t)values[0];
    *fragment_limit = values[1] < 0 ? 0 : values[1] > INT32_MAX ? INT32_MAX : (int32_t)values[1];
    return 0;
}

static size_t next_power_of_two(size_t value)
{
    size_t result = 1;
    while (result < value)
    {
        result <<= 1;
    }
    return result;
}

static PyObject *build_messages(SubscriptionBaseObject *self, int32_t n)
{
    PyObject *list = PyList_New(n);
    if (NULL == list)
    {
        return NULL;
    }
    const uint8_t *buffer = self->buffer;
    const aa_message_t *messages = self->messages;
    for (int32_t i = 0; i < n; i++)
    {
        const aa_message_t *m = &messages[i];
        PyObject *data = PyBytes_FromStringAndSize((const char *)buffer + m->offset, (Py_ssize_t)m->length);
        if (NULL == data)
        {
            Py_DECREF(list);
            return NULL;
        }
        PyObject *message = message_new_owned(data, m->session_id, m->stream_id, m->position, m->reserved_value);
        if (NULL == message)
        {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, message);
    }
    return list;
}

/* After an empty poll: a subscription closed under its owner raises why (driver or client timeout). */
int aa_speedups_raise_if_dead(SubscriptionBaseObject *self)
{
    if (NULL != self->native && aa_speedups_api->subscription_is_closed(self->native))
    {
        PyObject *client = PyObject_GetAttr((PyObject *)self, str_client);
        if (NULL == client)
        {
            return -1;
        }
        PyObject *r = PyObject_CallMethodNoArgs(client, str_raise_if_dead);
        Py_DECREF(client);
        if (NULL == r)
        {
            return -1;
        }
        Py_DECREF(r);
    }
    return 0;
}

static PyObject *empty_result(SubscriptionBaseObject *self)
{
    return aa_speedups_raise_if_dead(self) < 0 ? NULL : PyList_New(0);
}

static PyObject *poll_into_messages(SubscriptionBaseObject *self, aa_image_t *image, int32_t max_messages,
    int32_t fragment_limit)
{
    if (max_messages <= 0)
    {
        return PyList_New(0);
    }
    if (ensure_buffers(self, max_messages, AA_SPEEDUPS_INITIAL_BUFFER) < 0)
    {
        return NULL;
    }
    int32_t n;
    while (true)
    {
        if (NULL == image)
        {
            n = aa_speedups_api->subscription_poll_messages(self->native, self->buffer, self->buffer_capacity,
                self->messages, max_messages, fragment_limit, &self->required);
        }
        else
        {
            size_t used = 0;
            n = aa_speedups_api->image_poll_messages(image, self->buffer, self->buffer_capacity, &used, self->messages,
                max_messages, fragment_limit, &self->required);
        }
        if (-2 != n)
        {
            break;
        }
        if (ensure_buffers(self, max_messages, next_power_of_two(self->required)) < 0)
        {
            return NULL;
        }
    }
    if (n > 0)
    {
        return build_messages(self, n);
    }
    if (n < 0)
    {
        return PyObject_CallNoArgs(raise_last_error);
    }
    return empty_result(self);
}

int aa_speedups_subscription_ready(SubscriptionBaseObject *self)
{
    if (NULL == self->native)
    {
        PyObject *r = PyObject_CallMethodNoArgs((PyObject *)self, str_checked);
        Py_XDECREF(r);
        if (NULL != r)
        {
            PyErr_SetString(PyExc_RuntimeError, "subscription has no native pointer");
        }
        return -1;
    }
    if (aa_speedups_api->subscription_has_image_events(self->native))
    {
        PyObject *r = PyObject_CallMethodNoArgs((PyObject *)self, str_dispatch_image_events);
        if (NULL == r)
        {
            return -1;
        }
        Py_DECREF(r);
        if (NULL == self->native)
        {
            return aa_speedups_subscription_ready(self);
        }
    }
    return 0;
}

static PyObject *SubscriptionBase_poll_messages(
    PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    SubscriptionBaseObject *self = (SubscriptionBaseObject *)op;
    int32_t max_messages;
    int32_t fragment_limit;
    if (parse_poll_args("poll_messages", args, nargs, kwnames, 0, &max_messages, &fragment_limit) < 0)
    {
        return NULL;
    }
    if (aa_speedups_subscription_ready(self) < 0)
    {
        return NULL;
    }
    return poll_into_messages(self, NULL, max_messages, fragment_limit);
}

static PyObject *SubscriptionBase_poll_image_messages(
    PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    SubscriptionBaseObject *self = (SubscriptionBaseObject *)op;
    int32_t max_messages;
    int32_t fragment_limit;
    if (nargs < 1)
    {
        PyErr_SetString(PyExc_TypeError, "_poll_image_messages() needs the image address");
        return NULL;
    }
    if (parse_poll_args("_poll_image_messages", args, nargs, kwnames, 1, &max_messages, &fragment_limit) < 0)
    {
        return NULL;
    }
    aa_image_t *image = PyLong_AsVoidPtr(args[0]);
    if (NULL == image)
    {
        if (!PyErr_Occurred())
        {
            PyErr_SetString(PyExc_ValueError, "null image address");
        }
        return NULL;
    }
    if (NULL == self->native)
    {
        aa_speedups_subscription_ready(self); /* raises: closed */
        return NULL;
    }
    return poll_into_messages(self, image, max_messages, fragment_limit);
}

static PyGetSetDef SubscriptionBase_getset[] = {
    { "_ptr", (getter)SubscriptionBase_get_ptr, (setter)SubscriptionBase_set_ptr,
      "the native subscription (cffi pointer), None once closed", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef SubscriptionBase_methods[] = {
    { "poll_messages", (PyCFunction)(void (*)(void))SubscriptionBase_poll_messages, METH_FASTCALL | METH_KEYWORDS,
      "poll_messages($self, /, max_messages=256, fragment_limit=1073741824)\n--\n\n"
      "Whole messages (reassembled natively) from every image, in one native call; a list, possibly empty. "
      "At most 65,536 messages per call, whatever max_messages says." },
    { "_poll_image_messages", (PyCFunction)(void (*)(void))SubscriptionBase_poll_image_messages,
      METH_FASTCALL | METH_KEYWORDS,
      "_poll_image_messages($self, /, image_address, max_messages=256, fragment_limit=1073741824)\n--\n\n"
      "Whole messages of one image of this subscription (Image.poll_messages)." },
    AA_POLL_METHODS,
    { NULL, NULL, 0, NULL },
};

static PyTypeObject SubscriptionBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "aeron_async._speedups.SubscriptionBase",
    .tp_basicsize = sizeof(SubscriptionBaseObject),
    .tp_dealloc = (destructor)SubscriptionBase_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The message path of a subscription (base of aeron_async.Subscription).",
    .tp_methods = SubscriptionBase_methods,
    .tp_getset = SubscriptionBase_getset,
    .tp_new = PyType_GenericNew,
};

/* ---- module ---- */

static PyObject *speedups_bind(PyObject *module, PyObject *args)
{
    PyObject *address;
    PyObject *address_of_callable;
    PyObject *raise_callable;
    (void)module;
    if (!PyArg_ParseTuple(args, "OOO:bind", &address, &address_of_callable, &raise_callable))
    {
        return NULL;
    }
    const aa_fastpath_api_t *table = PyLong_AsVoidPtr(address);
    if (NULL == table)
    {
        if (!PyErr_Occurred())
        {
            PyErr_SetString(PyExc_ValueError, "null fast-path table");
        }
        return NULL;
    }
    if (AA_FASTPATH_API_VERSION != table->version || (int32_t)sizeof(aa_fastpath_api_t) != table->size)
    {
        PyErr_Format(PyExc_ImportError,
            "aeron_async._speedups (table version %d) does not match the native core (version %d): rebuild the "
            "package with `pip install -e .`", AA_FASTPATH_API_VERSION, (int)table->version);
        return NULL;
    }
    Py_XSETREF(address_of, Py_NewRef(address_of_callable));
    Py_XSETREF(raise_last_error, Py_NewRef(raise_callable));
    aa_speedups_api = table;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    { "bind", speedups_bind, METH_VARARGS,
      "bind(api_address, address_of, raise_last_error): connect to the native core's fast-path table." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "aeron_async._speedups",
    .m_doc = "The CPython side of aeron_async's message path (offer, poll_messages, Message).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    if (PyType_Ready(&MessageType) < 0 || PyType_Ready(&PublicationBaseType) < 0 ||
        PyType_Ready(&SubscriptionBaseType) < 0)
    {
        return NULL;
    }
    str_fail = PyUnicode_InternFromString("_fail");
    str_checked = PyUnicode_InternFromString("_checked");
    str_dispatch_image_events = PyUnicode_InternFromString("_dispatch_image_events");
    str_client = PyUnicode_InternFromString("_client");
    str_raise_if_dead = PyUnicode_InternFromString("_raise_if_dead");
    if (!str_fail || !str_checked || !str_dispatch_image_events || !str_client || !str_raise_if_dead)
    {
        return NULL;
    }
    PyObject *module = PyModule_Create(&speedups_module);
    if (NULL == module)
    {
        return NULL;
    }
    if (aa_poll_module_init(module) < 0 ||
        PyModule_AddObjectRef(module, "Message", (PyObject *)&MessageType) < 0 ||
        PyModule_AddObjectRef(module, "PublicationBase", (PyObject *)&PublicationBaseType) < 0 ||
        PyModule_AddObjectRef(module, "SubscriptionBase", (PyObject *)&SubscriptionBaseType) < 0)
    {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
