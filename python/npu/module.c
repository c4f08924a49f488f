/* The `npu._npu` extension module: registers the types and functions of
 * the other files (the `npu` package re-exports them). */
#define NPU_PY_IMPORTS_NUMPY
#include "npu_py.h"

static PyObject *module_dtype(PyObject *module, PyObject *code)
{
  (void)module;
  long value = PyLong_AsLong(code);
  if (value == -1 && PyErr_Occurred())
    return NULL;
  return npu_py_dtype_object((npu_dtype)value);
}

static PyMethodDef module_functions[] = {
    {"numpy_dtype", NPU_PY_FN(module_dtype), METH_O,
     "numpy_dtype(code) -> numpy dtype of an ONNX element type code (1 float32, 7 int64...)"},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "npu._npu",
    .m_doc = "gst-npu's runtime (libnpu) from Python: devices, streams, events, memory, pools, "
             "models, contexts, VPP and post-processing.",
    .m_size = -1,
    .m_methods = module_functions,
};

static int add_type(PyObject *module, PyTypeObject *type, const char *name)
{
  return PyType_Ready(type) < 0 ? -1 : PyModule_AddObjectRef(module, name, (PyObject *)type);
}

PyMODINIT_FUNC PyInit__npu(void)
{
  import_array();
  PyObject *module = PyModule_Create(&module_def);
  if (!module)
    return NULL;
  if (npu_py_error_init(module) < 0 || npu_py_tensor_info_init(module) < 0 ||
      add_type(module, &NpuDevice_Type, "Device") < 0 ||
      add_type(module, &NpuStream_Type, "Stream") < 0 ||
      add_type(module, &NpuEvent_Type, "Event") < 0 ||
      add_type(module, &NpuBuffer_Type, "Buffer") < 0 ||
      add_type(module, &NpuHostMemory_Type, "HostMemory") < 0 ||
      add_type(module, &NpuPool_Type, "Pool") < 0 ||
      add_type(module, &NpuModel_Type, "Model") < 0 ||
      add_type(module, &NpuContext_Type, "Context") < 0 ||
      add_type(module, &NpuFuture_Type, "Future") < 0 ||
      PyModule_AddFunctions(module, npu_py_device_functions) < 0 ||
      PyModule_AddFunctions(module, npu_py_copy_functions) < 0 ||
      PyModule_AddFunctions(module, npu_py_vpp_functions) < 0 ||
      PyModule_AddFunctions(module, npu_py_postprocess_functions) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
