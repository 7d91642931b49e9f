/*
 * FragmentAssembler and ControlledFragmentAssembler: Aeron's reassembly of fragmented messages,
 * per session, into a buffer of their own (a fragment must start where the last one of its
 * message ended, in the same term, or the message is dropped), then the handler is called with
 * the whole message and a Header whose frame_length covers it and whose position is after its
 * last fragment. Handed to a poll they run inside its loop (aa_poll.c); called from Python they
 * take (data, header). A ControlledFragmentAssembler's ABORT on a whole message leaves its END
 * fragment unconsumed, and the message comes again.
 */
#include "aa_poll.h"

static aa_builder_t *assembler_builder(AssemblerObject *self, int32_t session_id, bool create)
{
    if (self->last < self->count && self->builders[self->last].session_id == session_id)
    {
        return &self->builders[self->last];
    }
    for (size_t i = 0; i < self->count; i++)
    {
        if (self->builders[i].session_id == session_id)
        {
            self->last = i;
            return &self->builders[i];
        }
    }
    if (!create)
    {
        return NULL;
    }
    if (self->count == self->capacity)
    {
        size_t capacity = self->capacity < 4 ? 4 : self->capacity * 2;
        aa_builder_t *grown = PyMem_Realloc(self->builders, capacity * sizeof(aa_builder_t));
        if (NULL == grown)
        {
            PyErr_NoMemory();
            return NULL;
        }
        self->builders = grown;
        self->capacity = capacity;
    }
    aa_builder_t *b = &self->builders[self->count];
    memset(b, 0, sizeof(*b));
    b->session_id = session_id;
    self->last = self->count++;
    return b;
}

static int builder_append(AssemblerObject *self, aa_builder_t *b, const uint8_t *data, size_t length)
{
    if (b->length + length > b->capacity)
    {
        size_t capacity = b->capacity > self->initial_capacity ? b->capacity : self->initial_capacity;
        capacity = capacity < 4096 ? 4096 : capacity;
        while (capacity < b->length + length)
        {
            capacity *= 2;
        }
        uint8_t *grown = PyMem_Realloc(b->data, capacity);
        if (NULL == grown)
        {
            PyErr_NoMemory();
            return -1;
        }
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->length, data, length);
    b->length += length;
    return 0;
}

/* One fragment of a fragmented message (flags not BEGIN|END), with its header `h`. */
int aa_assembler_fragment(
    AssemblerObject *self, SubscriptionBaseObject *sub, const aa_header_object_t *h, const uint8_t *payload,
    size_t length)
{
    uint8_t flags = h->frame[AA_OFF_FLAGS];
    int32_t session_id = aa_get_i32(h->frame + AA_OFF_SESSION_ID);
    int32_t term_offset = aa_get_i32(h->frame + AA_OFF_TERM_OFFSET);
    int32_t term_id = aa_get_i32(h->frame + AA_OFF_TERM_ID);
    int32_t next_term_offset = AA_ALIGN_FRAME(term_offset + AA_HEADER_LENGTH + (int32_t)length);
    if (self->delivering)
    {
        PyErr_SetString(PyExc_RuntimeError, "a FragmentAssembler was handed a fragment by its own handler");
        return AA_POLL_STOP;
    }
    if (flags & AA_FLAG_BEGIN)
    {
        aa_builder_t *b = assembler_builder(self, session_id, true);
        if (NULL == b)
        {
            return AA_POLL_STOP;
        }
        b->length = 0;
        b->active = false;
        if (builder_append(self, b, payload, length) < 0)
        {
            return AA_POLL_STOP;
        }
        memcpy(b->first, h->frame, AA_HEADER_LENGTH);
        b->term_id = term_id;
        b->next_term_offset = next_term_offset;
        b->active = true;
        return AA_POLL_CONTINUE;
    }
    aa_builder_t *b = assembler_builder(self, session_id, false);
    if (NULL == b || !b->active)
    {
        return AA_POLL_CONTINUE;
    }
    if (term_offset != b->next_term_offset || term_id != b->term_id)
    {
        b->active = false; /* a fragment is missing (or the position moved): drop the message */
        b->length = 0;
        return AA_POLL_CONTINUE;
    }
    size_t limit = b->length;
    if (builder_append(self, b, payload, length) < 0)
    {
        return AA_POLL_STOP;
    }
    if (0 == (flags & AA_FLAG_END))
    {
        b->next_term_offset = next_term_offset;
        return AA_POLL_CONTINUE;
    }
    if (NULL == self->header && NULL == (self->header = aa_poll_header_new()))
    {
        return AA_POLL_STOP;
    }
    aa_header_object_t *whole = self->header;
    memcpy(whole->frame, b->first, AA_HEADER_LENGTH);
    aa_put_i32(whole->frame + AA_OFF_FRAME_LENGTH, AA_HEADER_LENGTH + (int32_t)b->length);
    whole->frame[AA_OFF_FLAGS] = (uint8_t)(b->first[AA_OFF_FLAGS] | flags);
    whole->initial_term_id = h->initial_term_id;
    whole->position_bits_to_shift = h->position_bits_to_shift;
    whole->next_term_offset = next_term_offset;
    Py_XSETREF(whole->image, Py_XNewRef(h->image));
    self->delivering = true;
    int action = aa_poll_deliver(sub, self->delegate, &self->view, &self->header, b->data, (Py_ssize_t)b->length,
        self->controlled);
    self->delivering = false;
    if (NULL != self->header)
    {
        Py_CLEAR(self->header->image);
    }
    if (NULL != self->view)
    {
        aa_poll_view_point(self->view, (const uint8_t *)&aa_poll_empty_data, 0);
    }
    if (AA_POLL_ABORT == action)
    {
        b->length = limit; /* the END fragment comes again */
    }
    else
    {
        b->active = false;
        b->length = 0;
    }
    return action;
}

