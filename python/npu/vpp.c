/* npu.to_tensor: a frame (or regions of it) into a model's input tensor
 * on the device's VPP: colour conversion, crop, scale, letterbox and
 * normalisation in one pass. */
#include "npu_py.h"

#include <string.h>

/* GStreamer's names. A host frame is a numpy array laid out as OpenCV
 * does: height * rows_num / rows_den rows (NV12: 1.5 x height rows of
 * `width` bytes), or height x width x channels for packed formats. */
static const struct {
  const char *name;
  uint32_t fourcc;
  uint32_t rows_num, rows_den;
} formats[] = {
    {"NV12", NPU_FORMAT_NV12, 3, 2},   {"NV21", NPU_FORMAT_NV21, 3, 2},
    {"I420", NPU_FORMAT_I420, 3, 2},   {"YV12", NPU_FORMAT_YV12, 3, 2},
    {"NV16", NPU_FORMAT_NV16, 2, 1},   {"NV24", NPU_FORMAT_NV24, 3, 1},
    {"Y42B", NPU_FORMAT_YUV422, 2, 1}, {"Y444", NPU_FORMAT_YUV444, 3, 1},
    {"YUY2", NPU_FORMAT_YUY2, 1, 1},   {"UYVY", NPU_FORMAT_UYVY, 1, 1},
    {"RGB", NPU_FORMAT_RGB, 1, 1},     {"BGR", NPU_FORMAT_BGR, 1, 1},
    {"RGBx", NPU_FORMAT_RGBX, 1, 1},   {"BGRx", NPU_FORMAT_BGRX, 1, 1},
    {"xRGB", NPU_FORMAT_XRGB, 1, 1},   {"xBGR", NPU_FORMAT_XBGR, 1, 1},
    {"RGBA", NPU_FORMAT_RGBA, 1, 1},   {"BGRA", NPU_FORMAT_BGRA, 1, 1},
    {"GRAY8", NPU_FORMAT_GRAY8, 1, 1},
};

/* The index of `value` among `names` (NULL-terminated), or -1 with a
 * ValueError listing them. */
static int choose(const char *what, const char *value, const char *const *names)
{
  for (int i = 0; names[i]; i++)
    if (strcmp(value, names[i]) == 0)
      return i;
  PyObject *list = PyUnicode_FromString(names[0]);
  for (int i = 1; list && names[i]; i++)
    Py_SETREF(list, PyUnicode_FromFormat("%U, %s", list, names[i]));
  if (list)
    PyErr_Format(PyExc_ValueError, "%s must be one of %U, not '%s'", what, list, value);
  Py_XDECREF(list);
  return -1;
}

static int format_index(const char *name)
{
  const char *names[sizeof formats / sizeof formats[0] + 1];
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    names[i] = formats[i].name;
  names[sizeof formats / sizeof formats[0]] = NULL;
  return choose("format", name, names);
}

/* 1 or 3 floats. */
static int read_triple(const char *what, PyObject *value, float out[3])
{
  PyObject *fast = PySequence_Fast(value, "mean and std must be sequences of 1 or 3 numbers");
  if (!fast)
    return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  if (n != 1 && n != 3) {
    Py_DECREF(fast);
    PyErr_Format(PyExc_ValueError, "%s must have 1 or 3 values, not %zd", what, n);
    return -1;
  }
  for (int c = 0; c < 3; c++)
    out[c] = (float)PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, n == 1 ? 0 : c));
  Py_DECREF(fast);
  return PyErr_Occurred() ? -1 : 0;
}

typedef struct request {
  uint32_t format, width, height;
  npu_color_matrix matrix;
  npu_color_range range;
  npu_image image; /* filled once the frame is on the device */
  npu_vpp_params params;
  npu_tensor_target target;
  npu_vpp_job *jobs;
  npu_letterbox *mappings;
  Py_ssize_t count;
} request;

