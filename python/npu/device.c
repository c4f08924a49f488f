/* npu.Device and the device enumeration functions. */
#include "npu_py.h"

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"index", "backend", NULL};
  PyObject *index_arg = Py_None;
  const char *backend = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Oz:Device", keywords, &index_arg, &backend))
    return NULL;
  unsigned long index = 0;
  if (index_arg != Py_None) {
    index = PyLong_AsUnsignedLong(index_arg);
    if (PyErr_Occurred())
      return NULL;
  }
  npu_device *handle = NULL;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  if (backend)
    status = npu_device_open_by_backend(backend, (uint32_t)index, &handle);
  else if (index_arg != Py_None)
    status = npu_device_open((uint32_t)index, &handle);
  else
    status = npu_device_open_default(&handle);
  Py_END_ALLOW_THREADS
  if (status != NPU_OK)
    return npu_py_raise(status);
  NpuDevice *self = (NpuDevice *)type->tp_alloc(type, 0);
  if (!self) {
    npu_device_release(handle);
    return NULL;
  }
  self->handle = handle;
  return (PyObject *)self;
}

static void device_dealloc(NpuDevice *self)
{
  if (self->sync_stream) {
    Py_BEGIN_ALLOW_THREADS
    npu_stream_destroy(self->sync_stream);
    Py_END_ALLOW_THREADS
  }
  if (self->handle)
    npu_device_release(self->handle);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

NpuDevice *npu_py_device_arg(PyObject *arg)
{
  if (arg && arg != Py_None) {
    if (!PyObject_TypeCheck(arg, &NpuDevice_Type))
      return (NpuDevice *)PyErr_Format(PyExc_TypeError, "device must be an npu.Device, not %s",
                                       Py_TYPE(arg)->tp_name);
    return (NpuDevice *)Py_NewRef(arg);
  }
  return (NpuDevice *)PyObject_CallNoArgs((PyObject *)&NpuDevice_Type);
}

/* A bare handle, not an npu.Stream: that would hold the device, a cycle. */
npu_stream *npu_py_device_sync_stream(NpuDevice *device)
{
  if (!device->sync_stream && npu_py_check_status(npu_stream_create(device->handle,
                                                                    &device->sync_stream)) < 0)
    return NULL;
  return device->sync_stream;
}

static PyObject *caps_dict(const npu_device_caps *c)
{
  return Py_BuildValue("{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:I,s:O}",
                       "host_visible_memory", c->host_visible_memory ? Py_True : Py_False,
                       "host_import", c->host_import ? Py_True : Py_False,
                       "fd_export", c->fd_export ? Py_True : Py_False,
                       "dmabuf_export", c->dmabuf_export ? Py_True : Py_False,
                       "fd_import", c->fd_import ? Py_True : Py_False,
                       "async_copy", c->async_copy ? Py_True : Py_False,
                       "cross_stream_events", c->cross_stream_events ? Py_True : Py_False,
                       "max_streams", c->max_streams,
                       "bf16_compute", c->bf16_compute ? Py_True : Py_False);
}

static PyObject *properties_dict(const npu_device_properties *p)
{
  PyObject *caps = caps_dict(&p->caps);
  if (!caps)
    return NULL;
  return Py_BuildValue("{s:s,s:s,s:I,s:K,s:K,s:I,s:I,s:N}", "name", p->name, "backend",
                       p->backend, "index", p->index, "memory_total",
                       (unsigned long long)p->memory_total, "memory_free",
                       (unsigned long long)p->memory_free, "compute_units", p->compute_units,
                       "row_alignment", p->row_alignment, "caps", caps);
}

static int properties_of(NpuDevice *self, npu_device_properties *props)
{
  npu_status status = npu_device_properties_of(self->handle, props);
  if (status != NPU_OK) {
    npu_py_raise(status);
    return -1;
  }
  return 0;
}

static PyObject *device_properties(NpuDevice *self, PyObject *unused)
{
  (void)unused;
  npu_device_properties props;
  return properties_of(self, &props) ? NULL : properties_dict(&props);
}

static PyObject *device_memory_info(NpuDevice *self, PyObject *unused)
{
  (void)unused;
  npu_device_properties props;
  if (properties_of(self, &props))
    return NULL;
  return Py_BuildValue("(KK)", (unsigned long long)props.memory_free,
                       (unsigned long long)props.memory_total);
}

static PyObject *device_stats(NpuDevice *self, PyObject *unused)
{
  (void)unused;
  npu_device_stats s;
  npu_status status = npu_device_get_stats(self->handle, &s);
  if (status != NPU_OK)
    return npu_py_raise(status);
  return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "allocations",
                       (unsigned long long)s.allocations, "frees", (unsigned long long)s.frees,
                       "bytes_allocated", (unsigned long long)s.bytes_allocated,
                       "bytes_allocated_peak", (unsigned long long)s.bytes_allocated_peak,
                       "imports", (unsigned long long)s.imports, "bytes_h2d",
                       (unsigned long long)s.bytes_h2d, "bytes_d2h",
                       (unsigned long long)s.bytes_d2h, "bytes_d2d",
                       (unsigned long long)s.bytes_d2d, "copies", (unsigned long long)s.copies);
}

