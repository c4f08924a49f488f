/* npu.Stream and npu.Event. */
#include "npu_py.h"

NpuStream *npu_py_stream_new(NpuDevice *device)
{
  return (NpuStream *)PyObject_CallOneArg((PyObject *)&NpuStream_Type, (PyObject *)device);
}

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"device", NULL};
  PyObject *device_arg = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Stream", keywords, &device_arg))
    return NULL;
  NpuDevice *device = npu_py_device_arg(device_arg);
  if (!device)
    return NULL;
  NpuStream *self = (NpuStream *)type->tp_alloc(type, 0);
  if (!self) {
    Py_DECREF(device);
    return NULL;
  }
  self->device = device;
  self->keepalive = PyList_New(0);
  if (!self->keepalive) {
    Py_DECREF(self);
    return NULL;
  }
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = npu_stream_create(device->handle, &self->handle);
  Py_END_ALLOW_THREADS
  if (status != NPU_OK) {
    Py_DECREF(self);
    return npu_py_raise(status);
  }
  return (PyObject *)self;
}

/* Destroying waits for the queued work, which may still read the host
 * objects kept alive: those go after it. */
static void stream_dealloc(NpuStream *self)
{
  if (self->handle) {
    Py_BEGIN_ALLOW_THREADS
    npu_stream_destroy(self->handle);
    Py_END_ALLOW_THREADS
  }
  Py_CLEAR(self->keepalive);
  Py_CLEAR(self->device);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Once the stream is idle, nothing queued reads the host objects anymore. */
static void drop_keepalive(NpuStream *self)
{
  PyList_SetSlice(self->keepalive, 0, PyList_GET_SIZE(self->keepalive), NULL);
}

/* Async copies read or write host memory until the stream has run them:
 * the stream holds the object until it is seen idle (synchronize, query). A
 * long list is pruned when the stream turns out idle. */
int npu_py_stream_keep(NpuStream *self, PyObject *object)
{
  if (PyList_GET_SIZE(self->keepalive) >= 64 && npu_stream_query(self->handle) == NPU_OK)
    drop_keepalive(self);
  return PyList_Append(self->keepalive, object);
}

static PyObject *stream_synchronize(NpuStream *self, PyObject *unused)
{
  (void)unused;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = npu_stream_synchronize(self->handle);
  Py_END_ALLOW_THREADS
  if (status != NPU_OK)
    return npu_py_raise(status);
  drop_keepalive(self);
  Py_RETURN_NONE;
}

static PyObject *stream_query(NpuStream *self, PyObject *unused)
{
  (void)unused;
  npu_status status = npu_stream_query(self->handle);
  if (status == NPU_ERROR_NOT_READY)
    Py_RETURN_FALSE;
  if (status != NPU_OK)
    return npu_py_raise(status);
  drop_keepalive(self);
  Py_RETURN_TRUE;
}

static PyObject *stream_wait_event(NpuStream *self, PyObject *event)
{
  if (!PyObject_TypeCheck(event, &NpuEvent_Type))
    return PyErr_Format(PyExc_TypeError, "wait_event() needs an npu.Event");
  npu_status status = npu_stream_wait_event(self->handle, ((NpuEvent *)event)->handle);
  return status == NPU_OK ? Py_NewRef(Py_None) : npu_py_raise(status);
}

PyObject *npu_py_stream_stats(npu_stream *stream)
{
  npu_stream_stats s;
  npu_status status = npu_stream_get_stats(stream, &s);
  if (status != NPU_OK)
    return npu_py_raise(status);
  return Py_BuildValue("{s:K,s:K,s:K,s:K}", "tasks_submitted",
                       (unsigned long long)s.tasks_submitted, "tasks_completed",
                       (unsigned long long)s.tasks_completed, "busy_ns",
                       (unsigned long long)s.busy_ns, "device_ns",
                       (unsigned long long)s.device_ns);
}

static PyObject *stream_stats(NpuStream *self, PyObject *unused)
{
  (void)unused;
  return npu_py_stream_stats(self->handle);
}

static PyMethodDef stream_methods[] = {
    {"synchronize", NPU_PY_FN(stream_synchronize), METH_NOARGS,
     "synchronize(): blocks until all work queued so far has finished"},
    {"query", NPU_PY_FN(stream_query), METH_NOARGS, "query() -> True when the stream is idle"},
    {"wait_event", NPU_PY_FN(stream_wait_event), METH_O,
     "wait_event(event): work queued after this starts once the event's work is done (the "
     "device waits, not this thread)"},
    {"stats", NPU_PY_FN(stream_stats), METH_NOARGS,
     "stats() -> dict: tasks_submitted, tasks_completed, busy_ns, device_ns"},
    {NULL},
};

static PyMemberDef stream_members[] = {
    {"device", T_OBJECT, offsetof(NpuStream, device), READONLY, "the stream's device"},
    {NULL},
};

PyTypeObject NpuStream_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npu.Stream",
    .tp_doc = "Stream(device=None): an in-order queue of device work; work on different "
              "streams may run concurrently.",
    .tp_basicsize = sizeof(NpuStream),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = stream_new,
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_methods = stream_methods,
    .tp_members = stream_members,
};

