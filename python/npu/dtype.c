/* Element types between the runtime (ONNX codes) and numpy, and
 * npu.TensorInfo, the description of a model's input or output. */
#include "npu_py.h"

int npu_py_typenum(npu_dtype dtype)
{
  switch (dtype) {
  case NPU_DTYPE_FLOAT32: return NPY_FLOAT32;
  case NPU_DTYPE_UINT8: return NPY_UINT8;
  case NPU_DTYPE_INT8: return NPY_INT8;
  case NPU_DTYPE_UINT16: return NPY_UINT16;
  case NPU_DTYPE_UINT32: return NPY_UINT32;
  case NPU_DTYPE_UINT64: return NPY_UINT64;
  case NPU_DTYPE_INT16: return NPY_INT16;
  case NPU_DTYPE_INT32: return NPY_INT32;
  case NPU_DTYPE_INT64: return NPY_INT64;
  case NPU_DTYPE_BOOL: return NPY_BOOL;
  case NPU_DTYPE_FLOAT16: return NPY_FLOAT16;
  case NPU_DTYPE_FLOAT64: return NPY_FLOAT64;
  default: return -1;
  }
}

PyObject *npu_py_dtype_object(npu_dtype dtype)
{
  int typenum = npu_py_typenum(dtype);
  if (typenum < 0)
    return PyErr_Format(PyExc_ValueError, "element type %d (%s) has no numpy equivalent",
                        (int)dtype, npu_dtype_name(dtype));
  return (PyObject *)PyArray_DescrFromType(typenum);
}

static PyStructSequence_Field tensor_info_fields[] = {
    {"name", "the tensor's name in the model"},
    {"dtype", "numpy dtype of its elements"},
    {"shape", "dims; None where the model leaves an axis open"},
    {"dim_names", "the symbolic name of each open axis, else None"},
    {NULL, NULL},
};

static PyStructSequence_Desc tensor_info_desc = {
    .name = "npu.TensorInfo",
    .doc = "A model input or output: (name, dtype, shape, dim_names).",
    .fields = tensor_info_fields,
    .n_in_sequence = 4,
};

PyTypeObject *NpuTensorInfo_Type;

PyObject *npu_py_tensor_info(const npu_tensor_info *info)
{
  PyObject *result = PyStructSequence_New(NpuTensorInfo_Type);
  PyObject *shape = PyTuple_New(info->rank), *names = PyTuple_New(info->rank);
  PyObject *dtype = npu_py_dtype_object(info->dtype);
  PyObject *name = PyUnicode_FromString(info->name ? info->name : "");
  if (!result || !shape || !names || !dtype || !name)
    goto fail;
  for (uint32_t d = 0; d < info->rank; d++) {
    PyObject *dim = info->dims[d] == NPU_DIM_DYNAMIC ? Py_NewRef(Py_None)
                                                     : PyLong_FromLongLong(info->dims[d]);
    PyObject *dim_name = info->dim_names[d] ? PyUnicode_FromString(info->dim_names[d])
                                            : Py_NewRef(Py_None);
    if (!dim || !dim_name) {
      Py_XDECREF(dim);
      Py_XDECREF(dim_name);
      goto fail;
    }
    PyTuple_SET_ITEM(shape, d, dim);
    PyTuple_SET_ITEM(names, d, dim_name);
  }
  PyStructSequence_SET_ITEM(result, 0, name);
  PyStructSequence_SET_ITEM(result, 1, dtype);
  PyStructSequence_SET_ITEM(result, 2, shape);
  PyStructSequence_SET_ITEM(result, 3, names);
  return result;
fail:
  Py_XDECREF(result);
  Py_XDECREF(shape);
  Py_XDECREF(names);
  Py_XDECREF(dtype);
  Py_XDECREF(name);
  return NULL;
}

int npu_py_tensor_info_init(PyObject *module)
{
  NpuTensorInfo_Type = PyStructSequence_NewType(&tensor_info_desc);
  if (!NpuTensorInfo_Type)
    return -1;
  return PyModule_AddObjectRef(module, "TensorInfo", (PyObject *)NpuTensorInfo_Type);
}