/* ROIs as (x, y, width, height); None: the whole frame once. */
static int read_rois(PyObject *rois, npu_rotation rotation, request *r)
{
  PyObject *fast = rois == Py_None ? NULL : PySequence_Fast(rois, "rois must be a sequence");
  if (rois != Py_None && !fast)
    return -1;
  r->count = fast ? PySequence_Fast_GET_SIZE(fast) : 1;
  r->jobs = PyMem_Calloc((size_t)(r->count ? r->count : 1), sizeof *r->jobs);
  r->mappings = PyMem_Calloc((size_t)(r->count ? r->count : 1), sizeof *r->mappings);
  if (!r->jobs || !r->mappings) {
    Py_XDECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < r->count; i++) {
    npu_vpp_job *job = &r->jobs[i];
    *job = (npu_vpp_job){.src = &r->image, .slot = (uint32_t)i, .mapping = &r->mappings[i],
                         .rotation = rotation};
    if (fast && !PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "iiII", &job->crop.x,
                                  &job->crop.y, &job->crop.width, &job->crop.height)) {
      Py_DECREF(fast);
      return -1;
    }
  }
  Py_XDECREF(fast);
  return 0;
}

static PyObject *mapping_at(const void *mappings, Py_ssize_t index)
{
  const npu_letterbox *m = (const npu_letterbox *)mappings + index;
  return Py_BuildValue("(ffff)", m->scale_x, m->scale_y, m->pad_x, m->pad_y);
}

/* The frame's size: given, or read from a numpy array's shape. */
static int frame_size(PyObject *frame, int f, PyObject *width, PyObject *height, request *r)
{
  if (width != Py_None && height != Py_None) {
    r->width = (uint32_t)PyLong_AsUnsignedLong(width);
    r->height = (uint32_t)PyLong_AsUnsignedLong(height);
    return PyErr_Occurred() ? -1 : 0;
  }
  if (!PyArray_Check(frame) || PyArray_NDIM((PyArrayObject *)frame) < 2) {
    PyErr_Format(PyExc_TypeError, "width and height are needed unless the frame is a numpy "
                 "array of 2 or 3 dims");
    return -1;
  }
  npy_intp rows = PyArray_DIM((PyArrayObject *)frame, 0);
  r->width = (uint32_t)PyArray_DIM((PyArrayObject *)frame, 1);
  r->height = (uint32_t)(rows * formats[f].rows_den / formats[f].rows_num);
  if ((npy_intp)r->height * formats[f].rows_num != rows * formats[f].rows_den) {
    PyErr_Format(PyExc_ValueError, "a %s frame has height x %u/%u rows, not %zd",
                 formats[f].name, formats[f].rows_num, formats[f].rows_den, (Py_ssize_t)rows);
    return -1;
  }
  return 0;
}

/* Uploads a host frame, runs the jobs and downloads the tensor, on the
 * device's own stream, waited for. */
static npu_status convert(NpuDevice *device, npu_stream *stream, request *r, npu_buffer *frame,
                          const void *host_frame, size_t frame_bytes, void *out, size_t out_bytes)
{
  npu_status status = npu_buffer_alloc(device->handle, out_bytes, &r->target.buffer);
  size_t size;
  if (status == NPU_OK && host_frame)
    status = npu_buffer_alloc(device->handle, frame_bytes, &frame);
  else if (frame)
    npu_buffer_retain(frame);
  if (status == NPU_OK && host_frame)
    status = npu_memcpy_h2d_async(frame, 0, host_frame, frame_bytes, stream);
  if (status == NPU_OK)
    status = npu_image_init(&r->image, r->format, r->width, r->height, 1, frame, 0, &size);
  r->image.matrix = r->matrix;
  r->image.range = r->range;
  if (status == NPU_OK)
    status = npu_vpp_to_tensor(stream, r->jobs, (size_t)r->count, &r->params, &r->target);
  if (status == NPU_OK)
    status = npu_memcpy_d2h_async(out, r->target.buffer, 0, out_bytes, stream);
  npu_status synced = npu_stream_synchronize(stream);
  if (frame)
    npu_buffer_release(frame);
  if (r->target.buffer)
    npu_buffer_release(r->target.buffer);
  return status != NPU_OK ? status : synced;
}

