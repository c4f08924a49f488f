/* npu.HostMemory: page-locked host memory for fast async copies, usable
 * wherever a writable buffer is (np.asarray(memory) is a uint8 view). */
#include "npu_py.h"

typedef struct NpuHostMemory {
  PyObject_HEAD
  void *ptr;
  size_t size;
  NpuDevice *device;
} NpuHostMemory;

static PyObject *host_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"size", "device", NULL};
  Py_ssize_t size = 0;
  PyObject *device_arg = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n|O:HostMemory", keywords, &size,
                                   &device_arg))
    return NULL;
  if (size < 0)
    return PyErr_Format(PyExc_ValueError, "size must not be negative");
  NpuDevice *device = npu_py_device_arg(device_arg);
  if (!device)
    return NULL;
  NpuHostMemory *self = (NpuHostMemory *)type->tp_alloc(type, 0);
  if (!self) {
    Py_DECREF(device);
    return NULL;
  }
  self->device = device;
  self->size = (size_t)size;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = npu_host_alloc(device->handle, self->size, &self->ptr);
  Py_END_ALLOW_THREADS
  if (status != NPU_OK) {
    Py_DECREF(self);
    return npu_py_raise(status);
  }
  return (PyObject *)self;
}

static void host_dealloc(NpuHostMemory *self)
{
  if (self->ptr)
    npu_host_free(self->device->handle, self->ptr);
  Py_CLEAR(self->device);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t host_length(NpuHostMemory *self)
{
  return (Py_ssize_t)self->size;
}

static int host_getbuffer(NpuHostMemory *self, Py_buffer *view, int flags)
{
  return PyBuffer_FillInfo(view, (PyObject *)self, self->ptr, (Py_ssize_t)self->size, 0, flags);
}

static PyObject *host_repr(NpuHostMemory *self)
{
  return PyUnicode_FromFormat("<npu.HostMemory %zu bytes>", self->size);
}

static PyMemberDef host_members[] = {
    {"device", T_OBJECT, offsetof(NpuHostMemory, device), READONLY, "the allocating device"},
    {"size", T_PYSSIZET, offsetof(NpuHostMemory, size), READONLY, "bytes"},
    {NULL},
};

static PySequenceMethods host_sequence = {.sq_length = (lenfunc)host_length};

static PyBufferProcs host_procs = {.bf_getbuffer = (getbufferproc)host_getbuffer};

PyTypeObject NpuHostMemory_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npu.HostMemory",
    .tp_doc = "HostMemory(size, device=None): page-locked host memory (npu_host_alloc) for "
              "fast async copies; a writable buffer: np.frombuffer(memory, dtype) views it.",
    .tp_basicsize = sizeof(NpuHostMemory),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = host_new,
    .tp_dealloc = (destructor)host_dealloc,
    .tp_repr = (reprfunc)host_repr,
    .tp_members = host_members,
    .tp_as_sequence = &host_sequence,
    .tp_as_buffer = &host_procs,
};
