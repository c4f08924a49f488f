/* Python lists built item by item, for the module's enumerations. */
#include "npu_py.h"

PyObject *npu_py_list(Py_ssize_t count, npu_py_item_fn item, const void *source)
{
  PyObject *list = PyList_New(count);
  for (Py_ssize_t i = 0; list && i < count; i++) {
    PyObject *value = item(source, i);
    if (!value)
      Py_CLEAR(list);
    else
      PyList_SET_ITEM(list, i, value);
  }
  return list;
}