static PyObject *device_synchronize(NpuDevice *self, PyObject *unused)
{
  (void)unused;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = npu_device_synchronize(self->handle);
  Py_END_ALLOW_THREADS
  return status == NPU_OK ? Py_NewRef(Py_None) : npu_py_raise(status);
}

static PyObject *device_property(NpuDevice *self, void *field)
{
  npu_device_properties props;
  if (properties_of(self, &props))
    return NULL;
  if (field == (void *)0)
    return PyUnicode_FromString(props.name);
  if (field == (void *)1)
    return PyUnicode_FromString(props.backend);
  return PyLong_FromUnsignedLong(props.index);
}

static PyObject *device_repr(NpuDevice *self)
{
  npu_device_properties props;
  if (properties_of(self, &props))
    return NULL;
  return PyUnicode_FromFormat("<npu.Device %u: %s (%s)>", props.index, props.name,
                              props.backend);
}

static PyMethodDef device_methods[] = {
    {"properties", NPU_PY_FN(device_properties), METH_NOARGS,
     "properties() -> dict: name, backend, index, memory_total, memory_free, compute_units, "
     "row_alignment, caps"},
    {"memory_info", NPU_PY_FN(device_memory_info), METH_NOARGS,
     "memory_info() -> (free, total) bytes"},
    {"stats", NPU_PY_FN(device_stats), METH_NOARGS,
     "stats() -> dict: allocations, frees, bytes live/peak, imports, bytes copied per "
     "direction, copies"},
    {"synchronize", NPU_PY_FN(device_synchronize), METH_NOARGS,
     "synchronize(): waits until every stream of the device is idle"},
    {NULL},
};

static PyGetSetDef device_getset[] = {
    {"name", (getter)device_property, NULL, "device name", (void *)0},
    {"backend", (getter)device_property, NULL, "backend name, e.g. 'cpu'", (void *)1},
    {"index", (getter)device_property, NULL, "global device index", (void *)2},
    {NULL},
};

PyTypeObject NpuDevice_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npu.Device",
    .tp_doc = "Device(index=None, backend=None): an open device. No arguments: the device "
              "NPU_BACKEND / NPU_DEVICE choose (default the first CPU device); index alone: "
              "a global index; backend: the index-th device of that backend.",
    .tp_basicsize = sizeof(NpuDevice),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = device_new,
    .tp_dealloc = (destructor)device_dealloc,
    .tp_repr = (reprfunc)device_repr,
    .tp_methods = device_methods,
    .tp_getset = device_getset,
};

static PyObject *module_device_count(PyObject *module, PyObject *unused)
{
  (void)module;
  (void)unused;
  uint32_t count = 0;
  npu_status status = npu_device_count(&count);
  return status == NPU_OK ? PyLong_FromUnsignedLong(count) : npu_py_raise(status);
}

static PyObject *device_at(const void *unused, Py_ssize_t index)
{
  (void)unused;
  return PyObject_CallFunction((PyObject *)&NpuDevice_Type, "n", index);
}

static PyObject *backend_at(const void *unused, Py_ssize_t index)
{
  (void)unused;
  const char *name = NULL;
  npu_status status = npu_backend_name((uint32_t)index, &name);
  return status == NPU_OK ? PyUnicode_FromString(name) : npu_py_raise(status);
}

static PyObject *list_of(npu_status (*count_of)(uint32_t *), npu_py_item_fn item)
{
  uint32_t count = 0;
  npu_status status = count_of(&count);
  return status == NPU_OK ? npu_py_list(count, item, NULL) : npu_py_raise(status);
}

static PyObject *module_devices(PyObject *module, PyObject *unused)
{
  (void)module;
  (void)unused;
  return list_of(npu_device_count, device_at);
}

static PyObject *module_backends(PyObject *module, PyObject *unused)
{
  (void)module;
  (void)unused;
  return list_of(npu_backend_count, backend_at);
}

PyMethodDef npu_py_device_functions[] = {
    {"device_count", NPU_PY_FN(module_device_count), METH_NOARGS,
     "device_count() -> number of devices of all backends"},
    {"devices", NPU_PY_FN(module_devices), METH_NOARGS, "devices() -> [Device], every device"},
    {"backends", NPU_PY_FN(module_backends), METH_NOARGS,
     "backends() -> [str], the backends compiled in"},
    {NULL},
};
