/* npu.Error: a runtime failure in Python, with the runtime's own words. */
#include "npu_py.h"

PyObject *npu_py_error;

/* The message is read on the thread that made the failing call (the
 * runtime keeps it per thread), which is this one: calls made with the GIL
 * released run on the same thread. */
PyObject *npu_py_raise(npu_status status)
{
  const char *name = npu_status_name(status);
  const char *detail = npu_last_error_message();
  PyObject *args = Py_BuildValue("(s, s, i)", detail && *detail ? detail : name, name, status);
  if (!args)
    return NULL;
  PyErr_SetObject(npu_py_error, args);
  Py_DECREF(args);
  return NULL;
}

int npu_py_check_status(npu_status status)
{
  if (status == NPU_OK)
    return 0;
  npu_py_raise(status);
  return -1;
}

static PyObject *error_str(PyObject *self)
{
  PyObject *args = PyObject_GetAttrString(self, "args");
  if (!args)
    return NULL;
  PyObject *text = PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 3
                       ? PyUnicode_FromFormat("%S: %S", PyTuple_GET_ITEM(args, 1),
                                              PyTuple_GET_ITEM(args, 0))
                       : ((PyTypeObject *)PyExc_RuntimeError)->tp_str(self);
  Py_DECREF(args);
  return text;
}

/* message, status and code are args[0], args[1] and args[2]. */
static PyObject *error_arg(PyObject *self, void *index)
{
  PyObject *args = PyObject_GetAttrString(self, "args");
  if (!args)
    return NULL;
  PyObject *item = PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 3
                       ? Py_NewRef(PyTuple_GET_ITEM(args, (intptr_t)index))
                       : Py_NewRef(Py_None);
  Py_DECREF(args);
  return item;
}

static PyGetSetDef error_getset[] = {
    {"message", error_arg, NULL, "the runtime's message (npu_last_error_message)", (void *)0},
    {"status", error_arg, NULL, "the status name, e.g. 'NPU_ERROR_INVALID_MODEL'", (void *)1},
    {"code", error_arg, NULL, "the npu_status value", (void *)2},
    {NULL},
};

int npu_py_error_init(PyObject *module)
{
  PyType_Slot slots[] = {
      {Py_tp_doc, "A runtime call failed: str(error) is 'STATUS: message'."},
      {Py_tp_str, error_str},
      {Py_tp_getset, error_getset},
      {0, NULL},
  };
  PyType_Spec spec = {
      .name = "npu.Error",
      .basicsize = (int)sizeof(PyBaseExceptionObject),
      .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
      .slots = slots,
  };
  npu_py_error = PyType_FromSpecWithBases(&spec, PyExc_RuntimeError);
  if (!npu_py_error)
    return -1;
  return PyModule_AddObjectRef(module, "Error", npu_py_error);
}