/* The output array: batch x 3 x H x W (nchw) or batch x H x W x 3. */
static PyArrayObject *output_array(const request *r)
{
  npy_intp n = r->count, h = r->target.height, w = r->target.width;
  npy_intp dims[4] = {n, 3, h, w};
  if (r->target.layout == NPU_LAYOUT_NHWC) {
    dims[1] = h;
    dims[2] = w;
    dims[3] = 3;
  }
  return (PyArrayObject *)PyArray_SimpleNew(
      4, dims, r->target.dtype == NPU_TENSOR_FLOAT32 ? NPY_FLOAT32 : NPY_UINT8);
}

/* The keyword options as given. */
typedef struct options {
  const char *dtype, *layout, *order, *align, *method, *matrix, *range;
  PyObject *mean, *std;
  int letterbox;
  unsigned char pad[3];
  float max_scale;
  unsigned int rotation;
} options;

static int set_options(request *r, const options *o)
{
  static const char *const dtypes[] = {"uint8", "float32", NULL};
  static const char *const layouts[] = {"nchw", "nhwc", NULL};
  static const char *const orders[] = {"rgb", "bgr", NULL};
  static const char *const aligns[] = {"center", "top-left", NULL};
  static const char *const methods[] = {"bilinear", "nearest", "area", NULL};
  static const char *const matrices[] = {"bt601", "bt709", "bt2020", NULL};
  static const char *const ranges[] = {"limited", "full", NULL};
  int dtype, layout, order, align, method, matrix, range;
  if ((dtype = choose("dtype", o->dtype, dtypes)) < 0 ||
      (layout = choose("layout", o->layout, layouts)) < 0 ||
      (order = choose("order", o->order, orders)) < 0 ||
      (align = choose("align", o->align, aligns)) < 0 ||
      (method = choose("method", o->method, methods)) < 0 ||
      (matrix = choose("matrix", o->matrix, matrices)) < 0 ||
      (range = choose("range", o->range, ranges)) < 0 ||
      (o->mean && read_triple("mean", o->mean, r->target.mean) < 0) ||
      (o->std && read_triple("std", o->std, r->target.scale) < 0))
    return -1;
  for (int c = 0; o->std && c < 3; c++) {
    if (r->target.scale[c] == 0) {
      PyErr_Format(PyExc_ValueError, "std must not be 0");
      return -1;
    }
    r->target.scale[c] = 1.0f / r->target.scale[c];
  }
  r->target.dtype = dtype ? NPU_TENSOR_FLOAT32 : NPU_TENSOR_UINT8;
  r->target.layout = layout ? NPU_LAYOUT_NHWC : NPU_LAYOUT_NCHW;
  r->target.order = order ? NPU_ORDER_BGR : NPU_ORDER_RGB;
  r->params = (npu_vpp_params){.method = (npu_scale_method)method, .letterbox = o->letterbox,
                               .align = (npu_letterbox_align)align, .max_scale = o->max_scale,
                               .pad_rgb = {o->pad[0], o->pad[1], o->pad[2]}};
  r->matrix = (npu_color_matrix)matrix;
  r->range = (npu_color_range)range;
  return 0;
}

