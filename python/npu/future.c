/* npu.Future: one queued model run (context.c submits it). */
#include "npu_py.h"

NpuFuture *npu_py_future_new(NpuContext *context, NpuStream *stream)
{
  NpuFuture *self = PyObject_New(NpuFuture, &NpuFuture_Type);
  if (!self)
    return NULL;
  self->context = (NpuContext *)Py_NewRef(context);
  self->stream = (NpuStream *)Py_NewRef(stream);
  self->outputs = self->error = NULL;
  self->n_inputs = self->n_buffers = 0;
  self->buffers = NULL;
  self->host = NULL;
  self->bytes = NULL;
  self->done = NULL;
  return self;
}

/* Waits for the run and downloads the outputs (GIL released), then lets go
 * of the device buffers; a failure is kept to be raised by result().
 * Idempotent. */
static int complete(NpuFuture *self)
{
  npu_status status = NPU_OK;
  if (self->done) {
    Py_BEGIN_ALLOW_THREADS
    status = npu_event_synchronize(self->done);
    for (uint32_t i = self->n_inputs; status == NPU_OK && i < self->n_buffers; i++)
      if (self->bytes[i])
        status = npu_memcpy_d2h(self->host[i], self->buffers[i], 0, self->bytes[i]);
    Py_END_ALLOW_THREADS
    npu_event_destroy(self->done);
    self->done = NULL;
  }
  for (uint32_t i = 0; self->buffers && i < self->n_buffers; i++)
    if (self->buffers[i])
      npu_buffer_release(self->buffers[i]);
  PyMem_Free(self->buffers);
  PyMem_Free(self->host);
  PyMem_Free(self->bytes);
  self->buffers = NULL;
  self->host = NULL;
  self->bytes = NULL;
  if (status != NPU_OK) {
    npu_py_raise(status);
    PyObject *type, *traceback;
    PyErr_Fetch(&type, &self->error, &traceback);
    PyErr_NormalizeException(&type, &self->error, &traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
  }
  return self->error ? -1 : 0;
}

/* A dropped future still waits for its work; an exception being raised
 * around it stays as it was. */
static void future_dealloc(NpuFuture *self)
{
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  complete(self); /* a failure is kept in self->error, not raised */
  PyErr_Restore(type, value, traceback);
  Py_CLEAR(self->error);
  Py_CLEAR(self->outputs);
  Py_CLEAR(self->stream);
  Py_CLEAR(self->context);
  PyObject_Free(self);
}

PyObject *npu_py_future_result(NpuFuture *self)
{
  if (complete(self) < 0) {
    PyErr_SetObject((PyObject *)Py_TYPE(self->error), self->error);
    return NULL;
  }
  return Py_NewRef(self->outputs);
}

static PyObject *future_result(NpuFuture *self, PyObject *unused)
{
  (void)unused;
  return npu_py_future_result(self);
}

static PyObject *future_done(NpuFuture *self, PyObject *unused)
{
  (void)unused;
  if (!self->done)
    Py_RETURN_TRUE;
  npu_status status = npu_event_query(self->done);
  if (status == NPU_ERROR_NOT_READY)
    Py_RETURN_FALSE;
  return status == NPU_OK ? Py_NewRef(Py_True) : npu_py_raise(status);
}

static PyMethodDef future_methods[] = {
    {"result", NPU_PY_FN(future_result), METH_NOARGS,
     "result() -> {name: ndarray}: waits for the run (the GIL released) and returns its "
     "outputs"},
    {"done", NPU_PY_FN(future_done), METH_NOARGS, "done() -> True once the run has finished"},
    {NULL},
};

static PyMemberDef future_members[] = {
    {"stream", T_OBJECT, offsetof(NpuFuture, stream), READONLY, "the stream it runs on"},
    {NULL},
};

PyTypeObject NpuFuture_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npu.Future",
    .tp_doc = "A model run queued by Context.run_async(): result() waits for its outputs.",
    .tp_basicsize = sizeof(NpuFuture),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)future_dealloc,
    .tp_methods = future_methods,
    .tp_members = future_members,
};
