/* Post-processing helpers over model outputs (npu/postprocess.h).
 * Detections are float32 arrays of N rows (x0, y0, x1, y1, confidence,
 * class_id). */
#include "npu_py.h"

#include <stdlib.h>

/* A C-contiguous float32 array of `min_ndim` to `max_ndim` dims. */
static PyArrayObject *float_array(PyObject *object, const char *what, int min_ndim,
                                  int max_ndim)
{
  PyArrayObject *array =
      (PyArrayObject *)PyArray_FROM_OTF(object, NPY_FLOAT32, NPY_ARRAY_IN_ARRAY);
  if (array && (PyArray_NDIM(array) < min_ndim || PyArray_NDIM(array) > max_ndim)) {
    PyErr_Format(PyExc_ValueError, "%s must have %d to %d dims, not %d", what, min_ndim,
                 max_ndim, PyArray_NDIM(array));
    Py_CLEAR(array);
  }
  return array;
}

static PyObject *detections_array(const npu_detection *d, size_t n)
{
  npy_intp dims[2] = {(npy_intp)n, 6};
  PyArrayObject *array = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT32);
  if (!array)
    return NULL;
  float *row = PyArray_DATA(array);
  for (size_t i = 0; i < n; i++, row += 6) {
    row[0] = d[i].x0;
    row[1] = d[i].y0;
    row[2] = d[i].x1;
    row[3] = d[i].y1;
    row[4] = d[i].confidence;
    row[5] = (float)d[i].class_id;
  }
  return (PyObject *)array;
}

/* An N x 6 array as detections (PyMem_Free them). */
static npu_detection *read_detections(PyObject *object, size_t *n)
{
  PyArrayObject *array = float_array(object, "detections", 2, 2);
  if (!array)
    return NULL;
  if (PyArray_DIM(array, 1) != 6) {
    Py_DECREF(array);
    PyErr_Format(PyExc_ValueError, "detections must be N x 6 (x0, y0, x1, y1, confidence, "
                 "class_id)");
    return NULL;
  }
  *n = (size_t)PyArray_DIM(array, 0);
  npu_detection *d = PyMem_Calloc(*n ? *n : 1, sizeof *d);
  const float *row = PyArray_DATA(array);
  for (size_t i = 0; d && i < *n; i++, row += 6)
    d[i] = (npu_detection){row[0], row[1], row[2], row[3], row[4], (int32_t)row[5]};
  Py_DECREF(array);
  if (!d)
    PyErr_NoMemory();
  return d;
}

static PyObject *module_topk(PyObject *module, PyObject *args, PyObject *kwargs)
{
  (void)module;
  static char *keywords[] = {"scores", "k", "softmax", NULL};
  PyObject *scores_arg;
  unsigned int k = 5;
  int softmax = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|Ip:topk", keywords, &scores_arg, &k,
                                   &softmax))
    return NULL;
  PyArrayObject *scores = float_array(scores_arg, "scores", 1, NPY_MAXDIMS);
  if (!scores)
    return NULL;
  size_t n = (size_t)PyArray_SIZE(scores);
  npy_intp dims[1] = {k < n ? k : (npy_intp)n};
  PyArrayObject *indices = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_UINT32);
  PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT32);
  PyObject *result = NULL;
  if (indices && values) {
    npu_status status = npu_topk(PyArray_DATA(scores), n, softmax, (uint32_t)dims[0],
                                 PyArray_DATA(indices), PyArray_DATA(values));
    if (npu_py_check_status(status) == 0)
      result = Py_BuildValue("(OO)", indices, values);
  }
  Py_XDECREF(indices);
  Py_XDECREF(values);
  Py_DECREF(scores);
  return result;
}