static PyObject *module_to_tensor(PyObject *module, PyObject *args, PyObject *kwargs)
{
  (void)module;
  static char *keywords[] = {"frame", "format", "size", "width", "height", "rois", "dtype",
                             "layout", "order", "mean", "std", "letterbox", "align", "pad",
                             "max_scale", "method", "matrix", "range", "rotation",
                             "with_mapping", "device", NULL};
  static const npu_rotation rotations[] = {NPU_ROTATE_NONE, NPU_ROTATE_90_CCW, NPU_ROTATE_180,
                                           NPU_ROTATE_90_CW};
  PyObject *frame, *width = Py_None, *height = Py_None, *rois = Py_None, *device_arg = Py_None;
  const char *format;
  int with_mapping = 0;
  options o = {.dtype = "float32", .layout = "nchw", .order = "rgb", .align = "center",
               .method = "bilinear", .matrix = "bt601", .range = "limited"};
  request r = {.target = {.scale = {1, 1, 1}}};
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "Os(II)|$OOOsssOOps(bbb)fsssIpO:to_tensor", keywords, &frame, &format,
          &r.target.width, &r.target.height, &width, &height, &rois, &o.dtype, &o.layout,
          &o.order, &o.mean, &o.std, &o.letterbox, &o.align, &o.pad[0], &o.pad[1], &o.pad[2],
          &o.max_scale, &o.method, &o.matrix, &o.range, &o.rotation, &with_mapping, &device_arg))
    return NULL;
  if (o.rotation % 90 || o.rotation >= 360)
    return PyErr_Format(PyExc_ValueError, "rotation must be 0, 90, 180 or 270 (degrees "
                        "counter-clockwise), not %u", o.rotation);
  int f = format_index(format);
  NpuDevice *device = NULL;
  PyObject *host = NULL, *result = NULL;
  PyArrayObject *out = NULL;
  Py_buffer *view = NULL;
  npu_buffer *device_frame =
      PyObject_TypeCheck(frame, &NpuBuffer_Type) ? ((NpuBuffer *)frame)->handle : NULL;
  size_t frame_bytes = 0;
  if (f < 0 || set_options(&r, &o) < 0 || read_rois(rois, rotations[o.rotation / 90], &r) < 0 ||
      frame_size(frame, f, width, height, &r) < 0 ||
      !(device = npu_py_device_arg(device_arg)) ||
      (!device_frame && !(host = npu_py_host_view(frame, 0, &view))))
    goto done;
  r.format = formats[f].fourcc;
  r.target.batch = (uint32_t)r.count;
  size_t available = device_frame ? ((NpuBuffer *)frame)->size : (size_t)view->len;
  if (npu_py_check_status(npu_image_init(&r.image, r.format, r.width, r.height, 1, NULL, 0,
                                         &frame_bytes)) < 0 ||
      !(out = output_array(&r)))
    goto done;
  if (available < frame_bytes) {
    PyErr_Format(PyExc_ValueError, "a %ux%u %s frame needs %zu bytes, the frame has %zu",
                 r.width, r.height, format, frame_bytes, available);
    goto done;
  }
  npu_stream *stream = npu_py_device_sync_stream(device);
  if (!stream)
    goto done;
  npu_status status;
  Py_BEGIN_ALLOW_THREADS
  status = convert(device, stream, &r, device_frame, host ? view->buf : NULL,
                   frame_bytes, PyArray_DATA(out), (size_t)PyArray_NBYTES(out));
  Py_END_ALLOW_THREADS
  if (npu_py_check_status(status) == 0)
    result = with_mapping ? Py_BuildValue("(ON)", out, npu_py_list(r.count, mapping_at, r.mappings)) : Py_NewRef(out);
done:
  Py_XDECREF(out);
  Py_XDECREF(host);
  Py_XDECREF(device);
  PyMem_Free(r.jobs);
  PyMem_Free(r.mappings);
  return result;
}

PyMethodDef npu_py_vpp_functions[] = {
    {"to_tensor", NPU_PY_FN(module_to_tensor), METH_VARARGS | METH_KEYWORDS,
     "to_tensor(frame, format, size, *, width=None, height=None, rois=None, dtype='float32', "
     "layout='nchw', order='rgb', mean=None, std=None, letterbox=False, align='center', "
     "pad=(0, 0, 0), max_scale=0, method='bilinear', matrix='bt601', range='limited', "
     "rotation=0, with_mapping=False, device=None) -> ndarray\n\n"
     "Converts a frame into a model input on the device's VPP in one pass. frame: a "
     "C-contiguous host frame (numpy as OpenCV lays it out: NV12/I420 (H*3/2, W), RGB (H, W, 3); "
     "width/height read from its shape) or an npu.Buffer (width and height needed). format: "
     "NV12 NV21 I420 YV12 NV16 NV24 Y42B Y444 YUY2 UYVY RGB BGR RGBx BGRx xRGB xBGR RGBA BGRA "
     "GRAY8. size: (width, height) of the tensor. rois: [(x, y, w, h)], one batch slot each "
     "(default: the whole frame, batch 1). Values are (pixel - mean) / std. rotation: degrees "
     "counter-clockwise a crop is turned before scaling. Returns batch x 3 x H x W (nchw) or "
     "batch x H x W x 3 (nhwc); with_mapping: (tensor, [(scale_x, scale_y, pad_x, pad_y)]), "
     "model = frame * scale + pad, for npu.unletterbox."},
    {NULL},
};