static PyObject *event_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"device", "timing", NULL};
  PyObject *device_arg = Py_None;
  int timing = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Op:Event", keywords, &device_arg, &timing))
    return NULL;
  NpuDevice *device = npu_py_device_arg(device_arg);
  if (!device)
    return NULL;
  NpuEvent *self = (NpuEvent *)type->tp_alloc(type, 0);
  if (!self) {
    Py_DECREF(device);
    return NULL;
  }
  self->device = device;
  npu_status status = npu_event_create(device->handle,
                                       timing ? NPU_EVENT_DEFAULT : NPU_EVENT_DISABLE_TIMING,
                                       &self->handle);
  if (status != NPU_OK) {
    Py_DECREF(self);
    return npu_py_raise(status);
  }
  return (PyObject *)self;
}

static void event_dealloc(NpuEvent *self)
{
  if (self->handle)
    npu_event_destroy(self->handle);
  Py_CLEAR(self->device);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *event_record(NpuEvent *self, PyObject *stream)
{
  if (!PyObject_TypeCheck(stream, &NpuStream_Type))
    return PyErr_Format(PyExc_TypeError, "record() needs an npu.Stream");
  npu_status status = npu_event_record(self->handle, ((NpuStream *)stream)->handle);
  return status == NPU_OK ? Py_NewRef(Py_None) : npu_py_raise(status);
}

static PyObject *event_synchronize(NpuEvent *self, PyObject *unused)
{
  (void)unused;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = npu_event_synchronize(self->handle);
  Py_END_ALLOW_THREADS
  return status == NPU_OK ? Py_NewRef(Py_None) : npu_py_raise(status);
}

static PyObject *event_query(NpuEvent *self, PyObject *unused)
{
  (void)unused;
  npu_status status = npu_event_query(self->handle);
  if (status == NPU_ERROR_NOT_READY)
    Py_RETURN_FALSE;
  return status == NPU_OK ? Py_NewRef(Py_True) : npu_py_raise(status);
}

static PyObject *event_elapsed_ms(NpuEvent *self, PyObject *end)
{
  if (!PyObject_TypeCheck(end, &NpuEvent_Type))
    return PyErr_Format(PyExc_TypeError, "elapsed_ms() needs an npu.Event");
  float ms = 0;
  npu_status status = npu_event_elapsed_ms(self->handle, ((NpuEvent *)end)->handle, &ms);
  return status == NPU_OK ? PyFloat_FromDouble(ms) : npu_py_raise(status);
}

static PyMethodDef event_methods[] = {
    {"record", NPU_PY_FN(event_record), METH_O,
     "record(stream): captures the work queued on the stream so far"},
    {"synchronize", NPU_PY_FN(event_synchronize), METH_NOARGS,
     "synchronize(): blocks until the recorded work is done"},
    {"query", NPU_PY_FN(event_query), METH_NOARGS,
     "query() -> True when the recorded work is done (or nothing was recorded)"},
    {"elapsed_ms", NPU_PY_FN(event_elapsed_ms), METH_O,
     "start.elapsed_ms(end) -> milliseconds between two completed, timed events"},
    {NULL},
};

PyTypeObject NpuEvent_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npu.Event",
    .tp_doc = "Event(device=None, timing=True): marks a point in a stream; another stream "
              "can wait for it on the device.",
    .tp_basicsize = sizeof(NpuEvent),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = event_new,
    .tp_dealloc = (destructor)event_dealloc,
    .tp_methods = event_methods,
};