static PyObject *module_yolo_decode(PyObject *module, PyObject *args, PyObject *kwargs)
{
  (void)module;
  static char *keywords[] = {"output", "version", "threshold", NULL};
  PyObject *output_arg;
  int version = 8;
  float threshold = 0.25f;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|if:yolo_decode", keywords, &output_arg,
                                   &version, &threshold))
    return NULL;
  if (version != 5 && version != 8)
    return PyErr_Format(PyExc_ValueError, "version must be 5 or 8, not %d", version);
  PyArrayObject *output = float_array(output_arg, "output", 2, 3);
  if (!output)
    return NULL;
  int nd = PyArray_NDIM(output);
  if (nd == 3 && PyArray_DIM(output, 0) != 1) {
    Py_DECREF(output);
    return PyErr_Format(PyExc_ValueError, "one image at a time: the batch axis must be 1");
  }
  /* v5: [boxes, 5 + classes]; v8: [4 + classes, boxes] */
  size_t rows = (size_t)PyArray_DIM(output, nd - 2), cols = (size_t)PyArray_DIM(output, nd - 1);
  size_t boxes = version == 5 ? rows : cols, per_box = version == 5 ? cols : rows;
  size_t header = version == 5 ? 5 : 4;
  if (per_box <= header) {
    Py_DECREF(output);
    return PyErr_Format(PyExc_ValueError, "a YOLOv%d output needs more than %zu values per "
                        "box, this one has %zu", version, header, per_box);
  }
  npu_detection *found = PyMem_Calloc(boxes ? boxes : 1, sizeof *found);
  size_t count = 0;
  npu_status status = NPU_OK;
  if (found) {
    Py_BEGIN_ALLOW_THREADS
    status = npu_yolo_decode(PyArray_DATA(output), version == 5 ? NPU_YOLO_V5 : NPU_YOLO_V8,
                             boxes, per_box - header, threshold, found, boxes, &count);
    Py_END_ALLOW_THREADS
  }
  PyObject *result = !found                                ? PyErr_NoMemory()
                     : npu_py_check_status(status) < 0 ? NULL
                                                           : detections_array(found, count);
  PyMem_Free(found);
  Py_DECREF(output);
  return result;
}

static PyObject *module_ssd_decode(PyObject *module, PyObject *args, PyObject *kwargs)
{
  (void)module;
  static char *keywords[] = {"boxes", "scores", "width", "height", "threshold", "background",
                             NULL};
  PyObject *boxes_arg, *scores_arg;
  unsigned int width, height;
  float threshold = 0.5f;
  int background = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOII|fp:ssd_decode", keywords, &boxes_arg,
                                   &scores_arg, &width, &height, &threshold, &background))
    return NULL;
  PyArrayObject *boxes = float_array(boxes_arg, "boxes", 2, 3);
  PyArrayObject *scores = boxes ? float_array(scores_arg, "scores", 2, 3) : NULL;
  PyObject *result = NULL;
  if (scores) {
    size_t n = (size_t)PyArray_SIZE(boxes) / 4;
    size_t classes = (size_t)PyArray_DIM(scores, PyArray_NDIM(scores) - 1);
    npu_detection *found = NULL;
    size_t count = 0;
    if (PyArray_DIM(boxes, PyArray_NDIM(boxes) - 1) != 4 ||
        (size_t)PyArray_SIZE(scores) != n * classes)
      PyErr_Format(PyExc_ValueError, "boxes must be N x 4 and scores N x classes");
    else if (!(found = PyMem_Calloc(n ? n : 1, sizeof *found)))
      PyErr_NoMemory();
    else if (npu_py_check_status(npu_ssd_decode(PyArray_DATA(boxes), PyArray_DATA(scores), n,
                                                classes, background, threshold, width, height,
                                                found, n, &count)) == 0)
      result = detections_array(found, count);
    PyMem_Free(found);
  }
  Py_XDECREF(boxes);
  Py_XDECREF(scores);
  return result;
}

static PyObject *module_nms(PyObject *module, PyObject *args, PyObject *kwargs)
{
  (void)module;
  static char *keywords[] = {"detections", "iou_threshold", "class_wise", "max_keep", NULL};
  PyObject *detections;
  float iou = 0.45f;
  int class_wise = 1;
  Py_ssize_t max_keep = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|fpn:nms", keywords, &detections, &iou,
                                   &class_wise, &max_keep))
    return NULL;
  size_t n = 0, kept = 0;
  npu_detection *d = read_detections(detections, &n);
  if (!d)
    return NULL;
  npu_status status = npu_nms(d, n, iou, class_wise, max_keep > 0 ? (size_t)max_keep : 0, &kept);
  PyObject *result = npu_py_check_status(status) < 0 ? NULL : detections_array(d, kept);
  PyMem_Free(d);
  return result;
}