/* assembler(data, header): for handlers that call an assembler themselves. */
static PyObject *Assembler_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    AssemblerObject *self = (AssemblerObject *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (2 != nargs || NULL != kwnames)
    {
        PyErr_SetString(PyExc_TypeError, "a fragment assembler takes (data, header)");
        return NULL;
    }
    if (!PyObject_TypeCheck(args[1], &HeaderType))
    {
        PyErr_Format(PyExc_TypeError, "a fragment assembler needs the Header a poll hands its handler, not %.100s",
            Py_TYPE(args[1])->tp_name);
        return NULL;
    }
    const aa_header_object_t *h = (const aa_header_object_t *)args[1];
    if (AA_FLAGS_UNFRAGMENTED == (h->frame[AA_OFF_FLAGS] & AA_FLAGS_UNFRAGMENTED))
    {
        return PyObject_Vectorcall(self->delegate, args, 2, NULL);
    }
    Py_buffer data;
    if (PyObject_GetBuffer(args[0], &data, PyBUF_SIMPLE) < 0)
    {
        return NULL;
    }
    int action = aa_assembler_fragment(self, NULL, h, data.buf, (size_t)data.len);
    PyBuffer_Release(&data);
    if (AA_POLL_STOP == action)
    {
        return NULL;
    }
    if (self->controlled)
    {
        return PyLong_FromLong(action);
    }
    Py_RETURN_NONE;
}

static PyObject *Assembler_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = { "handler", "initial_buffer_length", NULL };
    PyObject *delegate;
    Py_ssize_t initial = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|n:FragmentAssembler", names, &delegate, &initial))
    {
        return NULL;
    }
    if (!PyCallable_Check(delegate))
    {
        PyErr_Format(PyExc_TypeError, "%s(handler): handler must be callable as handler(data, header), not %.100s",
            type->tp_name, Py_TYPE(delegate)->tp_name);
        return NULL;
    }
    if (initial < 0)
    {
        PyErr_Format(PyExc_ValueError, "initial_buffer_length must be >= 0, not %zd", initial);
        return NULL;
    }
    AssemblerObject *self = (AssemblerObject *)type->tp_alloc(type, 0);
    if (NULL == self)
    {
        return NULL;
    }
    self->delegate = Py_NewRef(delegate);
    self->controlled = PyType_IsSubtype(type, &ControlledFragmentAssemblerType);
    self->initial_capacity = (size_t)initial;
    self->vectorcall = Assembler_vectorcall;
    return (PyObject *)self;
}

