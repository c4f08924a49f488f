/* The `npu` Python module: types and helpers shared by its C files.
 *
 * Ownership: every Python object holds one runtime handle and strong
 * references to the Python objects whose handles it depends on (a stream
 * holds its device, a context its model), so handles are destroyed in a
 * valid order whatever the garbage collector does. Runtime calls that may
 * wait for the device run with the GIL released. */
#ifndef NPU_PY_H
#define NPU_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

/* One numpy C-API table for all files of the module: module.c imports it. */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL npu_py_numpy_api
#ifndef NPU_PY_IMPORTS_NUMPY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <npu/npu.h>

/* Method tables cast through void (*)(void): PyCFunction has a fixed type. */
#define NPU_PY_FN(fn) ((PyCFunction)(void (*)(void))(fn))

typedef struct NpuDevice {
  PyObject_HEAD
  npu_device *handle;
  npu_stream *sync_stream; /* created on first use by the synchronous helpers */
} NpuDevice;

typedef struct NpuStream {
  PyObject_HEAD
  npu_stream *handle;
  NpuDevice *device;
  PyObject *keepalive; /* list: host objects async copies on this stream still read or write */
} NpuStream;

typedef struct NpuEvent {
  PyObject_HEAD
  npu_event *handle;
  NpuDevice *device;
} NpuEvent;

typedef struct NpuBuffer {
  PyObject_HEAD
  npu_buffer *handle;
  NpuDevice *device;
  size_t size;
} NpuBuffer;

typedef struct NpuModel {
  PyObject_HEAD
  npu_model *handle;
} NpuModel;

typedef struct NpuContext {
  PyObject_HEAD
  npu_context *handle;
  NpuModel *model;
  NpuDevice *device;
  NpuStream *stream;   /* run()'s stream and run_async()'s default */
  npu_mem_pool *pool;  /* the device buffers of runs in flight, reused */
  uint32_t n_inputs, n_outputs;
  npu_tensor_info *info; /* concrete inputs, then outputs */
} NpuContext;

/* One queued model run of a context. It owns what the run touches (the
 * device buffers, the output arrays the results are downloaded into) until
 * the run is done, so nothing is freed under the device even when the
 * future is dropped. */
typedef struct NpuFuture {
  PyObject_HEAD
  NpuContext *context;
  NpuStream *stream;
  PyObject *outputs;     /* dict of the output arrays, written once the run is done */
  uint32_t n_inputs, n_buffers;
  npu_buffer **buffers;  /* the inputs', then the outputs' device buffers */
  void **host;           /* the arrays' data, in the same order */
  size_t *bytes;         /* ... and their sizes */
  npu_event *done;       /* recorded after the run; NULL once waited for */
  PyObject *error;       /* the exception waiting raised, raised again by each result() */
} NpuFuture;

extern PyTypeObject NpuDevice_Type, NpuStream_Type, NpuEvent_Type, NpuBuffer_Type,
    NpuHostMemory_Type, NpuPool_Type, NpuModel_Type, NpuContext_Type, NpuFuture_Type;
extern PyTypeObject *NpuTensorInfo_Type;

/* error.c: npu.Error carries the status name and the runtime's message. */
extern PyObject *npu_py_error;
PyObject *npu_py_raise(npu_status status);
int npu_py_check_status(npu_status status); /* 0, or -1 with npu.Error raised */
int npu_py_error_init(PyObject *module);

/* dtype.c: runtime element types <-> numpy. */
int npu_py_typenum(npu_dtype dtype); /* -1 when numpy has no such type */
PyObject *npu_py_dtype_object(npu_dtype dtype);
PyObject *npu_py_tensor_info(const npu_tensor_info *info); /* a TensorInfo tuple */
int npu_py_tensor_info_init(PyObject *module);

/* list.c: a list of `count` items, item(source, index) each (new references). */
typedef PyObject *(*npu_py_item_fn)(const void *source, Py_ssize_t index);
PyObject *npu_py_list(Py_ssize_t count, npu_py_item_fn item, const void *source);

/* device.c */
NpuDevice *npu_py_device_arg(PyObject *arg); /* None: the default device; new reference */
npu_stream *npu_py_device_sync_stream(NpuDevice *device); /* NULL: npu.Error raised */

/* stream.c */
NpuStream *npu_py_stream_new(NpuDevice *device);
int npu_py_stream_keep(NpuStream *stream, PyObject *object);
PyObject *npu_py_stream_stats(npu_stream *stream);

/* host memory: a contiguous view of any buffer-protocol object, as a
 * memoryview that keeps the export alive (copy.c). */
PyObject *npu_py_host_view(PyObject *object, int writable, Py_buffer **view);

/* buffer.c */
NpuBuffer *npu_py_buffer_wrap(NpuDevice *device, npu_buffer *handle); /* takes the handle */

/* future.c: an empty future that context.c fills as it queues the run. */
NpuFuture *npu_py_future_new(NpuContext *context, NpuStream *stream);
PyObject *npu_py_future_result(NpuFuture *future);

/* Module-level functions of each file, NULL-terminated lists. */
extern PyMethodDef npu_py_device_functions[], npu_py_copy_functions[], npu_py_vpp_functions[],
    npu_py_postprocess_functions[];

#endif
