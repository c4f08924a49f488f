/* npu.Pool: a caching device-memory pool; its buffers are npu.Buffer
 * objects that go back to the pool when the last reference goes. */
#include "npu_py.h"

typedef struct NpuPool {
  PyObject_HEAD
  npu_mem_pool *handle;
  NpuDevice *device;
} NpuPool;

static PyObject *pool_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"device", "max_cached_bytes", NULL};
  PyObject *device_arg = Py_None;
  Py_ssize_t max_cached = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|On:Pool", keywords, &device_arg,
                                   &max_cached))
    return NULL;
  if (max_cached < 0)
    return PyErr_Format(PyExc_ValueError, "max_cached_bytes must not be negative");
  NpuDevice *device = npu_py_device_arg(device_arg);
  if (!device)
    return NULL;
  NpuPool *self = (NpuPool *)type->tp_alloc(type, 0);
  if (!self) {
    Py_DECREF(device);
    return NULL;
  }
  self->device = device;
  npu_mem_pool_config config = {.max_cached_bytes = (size_t)max_cached};
  npu_status status = npu_mem_pool_create(device->handle, &config, &self->handle);
  if (status != NPU_OK) {
    Py_DECREF(self);
    return npu_py_raise(status);
  }
  return (PyObject *)self;
}

/* Buffers still out stay valid: the runtime frees them when released. */
static void pool_dealloc(NpuPool *self)
{
  if (self->handle)
    npu_mem_pool_destroy(self->handle);
  Py_CLEAR(self->device);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *pool_alloc(NpuPool *self, PyObject *arg)
{
  Py_ssize_t size = PyLong_AsSsize_t(arg);
  if (size < 0)
    return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "size must not be negative");
  npu_buffer *handle = NULL;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = npu_mem_pool_alloc(self->handle, (size_t)size, &handle);
  Py_END_ALLOW_THREADS
  return status == NPU_OK ? (PyObject *)npu_py_buffer_wrap(self->device, handle)
                          : npu_py_raise(status);
}

static PyObject *pool_trim(NpuPool *self, PyObject *unused)
{
  (void)unused;
  npu_status status = npu_mem_pool_trim(self->handle);
  return status == NPU_OK ? Py_NewRef(Py_None) : npu_py_raise(status);
}

static PyObject *pool_stats(NpuPool *self, PyObject *unused)
{
  (void)unused;
  npu_mem_pool_stats s;
  npu_status status = npu_mem_pool_get_stats(self->handle, &s);
  if (status != NPU_OK)
    return npu_py_raise(status);
  return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "requests",
                       (unsigned long long)s.requests, "hits", (unsigned long long)s.hits,
                       "allocations", (unsigned long long)s.allocations, "frees",
                       (unsigned long long)s.frees, "bytes_live", (unsigned long long)s.bytes_live,
                       "bytes_live_peak", (unsigned long long)s.bytes_live_peak, "bytes_cached",
                       (unsigned long long)s.bytes_cached);
}

static PyMethodDef pool_methods[] = {
    {"alloc", NPU_PY_FN(pool_alloc), METH_O,
     "alloc(size) -> Buffer, from cached memory when a released one fits"},
    {"trim", NPU_PY_FN(pool_trim), METH_NOARGS, "trim(): frees all idle cached memory now"},
    {"stats", NPU_PY_FN(pool_stats), METH_NOARGS,
     "stats() -> dict: requests, hits, allocations, frees, bytes_live, bytes_live_peak, "
     "bytes_cached"},
    {NULL},
};

static PyMemberDef pool_members[] = {
    {"device", T_OBJECT, offsetof(NpuPool, device), READONLY, "the pool's device"},
    {NULL},
};

PyTypeObject NpuPool_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npu.Pool",
    .tp_doc = "Pool(device=None, max_cached_bytes=0): caching device-memory pool (0: 256 MiB "
              "kept idle at most); a steady workload stops allocating after warm-up.",
    .tp_basicsize = sizeof(NpuPool),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = pool_new,
    .tp_dealloc = (destructor)pool_dealloc,
    .tp_methods = pool_methods,
    .tp_members = pool_members,
};