static void assembler_free_builders(AssemblerObject *self)
{
    for (size_t i = 0; i < self->count; i++)
    {
        PyMem_Free(self->builders[i].data);
    }
    PyMem_Free(self->builders);
    self->builders = NULL;
    self->count = 0;
    self->capacity = 0;
    self->last = 0;
}

static int Assembler_traverse(AssemblerObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->delegate);
    return 0;
}

static int Assembler_clear(AssemblerObject *self)
{
    Py_CLEAR(self->delegate);
    return 0;
}

static void Assembler_dealloc(AssemblerObject *self)
{
    PyObject_GC_UnTrack(self);
    Assembler_clear(self);
    Py_CLEAR(self->view);
    Py_CLEAR(self->header);
    assembler_free_builders(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Assembler_reset(AssemblerObject *self, PyObject *unused)
{
    (void)unused;
    if (self->delivering)
    {
        PyErr_SetString(PyExc_RuntimeError, "a FragmentAssembler cannot be reset by its own handler");
        return NULL;
    }
    assembler_free_builders(self);
    Py_RETURN_NONE;
}

static PyObject *Assembler_free_session_buffer(AssemblerObject *self, PyObject *arg)
{
    long session_id = PyLong_AsLong(arg);
    if (-1 == session_id && PyErr_Occurred())
    {
        return NULL;
    }
    if (self->delivering)
    {
        PyErr_SetString(PyExc_RuntimeError, "a FragmentAssembler cannot free buffers from its own handler");
        return NULL;
    }
    aa_builder_t *b = assembler_builder(self, (int32_t)session_id, false);
    if (NULL == b)
    {
        Py_RETURN_FALSE;
    }
    PyMem_Free(b->data);
    *b = self->builders[--self->count];
    self->last = 0;
    Py_RETURN_TRUE;
}

static PyObject *Assembler_get_delegate(AssemblerObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(NULL != self->delegate ? self->delegate : Py_None);
}

static PyMethodDef Assembler_methods[] = {
    { "reset", (PyCFunction)Assembler_reset, METH_NOARGS,
      "Drop every session's partial message and buffer." },
    { "free_session_buffer", (PyCFunction)Assembler_free_session_buffer, METH_O,
      "free_session_buffer(session_id) -> bool: drop one session's buffer (say, once its image is gone)." },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef Assembler_getset[] = {
    { "delegate", (getter)Assembler_get_delegate, NULL, "the handler of whole messages", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

/* The two assembler types differ only in name and doc: Assembler_new tells a controlled one by its
 * type. */
#define ASSEMBLER_TYPE(name, doc) \
    { \
        PyVarObject_HEAD_INIT(NULL, 0) \
        .tp_name = name, \
        .tp_basicsize = sizeof(AssemblerObject), \
        .tp_dealloc = (destructor)Assembler_dealloc, \
        .tp_vectorcall_offset = offsetof(AssemblerObject, vectorcall), \
        .tp_call = PyVectorcall_Call, \
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL, \
        .tp_doc = doc, \
        .tp_traverse = (traverseproc)Assembler_traverse, \
        .tp_clear = (inquiry)Assembler_clear, \
        .tp_methods = Assembler_methods, \
        .tp_getset = Assembler_getset, \
        .tp_new = Assembler_new, \
    }

PyTypeObject FragmentAssemblerType = ASSEMBLER_TYPE("aeron_async.FragmentAssembler",
    "FragmentAssembler(handler, initial_buffer_length=0)\n\n"
    "A fragment handler that reassembles fragmented messages per session and calls handler(data, header) "
    "with each whole message: data a read-only memoryview valid only during the call, header a Header "
    "whose frame_length covers the message and whose position is after its last fragment. Hand it to "
    "Subscription.poll or Image.poll (it then runs inside the native loop).");

PyTypeObject ControlledFragmentAssemblerType = ASSEMBLER_TYPE("aeron_async.ControlledFragmentAssembler",
    "ControlledFragmentAssembler(handler, initial_buffer_length=0)\n\n"
    "FragmentAssembler for controlled_poll: handler(data, header) returns a ControlledPollAction; ABORT on a "
    "whole message leaves its last fragment unconsumed, and the message is delivered again.");

