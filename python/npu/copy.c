/* npu.memcpy and npu.memset: copies between host objects (anything with
 * the buffer protocol: numpy arrays, bytes, HostMemory) and device buffers,
 * synchronous or queued on a stream. */
#include "npu_py.h"

PyObject *npu_py_host_view(PyObject *object, int writable, Py_buffer **view)
{
  PyObject *memory = PyMemoryView_FromObject(object);
  if (!memory)
    return NULL;
  *view = PyMemoryView_GET_BUFFER(memory);
  if (writable && (*view)->readonly) {
    Py_DECREF(memory);
    return PyErr_Format(PyExc_ValueError, "the destination %s is read-only",
                        Py_TYPE(object)->tp_name);
  }
  if (!PyBuffer_IsContiguous(*view, 'C')) {
    Py_DECREF(memory);
    return PyErr_Format(PyExc_ValueError, "the host %s is not C-contiguous",
                        Py_TYPE(object)->tp_name);
  }
  return memory;
}

static int stream_arg(PyObject *arg, NpuStream **stream)
{
  if (arg == Py_None) {
    *stream = NULL;
    return 0;
  }
  if (!PyObject_TypeCheck(arg, &NpuStream_Type)) {
    PyErr_Format(PyExc_TypeError, "stream must be an npu.Stream or None, not %s",
                 Py_TYPE(arg)->tp_name);
    return -1;
  }
  *stream = (NpuStream *)arg;
  return 0;
}

/* size < 0: all of the host range from offset. */
static int host_range(const Py_buffer *view, Py_ssize_t offset, Py_ssize_t *size)
{
  if (*size < 0)
    *size = view->len - offset;
  if (offset < 0 || *size < 0 || offset > view->len - *size) {
    PyErr_Format(PyExc_ValueError, "%zd bytes at offset %zd do not fit the host object's %zd",
                 *size, offset, view->len);
    return -1;
  }
  return 0;
}

static PyObject *module_memcpy(PyObject *module, PyObject *args, PyObject *kwargs)
{
  (void)module;
  static char *keywords[] = {"dst", "src", "size", "dst_offset", "src_offset", "stream", NULL};
  PyObject *dst, *src, *stream_obj = Py_None;
  Py_ssize_t size = -1, dst_offset = 0, src_offset = 0;
  NpuStream *stream;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|nnnO:memcpy", keywords, &dst, &src, &size,
                                   &dst_offset, &src_offset, &stream_obj) ||
      stream_arg(stream_obj, &stream) < 0)
    return NULL;
  if (dst_offset < 0 || src_offset < 0)
    return PyErr_Format(PyExc_ValueError, "offsets must not be negative");
  int dst_device = PyObject_TypeCheck(dst, &NpuBuffer_Type);
  int src_device = PyObject_TypeCheck(src, &NpuBuffer_Type);
  npu_stream *queue = stream ? stream->handle : NULL;
  npu_status status;
  if (dst_device && src_device) {
    NpuBuffer *d = (NpuBuffer *)dst, *s = (NpuBuffer *)src;
    size_t bytes = size < 0 ? (s->size > (size_t)src_offset ? s->size - (size_t)src_offset : 0)
                            : (size_t)size;
    Py_BEGIN_ALLOW_THREADS
    status = npu_memcpy_d2d_async(d->handle, (size_t)dst_offset, s->handle, (size_t)src_offset,
                                  bytes, queue);
    Py_END_ALLOW_THREADS
    return status == NPU_OK ? Py_NewRef(Py_None) : npu_py_raise(status);
  }
  if (!dst_device && !src_device)
    return PyErr_Format(PyExc_TypeError, "memcpy: dst or src must be an npu.Buffer");
  Py_buffer *view;
  PyObject *host = npu_py_host_view(dst_device ? src : dst, !dst_device, &view);
  if (!host)
    return NULL;
  if (host_range(view, dst_device ? src_offset : dst_offset, &size) < 0) {
    Py_DECREF(host);
    return NULL;
  }
  char *host_ptr = (char *)view->buf + (dst_device ? src_offset : dst_offset);
  Py_BEGIN_ALLOW_THREADS
  if (dst_device)
    status = npu_memcpy_h2d_async(((NpuBuffer *)dst)->handle, (size_t)dst_offset, host_ptr,
                                  (size_t)size, queue);
  else
    status = npu_memcpy_d2h_async(host_ptr, ((NpuBuffer *)src)->handle, (size_t)src_offset,
                                  (size_t)size, queue);
  Py_END_ALLOW_THREADS
  int failed = status != NPU_OK || (stream && npu_py_stream_keep(stream, host) < 0);
  Py_DECREF(host);
  if (failed)
    return status != NPU_OK ? npu_py_raise(status) : NULL;
  Py_RETURN_NONE;
}

static PyObject *module_memset(PyObject *module, PyObject *args, PyObject *kwargs)
{
  (void)module;
  static char *keywords[] = {"dst", "value", "size", "offset", "stream", NULL};
  NpuBuffer *dst;
  int value;
  Py_ssize_t size = -1, offset = 0;
  PyObject *stream_obj = Py_None;
  NpuStream *stream;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!i|nnO:memset", keywords, &NpuBuffer_Type,
                                   &dst, &value, &size, &offset, &stream_obj) ||
      stream_arg(stream_obj, &stream) < 0)
    return NULL;
  if (offset < 0 || (size_t)offset > dst->size)
    return PyErr_Format(PyExc_ValueError, "offset %zd is outside the %zu-byte buffer", offset,
                        dst->size);
  size_t bytes = size < 0 ? dst->size - (size_t)offset : (size_t)size;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = npu_memset_async(dst->handle, (size_t)offset, value, bytes,
                            stream ? stream->handle : NULL);
  Py_END_ALLOW_THREADS
  return status == NPU_OK ? Py_NewRef(Py_None) : npu_py_raise(status);
}

PyMethodDef npu_py_copy_functions[] = {
    {"memcpy", NPU_PY_FN(module_memcpy), METH_VARARGS | METH_KEYWORDS,
     "memcpy(dst, src, size=None, dst_offset=0, src_offset=0, stream=None)\n\n"
     "Copies bytes; the direction follows the types: host object -> Buffer (h2d), Buffer -> "
     "writable host object (d2h), Buffer -> Buffer (d2d). Host objects are anything with the "
     "buffer protocol, C-contiguous (numpy arrays, bytes, HostMemory). size defaults to the "
     "host object's bytes from its offset (d2d: the rest of src). With a stream the copy is "
     "queued and the stream keeps the host object alive until it has run; without, it has "
     "landed when the call returns."},
    {"memset", NPU_PY_FN(module_memset), METH_VARARGS | METH_KEYWORDS,
     "memset(dst, value, size=None, offset=0, stream=None): fills device bytes"},
    {NULL},
};
