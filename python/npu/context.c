/* npu.Context: a model planned for one device and one set of input shapes;
 * run() and run_async() move numpy arrays in and out around each run. */
#include "npu_py.h"

/* Each input's dims: the model's, with `shapes` (a dict by name or a
 * sequence in input order, or None) filling in its open axes. */
static int parse_shapes(NpuModel *model, PyObject *shapes, npu_tensor_info *infos, uint32_t n)
{
  if (shapes != Py_None && !PyDict_Check(shapes) &&
      (!PySequence_Check(shapes) || PySequence_Size(shapes) != (Py_ssize_t)n)) {
    PyErr_Format(PyExc_TypeError, "shapes must be a dict by input name or a sequence of %u "
                 "shapes", n);
    return -1;
  }
  Py_ssize_t named = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (npu_py_check_status(npu_model_input_info(model->handle, i, &infos[i])) < 0)
      return -1;
    PyObject *dims = shapes == Py_None   ? NULL
                     : PyDict_Check(shapes) ? Py_XNewRef(PyDict_GetItemString(shapes, infos[i].name))
                                            : PySequence_GetItem(shapes, i);
    if (!dims) {
      if (PyErr_Occurred())
        return -1;
      continue;
    }
    named++;
    PyObject *fast = PySequence_Fast(dims, "a shape must be a sequence of ints");
    Py_DECREF(dims);
    if (!fast)
      return -1;
    Py_ssize_t rank = PySequence_Fast_GET_SIZE(fast);
    if (rank != (Py_ssize_t)infos[i].rank) {
      PyErr_Format(PyExc_ValueError, "input '%s' has %u dims, the shape given has %zd",
                   infos[i].name, infos[i].rank, rank);
      Py_DECREF(fast);
      return -1;
    }
    for (Py_ssize_t d = 0; d < rank && !PyErr_Occurred(); d++)
      infos[i].dims[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, d));
    Py_DECREF(fast);
    if (PyErr_Occurred())
      return -1;
  }
  if (PyDict_Check(shapes) && named != PyDict_Size(shapes)) {
    PyErr_Format(PyExc_KeyError, "shapes names an input the model does not have (%R)",
                 shapes);
    return -1;
  }
  return 0;
}

/* The concrete inputs and outputs of the current plan. */
static int query_info(NpuContext *self)
{
  if (!self->info)
    self->info = PyMem_Calloc(self->n_inputs + self->n_outputs, sizeof *self->info);
  if (!self->info) {
    PyErr_NoMemory();
    return -1;
  }
  for (uint32_t i = 0; i < self->n_inputs + self->n_outputs; i++) {
    npu_status status = i < self->n_inputs
                            ? npu_context_input_info(self->handle, i, &self->info[i])
                            : npu_context_output_info(self->handle, i - self->n_inputs,
                                                      &self->info[i]);
    if (status != NPU_OK) {
      npu_py_raise(status);
      return -1;
    }
  }
  return 0;
}

static PyObject *context_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"model", "device", "shapes", "precision", NULL};
  NpuModel *model;
  PyObject *device_arg = Py_None, *shapes = Py_None;
  const char *precision = "fp32";
  npu_context_options options = {0};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|OOs:Context", keywords, &NpuModel_Type,
                                   &model, &device_arg, &shapes, &precision) ||
      npu_py_check_status(npu_precision_from_name(precision, &options.precision)) < 0)
    return NULL;
  NpuContext *self = (NpuContext *)type->tp_alloc(type, 0);
  if (!self)
    return NULL;
  self->model = (NpuModel *)Py_NewRef(model);
  self->device = npu_py_device_arg(device_arg);
  npu_tensor_info *shape_infos = NULL;
  npu_status status = NPU_OK;
  if (!self->device ||
      npu_py_check_status(npu_model_input_count(model->handle, &self->n_inputs)) < 0 ||
      npu_py_check_status(npu_model_output_count(model->handle, &self->n_outputs)) < 0)
    goto fail;
  shape_infos = PyMem_Calloc(self->n_inputs ? self->n_inputs : 1, sizeof *shape_infos);
  if (!shape_infos) {
    PyErr_NoMemory();
    goto fail;
  }
  if (parse_shapes(model, shapes, shape_infos, self->n_inputs) < 0)
    goto fail;
  Py_BEGIN_ALLOW_THREADS
  status = npu_context_create_with_options(model->handle, self->device->handle, shape_infos,
                                           self->n_inputs, &options, &self->handle);
  Py_END_ALLOW_THREADS
  if (npu_py_check_status(status) < 0 || query_info(self) < 0 ||
      npu_py_check_status(npu_mem_pool_create(self->device->handle, NULL, &self->pool)) < 0 ||
      !(self->stream = npu_py_stream_new(self->device)))
    goto fail;
  PyMem_Free(shape_infos);
  return (PyObject *)self;