static PyObject *module_unletterbox(PyObject *module, PyObject *args, PyObject *kwargs)
{
  (void)module;
  static char *keywords[] = {"detections", "mapping", "width", "height", NULL};
  PyObject *detections;
  npu_letterbox m;
  unsigned int width, height;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O(ffff)II:unletterbox", keywords, &detections,
                                   &m.scale_x, &m.scale_y, &m.pad_x, &m.pad_y, &width, &height))
    return NULL;
  size_t n = 0;
  npu_detection *d = read_detections(detections, &n);
  if (!d)
    return NULL;
  npu_status status = npu_detections_unletterbox(d, n, &m, width, height);
  PyObject *result = npu_py_check_status(status) < 0 ? NULL : detections_array(d, n);
  PyMem_Free(d);
  return result;
}

/* (boxes N x 4, corners N x 4 x 2, scores N) */
static PyObject *regions_arrays(const npu_text_region *regions, size_t n)
{
  npy_intp box_dims[2] = {(npy_intp)n, 4}, corner_dims[3] = {(npy_intp)n, 4, 2};
  npy_intp score_dims[1] = {(npy_intp)n};
  PyArrayObject *boxes = (PyArrayObject *)PyArray_SimpleNew(2, box_dims, NPY_FLOAT32);
  PyArrayObject *corners = (PyArrayObject *)PyArray_SimpleNew(3, corner_dims, NPY_FLOAT32);
  PyArrayObject *scores = (PyArrayObject *)PyArray_SimpleNew(1, score_dims, NPY_FLOAT32);
  if (!boxes || !corners || !scores) {
    Py_XDECREF(boxes);
    Py_XDECREF(corners);
    Py_XDECREF(scores);
    return NULL;
  }
  float *b = PyArray_DATA(boxes), *c = PyArray_DATA(corners), *s = PyArray_DATA(scores);
  for (size_t i = 0; i < n; i++) {
    const npu_text_region *r = &regions[i];
    b[4 * i] = r->x0;
    b[4 * i + 1] = r->y0;
    b[4 * i + 2] = r->x1;
    b[4 * i + 3] = r->y1;
    for (int k = 0; k < 4; k++) {
      c[8 * i + 2 * k] = r->corners[k][0];
      c[8 * i + 2 * k + 1] = r->corners[k][1];
    }
    s[i] = r->score;
  }
  return Py_BuildValue("(NNN)", boxes, corners, scores);
}

static PyObject *module_dbnet_regions(PyObject *module, PyObject *args, PyObject *kwargs)
{
  (void)module;
  static char *keywords[] = {"probability", "threshold", "box_threshold", "unclip_ratio",
                             "min_size", "max_regions", NULL};
  PyObject *map_arg;
  npu_dbnet_params p = {.threshold = 0.3f, .box_threshold = 0.6f, .unclip_ratio = 1.5f,
                        .min_size = 3};
  Py_ssize_t capacity = 1000;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|fffIn:dbnet_regions", keywords, &map_arg,
                                   &p.threshold, &p.box_threshold, &p.unclip_ratio, &p.min_size,
                                   &capacity))
    return NULL;
  if (capacity < 1)
    return PyErr_Format(PyExc_ValueError, "max_regions must be at least 1");
  PyArrayObject *map = float_array(map_arg, "probability", 2, 4);
  if (!map)
    return NULL;
  int nd = PyArray_NDIM(map);
  size_t h = (size_t)PyArray_DIM(map, nd - 2), w = (size_t)PyArray_DIM(map, nd - 1);
  if ((size_t)PyArray_SIZE(map) != h * w) {
    Py_DECREF(map);
    return PyErr_Format(PyExc_ValueError, "one probability map at a time (H x W, or 1 x 1 x "
                        "H x W)");
  }
  int32_t *scratch = PyMem_Malloc(2 * w * h * sizeof *scratch + 1);
  npu_text_region *regions = PyMem_Calloc((size_t)capacity, sizeof *regions);
  size_t count = 0;
  PyObject *result = NULL;
  if (!scratch || !regions) {
    PyErr_NoMemory();
  } else {
    npu_status status;
    Py_BEGIN_ALLOW_THREADS
    status = npu_dbnet_regions(PyArray_DATA(map), (uint32_t)w, (uint32_t)h, &p, scratch,
                               regions, (size_t)capacity, &count);
    Py_END_ALLOW_THREADS
    if (npu_py_check_status(status) == 0)
      result = regions_arrays(regions, count < (size_t)capacity ? count : (size_t)capacity);
  }
  PyMem_Free(scratch);
  PyMem_Free(regions);
  Py_DECREF(map);
  return result;
}

