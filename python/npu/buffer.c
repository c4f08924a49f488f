/* npu.Buffer: device memory, a uint8 numpy/memoryview view where the
 * device memory is host-visible. */
#include "npu_py.h"

NpuBuffer *npu_py_buffer_wrap(NpuDevice *device, npu_buffer *handle)
{
  NpuBuffer *self = PyObject_New(NpuBuffer, &NpuBuffer_Type);
  if (!self) {
    npu_buffer_release(handle);
    return NULL;
  }
  self->handle = handle;
  self->device = (NpuDevice *)Py_NewRef(device);
  npu_buffer_size(handle, &self->size);
  return self;
}

static PyObject *buffer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  (void)type;
  static char *keywords[] = {"size", "device", NULL};
  Py_ssize_t size = 0;
  PyObject *device_arg = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n|O:Buffer", keywords, &size, &device_arg))
    return NULL;
  if (size < 0)
    return PyErr_Format(PyExc_ValueError, "size must not be negative");
  NpuDevice *device = npu_py_device_arg(device_arg);
  if (!device)
    return NULL;
  npu_buffer *handle = NULL;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = npu_buffer_alloc(device->handle, (size_t)size, &handle);
  Py_END_ALLOW_THREADS
  PyObject *self = status == NPU_OK ? (PyObject *)npu_py_buffer_wrap(device, handle)
                                    : npu_py_raise(status);
  Py_DECREF(device);
  return self;
}

static void buffer_dealloc(NpuBuffer *self)
{
  npu_buffer_release(self->handle);
  Py_CLEAR(self->device);
  PyObject_Free(self);
}

static Py_ssize_t buffer_length(NpuBuffer *self)
{
  return (Py_ssize_t)self->size;
}

/* A view maps the buffer (mappings nest in the runtime); releasing the
 * view unmaps it. The view keeps this object, so the buffer, alive. */
static int buffer_getbuffer(NpuBuffer *self, Py_buffer *view, int flags)
{
  void *ptr = NULL;
  npu_status status = npu_buffer_map(self->handle, NPU_MAP_READ | NPU_MAP_WRITE, &ptr);
  if (status != NPU_OK) {
    npu_py_raise(status);
    return -1;
  }
  if (PyBuffer_FillInfo(view, (PyObject *)self, ptr, (Py_ssize_t)self->size, 0, flags) < 0) {
    npu_buffer_unmap(self->handle);
    return -1;
  }
  return 0;
}

static void buffer_releasebuffer(NpuBuffer *self, Py_buffer *view)
{
  (void)view;
  npu_buffer_unmap(self->handle);
}

static PyObject *buffer_export_fd(NpuBuffer *self, PyObject *unused)
{
  (void)unused;
  int fd = -1;
  size_t offset = 0;
  npu_status status = npu_buffer_export_fd(self->handle, &fd, &offset);
  return status == NPU_OK ? Py_BuildValue("(in)", fd, (Py_ssize_t)offset) : npu_py_raise(status);
}

static PyObject *buffer_repr(NpuBuffer *self)
{
  return PyUnicode_FromFormat("<npu.Buffer %zu bytes>", self->size);
}

static PyMethodDef buffer_methods[] = {
    {"export_fd", NPU_PY_FN(buffer_export_fd), METH_NOARGS,
     "export_fd() -> (fd, offset): a file descriptor (memfd or dma-buf) mapping the same "
     "bytes from offset; the caller closes it"},
    {NULL},
};

static PyMemberDef buffer_members[] = {
    {"device", T_OBJECT, offsetof(NpuBuffer, device), READONLY, "the buffer's device"},
    {"size", T_PYSSIZET, offsetof(NpuBuffer, size), READONLY, "bytes"},
    {NULL},
};

static PySequenceMethods buffer_sequence = {.sq_length = (lenfunc)buffer_length};

static PyBufferProcs buffer_procs = {
    .bf_getbuffer = (getbufferproc)buffer_getbuffer,
    .bf_releasebuffer = (releasebufferproc)buffer_releasebuffer,
};

PyTypeObject NpuBuffer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npu.Buffer",
    .tp_doc = "Buffer(size, device=None): device memory. Copy with npu.memcpy; where the "
              "device memory is host-visible, np.asarray(buffer) / memoryview(buffer) is a "
              "uint8 view of it (npu.Error otherwise).",
    .tp_basicsize = sizeof(NpuBuffer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = buffer_new,
    .tp_dealloc = (destructor)buffer_dealloc,
    .tp_repr = (reprfunc)buffer_repr,
    .tp_methods = buffer_methods,
    .tp_members = buffer_members,
    .tp_as_sequence = &buffer_sequence,
    .tp_as_buffer = &buffer_procs,
};