fail:
  PyMem_Free(shape_infos);
  Py_DECREF(self);
  return NULL;
}

static void context_dealloc(NpuContext *self)
{
  Py_CLEAR(self->stream); /* waits for its work */
  if (self->handle)
    npu_context_destroy(self->handle);
  if (self->pool)
    npu_mem_pool_destroy(self->pool);
  PyMem_Free(self->info);
  Py_CLEAR(self->device);
  Py_CLEAR(self->model);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* One input as a C-contiguous array of the model's element type. */
static PyObject *input_array(const npu_tensor_info *info, PyObject *value)
{
  return PyArray_FROM_OTF(value, npu_py_typenum(info->dtype),
                          NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
}

/* Re-plans the context when the inputs' shapes differ from the current
 * plan's (open axes of the model: the runtime refuses to change others,
 * and keeps recent plans, so going back to a shape costs nothing). */
static int fit_shapes(NpuContext *self, PyObject *arrays)
{
  npu_tensor_info *shapes = PyMem_Calloc(self->n_inputs ? self->n_inputs : 1, sizeof *shapes);
  if (!shapes) {
    PyErr_NoMemory();
    return -1;
  }
  int same = 1, result = 0;
  for (uint32_t i = 0; result == 0 && i < self->n_inputs; i++) {
    PyArrayObject *array = (PyArrayObject *)PyTuple_GET_ITEM(arrays, i);
    shapes[i] = self->info[i];
    if (PyArray_NDIM(array) != (int)shapes[i].rank) {
      PyErr_Format(PyExc_ValueError, "input '%s' must have %u dims, not %d", shapes[i].name,
                   shapes[i].rank, PyArray_NDIM(array));
      result = -1;
    }
    for (uint32_t d = 0; result == 0 && d < shapes[i].rank; d++) {
      same &= shapes[i].dims[d] == PyArray_DIM(array, (int)d);
      shapes[i].dims[d] = PyArray_DIM(array, (int)d);
    }
  }
  if (result == 0 && !same) {
    npu_status status;
    Py_BEGIN_ALLOW_THREADS
    status = npu_context_reshape(self->handle, shapes, self->n_inputs);
    Py_END_ALLOW_THREADS
    result = npu_py_check_status(status) < 0 ? -1 : query_info(self);
  }
  PyMem_Free(shapes);
  return result;
}

/* The inputs in model order: from a dict by name, a sequence, or a lone
 * array for a one-input model. */
static PyObject *input_arrays(NpuContext *self, PyObject *inputs)
{
  int by_name = PyDict_Check(inputs);
  int single = !by_name && self->n_inputs == 1 && PyArray_Check(inputs);
  if (by_name && PyDict_Size(inputs) != (Py_ssize_t)self->n_inputs)
    return PyErr_Format(PyExc_ValueError, "the model takes %u inputs, %zd given", self->n_inputs,
                        PyDict_Size(inputs));
  PyObject *arrays = PyTuple_New(self->n_inputs);
  for (uint32_t i = 0; arrays && i < self->n_inputs; i++) {
    const npu_tensor_info *info = &self->info[i];
    PyObject *value = single    ? Py_NewRef(inputs)
                      : by_name ? Py_XNewRef(PyDict_GetItemString(inputs, info->name))
                                : PySequence_GetItem(inputs, i);
    if (!value && !PyErr_Occurred())
      PyErr_Format(PyExc_KeyError, "no value for the model input '%s'", info->name);
    PyObject *array = value ? input_array(info, value) : NULL;
    Py_XDECREF(value);
    if (!array)
      Py_CLEAR(arrays);
    else
      PyTuple_SET_ITEM(arrays, i, array);
  }
  if (arrays && fit_shapes(self, arrays) < 0)
    Py_CLEAR(arrays);
  return arrays;
}

static PyObject *output_arrays(NpuContext *self)
{
  PyObject *outputs = PyDict_New();
  for (uint32_t o = 0; outputs && o < self->n_outputs; o++) {
    const npu_tensor_info *info = &self->info[self->n_inputs + o];
    npy_intp dims[NPU_MAX_RANK];
    for (uint32_t d = 0; d < info->rank; d++)
      dims[d] = (npy_intp)info->dims[d];
    PyObject *array = PyArray_SimpleNew((int)info->rank, dims, npu_py_typenum(info->dtype));
    if (!array || PyDict_SetItemString(outputs, info->name, array) < 0)
      Py_CLEAR(outputs);
    Py_XDECREF(array);
  }
  return outputs;
}

/* Takes the run's device buffers from the pool and uploads the inputs,
 * then queues the run and `done` after it. The uploads are synchronous (the
 * CPU device: a memcpy in this thread, no stream task): each run has
 * buffers of its own, which nothing queued uses. The future downloads the
 * outputs once `done` is reached. On a failure the stream is drained, so
 * that nothing queued still uses the buffers when they go. */
static npu_status queue_run(NpuContext *self, npu_stream *stream, NpuFuture *f)
{
  npu_status status = NPU_OK;
  for (uint32_t i = 0; status == NPU_OK && i < f->n_buffers; i++)
    status = npu_mem_pool_alloc(self->pool, f->bytes[i] ? f->bytes[i] : 1, &f->buffers[i]);
  for (uint32_t i = 0; status == NPU_OK && i < f->n_inputs; i++)
    if (f->bytes[i])
      status = npu_memcpy_h2d(f->buffers[i], 0, f->host[i], f->bytes[i]);
  if (status == NPU_OK)
    status = npu_context_run(self->handle, stream, f->buffers, f->buffers + f->n_inputs);
  if (status == NPU_OK)
    status = npu_event_create(self->device->handle, NPU_EVENT_DISABLE_TIMING, &f->done);
  if (status == NPU_OK)
    status = npu_event_record(f->done, stream);
  if (status != NPU_OK)
    npu_stream_synchronize(stream);
  return status;
}

/* The arrays' data and sizes: the inputs (converted), then the outputs. */
static int bind_arrays(NpuContext *self, NpuFuture *f, PyObject *inputs)
{
  uint32_t n = self->n_inputs + self->n_outputs;
  f->n_inputs = self->n_inputs;
  f->buffers = PyMem_Calloc(n ? n : 1, sizeof *f->buffers);
  f->host = PyMem_Calloc(n ? n : 1, sizeof *f->host);
  f->bytes = PyMem_Calloc(n ? n : 1, sizeof *f->bytes);
  if (!f->buffers || !f->host || !f->bytes) {
    PyErr_NoMemory();
    return -1;
  }
  f->n_buffers = n;
  for (uint32_t i = 0; i < n; i++) {
    PyArrayObject *array = (PyArrayObject *)(
        i < self->n_inputs ? PyTuple_GET_ITEM(inputs, i)
                           : PyDict_GetItemString(f->outputs, self->info[i].name));
    f->host[i] = PyArray_DATA(array);
    f->bytes[i] = (size_t)PyArray_NBYTES(array);
  }
  return 0;
}

static NpuFuture *submit(NpuContext *self, PyObject *inputs, NpuStream *stream)
{
  NpuFuture *future = npu_py_future_new(self, stream);
  PyObject *arrays = future ? input_arrays(self, inputs) : NULL;
  if (arrays && (future->outputs = output_arrays(self)) && bind_arrays(self, future, arrays) == 0) {
    npu_status status;
    Py_BEGIN_ALLOW_THREADS
    status = queue_run(self, stream->handle, future);
    Py_END_ALLOW_THREADS
    if (npu_py_check_status(status) == 0) {
      Py_DECREF(arrays); /* uploaded */
      return future;
    }
  }
  Py_XDECREF(arrays);
  Py_XDECREF(future);
  return NULL;
}

static PyObject *context_run_async(NpuContext *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"inputs", "stream", NULL};
  PyObject *inputs, *stream = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:run_async", keywords, &inputs, &stream))
    return NULL;
  if (stream != Py_None && !PyObject_TypeCheck(stream, &NpuStream_Type))
    return PyErr_Format(PyExc_TypeError, "stream must be an npu.Stream or None");
  return (PyObject *)submit(self, inputs, stream == Py_None ? self->stream : (NpuStream *)stream);
}

static PyObject *context_run(NpuContext *self, PyObject *inputs)
{
  NpuFuture *future = submit(self, inputs, self->stream);
  if (!future)
    return NULL;
  PyObject *outputs = npu_py_future_result(future);
  Py_DECREF(future);
  return outputs;
}

static PyObject *info_at(const void *info, Py_ssize_t index)
{
  return npu_py_tensor_info((const npu_tensor_info *)info + index);
}

static PyObject *context_inputs(NpuContext *self, void *closure)
{
  (void)closure;
  return npu_py_list(self->n_inputs, info_at, self->info);
}

static PyObject *context_outputs(NpuContext *self, void *closure)
{
  (void)closure;
  return npu_py_list(self->n_outputs, info_at, self->info + self->n_inputs);
}

static PyObject *context_stats(NpuContext *self, PyObject *unused)
{
  (void)unused;
  npu_context_stats s;
  npu_status status = npu_context_get_stats(self->handle, &s);
  if (status != NPU_OK)
    return npu_py_raise(status);
  return Py_BuildValue("{s:K,s:K,s:K,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:K,s:N}", "arena_bytes",
                       (unsigned long long)s.arena_bytes, "naive_bytes",
                       (unsigned long long)s.naive_bytes, "constant_bytes",
                       (unsigned long long)s.constant_bytes, "kernels", s.kernels,
                       "folded_nodes", s.folded_nodes, "fused_nodes", s.fused_nodes,
                       "relaid_tensors", s.relaid_tensors, "shape_plans", s.shape_plans,
                       "subgraphs", s.subgraphs, "host_kernels", s.host_kernels,
                       "transfer_bytes", (unsigned long long)s.transfer_bytes, "stream",
                       npu_py_stream_stats(self->stream->handle));
}

static PyMethodDef context_methods[] = {
    {"run", NPU_PY_FN(context_run), METH_O,
     "run(inputs) -> {name: ndarray}: one inference (the GIL released while it runs). inputs: "
     "a dict by input name, a sequence in input order, or one array for a one-input model; "
     "each converted to the input's dtype (safe casts only). Inputs of another shape re-plan "
     "the context (only axes the model leaves open may change; recent plans are kept)"},
    {"run_async", NPU_PY_FN(context_run_async), METH_VARARGS | METH_KEYWORDS,
     "run_async(inputs, stream=None) -> Future: uploads the inputs, queues the run on the "
     "stream (default: the context's own) and returns; Future.result() downloads the outputs. "
     "A context runs one inference at a time (queuing a run waits for its previous one): for "
     "concurrent streams, use one context per stream (they share the model's weights)"},
    {"stats", NPU_PY_FN(context_stats), METH_NOARGS,
     "stats() -> dict: arena/naive/constant bytes, kernels per run, folded and fused nodes, "
     "relaid tensors, shapes planned, the partition (subgraphs, host kernels, bytes "
     "transferred per run) and the context's stream's task counts and busy time"},
    {NULL},
};

static PyGetSetDef context_getset[] = {
    {"inputs", (getter)context_inputs, NULL, "[TensorInfo]: the planned (concrete) inputs", NULL},
    {"outputs", (getter)context_outputs, NULL, "[TensorInfo]: the planned outputs", NULL},
    {NULL},
};

static PyMemberDef context_members[] = {
    {"model", T_OBJECT, offsetof(NpuContext, model), READONLY, "the model"},
    {"device", T_OBJECT, offsetof(NpuContext, device), READONLY, "the device"},
    {"stream", T_OBJECT, offsetof(NpuContext, stream), READONLY,
     "the context's own stream (run(), and run_async() without one)"},
    {NULL},
};

PyTypeObject NpuContext_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npu.Context",
    .tp_doc = "Context(model, device=None, shapes=None, precision='fp32'): the model planned "
              "for a device and one set of input shapes (shapes: {name: dims} or a list in "
              "input order, needed for axes the model leaves open; precision: 'fp32' or "
              "'bf16', bfloat16 products where the device has them). Running it allocates no "
              "device memory after the first runs.",
    .tp_basicsize = sizeof(NpuContext),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = context_new,
    .tp_dealloc = (destructor)context_dealloc,
    .tp_methods = context_methods,
    .tp_getset = context_getset,
    .tp_members = context_members,
};