static PyObject *module_ctc_decode(PyObject *module, PyObject *args, PyObject *kwargs)
{
  (void)module;
  static char *keywords[] = {"scores", "dictionary", "blank", NULL};
  PyObject *scores_arg, *dictionary;
  unsigned int blank = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|I:ctc_decode", keywords, &scores_arg,
                                   &dictionary, &blank))
    return NULL;
  PyArrayObject *scores = float_array(scores_arg, "scores", 2, 3);
  PyObject *words = scores ? PySequence_Fast(dictionary, "dictionary must be a sequence of str")
                           : NULL;
  Py_ssize_t n = words ? PySequence_Fast_GET_SIZE(words) : 0;
  const char **entries = words ? PyMem_Calloc((size_t)n + 1, sizeof *entries) : NULL;
  PyObject *result = NULL;
  size_t longest = 4;
  for (Py_ssize_t i = 0; entries && i < n; i++) {
    Py_ssize_t length;
    if (!(entries[i] = PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(words, i), &length)))
      goto done;
    longest = (size_t)length > longest ? (size_t)length : longest;
  }
  if (entries) {
    int nd = PyArray_NDIM(scores);
    size_t steps = (size_t)PyArray_DIM(scores, nd - 2), classes = (size_t)PyArray_DIM(scores, nd - 1);
    size_t capacity = steps * longest + 1; /* each step adds at most one entry */
    char *text = PyMem_Malloc(capacity);
    float confidence = 0;
    if (!text)
      PyErr_NoMemory();
    else if (npu_py_check_status(npu_ctc_greedy_decode(PyArray_DATA(scores), steps, classes,
                                                       blank, entries, (size_t)n, text,
                                                       capacity, &confidence)) == 0)
      result = Py_BuildValue("(sf)", text, confidence);
    PyMem_Free(text);
  }
done:
  PyMem_Free(entries);
  Py_XDECREF(words);
  Py_XDECREF(scores);
  return result;
}

PyMethodDef npu_py_postprocess_functions[] = {
    {"topk", NPU_PY_FN(module_topk), METH_VARARGS | METH_KEYWORDS,
     "topk(scores, k=5, softmax=False) -> (indices, values), best first; with softmax the "
     "values are probabilities over all scores"},
    {"yolo_decode", NPU_PY_FN(module_yolo_decode), METH_VARARGS | METH_KEYWORDS,
     "yolo_decode(output, version=8, threshold=0.25) -> detections (N x 6) in model-input "
     "pixels; output: v5 [boxes, 5 + classes], v8 [4 + classes, boxes] (a leading batch axis "
     "of 1 allowed)"},
    {"ssd_decode", NPU_PY_FN(module_ssd_decode), METH_VARARGS | METH_KEYWORDS,
     "ssd_decode(boxes, scores, width, height, threshold=0.5, background=True) -> detections: "
     "boxes N x 4 normalised x0, y0, x1, y1; scores N x classes (class 0 the background)"},
    {"nms", NPU_PY_FN(module_nms), METH_VARARGS | METH_KEYWORDS,
     "nms(detections, iou_threshold=0.45, class_wise=True, max_keep=0) -> the kept detections, "
     "best first"},
    {"unletterbox", NPU_PY_FN(module_unletterbox), METH_VARARGS | METH_KEYWORDS,
     "unletterbox(detections, mapping, width, height) -> detections in frame pixels; mapping: "
     "(scale_x, scale_y, pad_x, pad_y) as to_tensor(..., with_mapping=True) gives"},
    {"dbnet_regions", NPU_PY_FN(module_dbnet_regions), METH_VARARGS | METH_KEYWORDS,
     "dbnet_regions(probability, threshold=0.3, box_threshold=0.6, unclip_ratio=1.5, "
     "min_size=3, max_regions=1000) -> (boxes N x 4, corners N x 4 x 2, scores N): PP-OCR "
     "text regions in probability-map pixels"},
    {"ctc_decode", NPU_PY_FN(module_ctc_decode), METH_VARARGS | METH_KEYWORDS,
     "ctc_decode(scores, dictionary, blank=0) -> (text, confidence): greedy CTC over steps x "
     "classes scores; class c is dictionary[c - 1] when blank is 0"},
    {NULL},
};
