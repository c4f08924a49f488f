/* npu.Model: an ONNX model loaded and validated once, shared by contexts. */
#include "npu_py.h"

static PyObject *model_wrap(PyTypeObject *type, npu_model *handle)
{
  NpuModel *self = (NpuModel *)type->tp_alloc(type, 0);
  if (!self) {
    npu_model_release(handle);
    return NULL;
  }
  self->handle = handle;
  return (PyObject *)self;
}

static PyObject *model_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"path", NULL};
  PyObject *path = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&:Model", keywords, PyUnicode_FSConverter,
                                   &path))
    return NULL;
  npu_model *handle = NULL;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = npu_model_load_file(PyBytes_AS_STRING(path), &handle);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  return status == NPU_OK ? model_wrap(type, handle) : npu_py_raise(status);
}

static PyObject *model_from_bytes(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"data", "base_dir", NULL};
  Py_buffer data;
  PyObject *base_dir = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|O&:from_bytes", keywords, &data,
                                   PyUnicode_FSConverter, &base_dir))
    return NULL;
  npu_model *handle = NULL;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = npu_model_load_memory(data.buf, (size_t)data.len,
                                 base_dir ? PyBytes_AS_STRING(base_dir) : NULL, &handle);
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&data);
  Py_XDECREF(base_dir);
  return status == NPU_OK ? model_wrap(type, handle) : npu_py_raise(status);
}

static void model_dealloc(NpuModel *self)
{
  if (self->handle)
    npu_model_release(self->handle);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

typedef npu_status (*count_fn)(npu_model *, uint32_t *);
typedef npu_status (*info_fn)(npu_model *, uint32_t, npu_tensor_info *);

typedef struct tensors {
  npu_model *model;
  info_fn info_of;
} tensors;

static PyObject *tensor_at(const void *source, Py_ssize_t index)
{
  const tensors *t = source;
  npu_tensor_info info;
  npu_status status = t->info_of(t->model, (uint32_t)index, &info);
  return status == NPU_OK ? npu_py_tensor_info(&info) : npu_py_raise(status);
}

static PyObject *tensor_list(NpuModel *self, count_fn count_of, info_fn info_of)
{
  uint32_t count = 0;
  npu_status status = count_of(self->handle, &count);
  tensors source = {self->handle, info_of};
  return status == NPU_OK ? npu_py_list(count, tensor_at, &source) : npu_py_raise(status);
}

static PyObject *model_inputs(NpuModel *self, void *closure)
{
  (void)closure;
  return tensor_list(self, npu_model_input_count, npu_model_input_info);
}

static PyObject *model_outputs(NpuModel *self, void *closure)
{
  (void)closure;
  return tensor_list(self, npu_model_output_count, npu_model_output_info);
}

static PyObject *model_opset(NpuModel *self, void *closure)
{
  (void)closure;
  int64_t opset = 0;
  npu_status status = npu_model_opset(self->handle, &opset);
  return status == NPU_OK ? PyLong_FromLongLong(opset) : npu_py_raise(status);
}

static PyObject *model_node_count(NpuModel *self, void *closure)
{
  (void)closure;
  uint32_t count = 0;
  npu_status status = npu_model_node_count(self->handle, &count);
  return status == NPU_OK ? PyLong_FromUnsignedLong(count) : npu_py_raise(status);
}

static PyMethodDef model_methods[] = {
    {"from_bytes", NPU_PY_FN(model_from_bytes), METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Model.from_bytes(data, base_dir=None) -> Model: loads ONNX bytes (copied); external "
     "data is looked up in base_dir"},
    {NULL},
};

static PyGetSetDef model_getset[] = {
    {"inputs", (getter)model_inputs, NULL, "[TensorInfo]: the model's inputs", NULL},
    {"outputs", (getter)model_outputs, NULL, "[TensorInfo]: the model's outputs", NULL},
    {"opset", (getter)model_opset, NULL, "the default-domain opset it was exported with", NULL},
    {"node_count", (getter)model_node_count, NULL, "number of graph nodes", NULL},
    {NULL},
};

PyTypeObject NpuModel_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npu.Model",
    .tp_doc = "Model(path): loads and validates an ONNX model (a bad one raises npu.Error "
              "naming the node and the problem). Plan it for a device with npu.Context.",
    .tp_basicsize = sizeof(NpuModel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = model_new,
    .tp_dealloc = (destructor)model_dealloc,
    .tp_methods = model_methods,
    .tp_getset = model_getset,
};
