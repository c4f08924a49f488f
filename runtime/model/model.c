/* Models: loading (protobuf-c), validation (onnx_graph.c) and description. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "float16.h"
#include "model_internal.h"
#include "npu_internal.h"
#include "onnx_wire.h"
#include "weight_store.h"

/* Initializers of at least this many bytes of raw data are lifted out of the
 * protobuf bytes and copied once (onnx_wire.h); smaller ones protobuf-c
 * copies as it parses. */
#define LIFTED_MIN_BYTES 4096

struct npu_model {
  atomic_uint refcount;
  Onnx__ModelProto *proto; /* owns names, attributes and small constants' data */
  npu_weight_store *weights; /* the large initializers' data (NULL: none) */
  npu_graph graph;
};

NPU_API size_t npu_dtype_size(npu_dtype dtype)
{
  switch (dtype) {
  case NPU_DTYPE_FLOAT32: case NPU_DTYPE_INT32: case NPU_DTYPE_UINT32: return 4;
  case NPU_DTYPE_UINT8: case NPU_DTYPE_INT8: case NPU_DTYPE_BOOL: return 1;
  case NPU_DTYPE_UINT16: case NPU_DTYPE_INT16: case NPU_DTYPE_FLOAT16: return 2;
  case NPU_DTYPE_INT64: case NPU_DTYPE_FLOAT64: case NPU_DTYPE_UINT64: return 8;
  case NPU_DTYPE_UNDEFINED: break;
  }
  return 0;
}

NPU_API const char *npu_dtype_name(npu_dtype dtype)
{
  switch (dtype) {
  case NPU_DTYPE_FLOAT32: return "float32";
  case NPU_DTYPE_UINT8: return "uint8";
  case NPU_DTYPE_INT8: return "int8";
  case NPU_DTYPE_UINT16: return "uint16";
  case NPU_DTYPE_UINT32: return "uint32";
  case NPU_DTYPE_UINT64: return "uint64";
  case NPU_DTYPE_INT16: return "int16";
  case NPU_DTYPE_INT32: return "int32";
  case NPU_DTYPE_INT64: return "int64";
  case NPU_DTYPE_BOOL: return "bool";
  case NPU_DTYPE_FLOAT16: return "float16";
  case NPU_DTYPE_FLOAT64: return "float64";
  case NPU_DTYPE_UNDEFINED: break;
  }
  return "undefined";
}

/* Gives the pages wholly inside [data, data + size) of a read-only file
 * mapping back (their bytes have been copied); the file's page cache keeps
 * them, they just stop counting in this process. */
static void release_mapped_pages(const uint8_t *data, size_t size)
{
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t first = ((uintptr_t)data + page - 1) / page * page;
  uintptr_t last = ((uintptr_t)data + size) / page * page;
  if (last > first)
    madvise((void *)first, last - first, MADV_DONTNEED);
}

/* Copies a mapped initializer a few MiB at a time, each part's pages given
 * back once copied, so that no more than that is resident twice. */
static void copy_blob(uint8_t *copy, const uint8_t *data, size_t size, bool mapped)
{
  const size_t part = 8u << 20;
  for (size_t done = 0; done < size; done += part) {
    size_t n = size - done < part ? size - done : part;
    memcpy(copy + done, data + done, n);
    if (mapped)
      release_mapped_pages(data + done, n);
  }
}

/* The proto without the initializer data the store holds (protobuf-c would
 * free it), then freed. */
static void free_proto(Onnx__ModelProto *proto, const npu_weight_store *weights)
{
  for (size_t i = 0; proto && proto->graph && i < proto->graph->n_initializer; i++) {
    Onnx__TensorProto *tensor = proto->graph->initializer[i];
    if (tensor->has_raw_data && npu_weight_store_holds(weights, tensor->raw_data.data)) {
      tensor->raw_data.data = NULL;
      tensor->has_raw_data = 0;
    }
  }
  if (proto)
    onnx__model_proto__free_unpacked(proto, NULL);
}

/* The weight store for the lifted blobs (`fd`: the file they lie in, or -1). */
static npu_status create_store(const npu_onnx_blob *blobs, size_t count, int fd,
                               npu_weight_store **weights)
{
  size_t *sizes = malloc((2 * count + 1) * sizeof *sizes);
  if (!sizes) {
    if (fd >= 0)
      close(fd);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory loading the weights");
  }
  size_t *offsets = sizes + count;
  for (size_t i = 0; i < count; i++) {
    sizes[i] = blobs[i].size;
    offsets[i] = blobs[i].offset;
  }
  npu_status status = npu_weight_store_create(sizes, offsets, count, fd, weights);
  free(sizes);
  return status;
}

/* ModelProto of `size` bytes (a read-only file mapping when `mapped`; the
 * bytes of the file open as `fd`, which this takes, or -1), its large
 * initializers copied once each, straight into the weight store. */
static npu_status unpack(const uint8_t *data, size_t size, bool mapped, int fd,
                         Onnx__ModelProto **out, npu_weight_store **weights)
{
  uint8_t *stripped = NULL;
  size_t stripped_size = 0, blob_count = 0;
  npu_onnx_blob *blobs = NULL;
  bool lifted = npu_onnx_lift_initializer_data(data, size, LIFTED_MIN_BYTES, &stripped,
                                               &stripped_size, &blobs, &blob_count);
  Onnx__ModelProto *proto = lifted ? onnx__model_proto__unpack(NULL, stripped_size, stripped)
                                   : onnx__model_proto__unpack(NULL, size, data);
  free(stripped);
  npu_status status = NPU_OK;
  *weights = NULL;
  if (!proto) {
    status = npu_set_error(NPU_ERROR_INVALID_MODEL,
                           "not an ONNX model: the %zu bytes do not parse as a ModelProto", size);
    if (fd >= 0)
      close(fd);
  } else if (lifted) {
    status = create_store(blobs, blob_count, fd, weights);
  } else if (fd >= 0) {
    close(fd);
  }
  for (size_t i = 0; status == NPU_OK && i < blob_count; i++) {
    const npu_onnx_blob *blob = &blobs[i];
    /* the pass and protobuf-c count the same initializer fields */
    Onnx__TensorProto *tensor = proto->graph && blob->initializer < proto->graph->n_initializer
                                    ? proto->graph->initializer[blob->initializer]
                                    : NULL;
    if (!tensor || tensor->has_raw_data) {
      status = npu_set_error(NPU_ERROR_INTERNAL, "initializer %zu of the model: its data was "
                             "lifted, but protobuf-c read another tensor there", blob->initializer);
    } else {
      void *copy = npu_weight_store_data(*weights, i);
      copy_blob(copy, data + blob->offset, blob->size, mapped);
      tensor->raw_data.data = copy;
      tensor->raw_data.len = blob->size;
      tensor->has_raw_data = 1;
    }
  }
  free(blobs);
  if (status != NPU_OK) {
    free_proto(proto, *weights);
    npu_weight_store_destroy(*weights);
    *weights = NULL;
  }
  *out = status == NPU_OK ? proto : NULL;
  return status;
}

/* `fd`: the file the bytes are (taken), or -1 when they come from memory. */
static npu_status load(const void *data, size_t size, bool mapped, int fd, const char *base_dir,
                       npu_model **out)
{
  npu_model *model = calloc(1, sizeof *model);
  if (!model) {
    if (fd >= 0)
      close(fd);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory loading a model");
  }
  /* The proto and the store keep copies of what they need: the caller's
   * bytes may go after this. */
  npu_status unpacked = unpack(data, size, mapped, fd, &model->proto, &model->weights);
  if (unpacked != NPU_OK) {
    free(model);
    return unpacked;
  }
  npu_status status = npu_graph_from_onnx(model->proto, base_dir, &model->graph);
  if (status == NPU_OK) {
    status = npu_graph_float16_to_float32(&model->graph);
    if (status == NPU_OK)
      status = npu_graph_optimize(&model->graph);
    if (status == NPU_OK)
      status = npu_weight_store_bind(model->weights, &model->graph);
    if (status != NPU_OK)
      npu_graph_clear(&model->graph);
  }
  if (status != NPU_OK) {
    free_proto(model->proto, model->weights);
    npu_weight_store_destroy(model->weights);
    free(model);
    return status;
  }
  atomic_init(&model->refcount, 1);
  npu_handle_register(model, NPU_HANDLE_MODEL);
  *out = model;
  return NPU_OK;
}

NPU_API npu_status npu_model_load_memory(const void *data, size_t size, const char *base_dir,
                                         npu_model **model)
{
  if (!data || !size || !model)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_model_load_memory: data or model is NULL, or size is 0");
  return load(data, size, false, -1, base_dir, model);
}

NPU_API npu_status npu_model_load_file(const char *path, npu_model **model)
{
  if (!path || !model)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_model_load_file: path or model is NULL");
  FILE *file = fopen(path, "rb");
  if (!file)
    return npu_set_error(errno == ENOENT ? NPU_ERROR_NOT_FOUND : NPU_ERROR_IO,
                         "cannot open model '%s': %s", path, strerror(errno));
  npu_status status = NPU_OK;
  char *bytes = NULL, *dir_copy = NULL;
  long size = -1;
  struct stat info;
  if (fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) {
    /* (a directory opens, and "seeks" to LONG_MAX) */
    status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "model '%s' is not a regular file", path);
    goto done;
  }
  if (fseek(file, 0, SEEK_END) == 0)
    size = ftell(file);
  if (size <= 0 || fseek(file, 0, SEEK_SET) != 0) {
    status = npu_set_error(NPU_ERROR_INVALID_MODEL, "model '%s' is empty or unreadable", path);
    goto done;
  }
  dir_copy = strdup(path);
  if (!dir_copy) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory reading model '%s'", path);
    goto done;
  }
  /* Mapped, so that only the pages being copied are resident (unpack());
   * read into memory where the file cannot be mapped. The weight store
   * keeps the file open, to read dropped weights again. */
  void *mapping = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fileno(file), 0);
  int store_fd = -1;
  if (mapping != MAP_FAILED) {
    if ((store_fd = fcntl(fileno(file), F_DUPFD_CLOEXEC, 0)) < 0)
      status = npu_set_error(NPU_ERROR_IO, "cannot keep model '%s' open: %s", path,
                             strerror(errno));
    else
      status = load(mapping, (size_t)size, true, store_fd, dirname(dir_copy), model);
    munmap(mapping, (size_t)size);
  } else if (!(bytes = malloc((size_t)size))) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory reading model '%s'", path);
  } else if (fread(bytes, 1, (size_t)size, file) != (size_t)size) {
    status = npu_set_error(NPU_ERROR_IO, "cannot read model '%s'", path);
  } else if ((store_fd = fcntl(fileno(file), F_DUPFD_CLOEXEC, 0)) < 0) {
    status = npu_set_error(NPU_ERROR_IO, "cannot keep model '%s' open: %s", path,
                           strerror(errno));
  } else {
    status = load(bytes, (size_t)size, false, store_fd, dirname(dir_copy), model);
  }
  if (status != NPU_OK) { /* say which file */
    char reason[512];
    snprintf(reason, sizeof reason, "%s", npu_last_error_message());
    npu_set_error(status, "model '%s': %s", path, reason);
  }
done:
  free(bytes);
  free(dir_copy);
  fclose(file);
  return status;
}

NPU_API npu_status npu_model_retain(npu_model *model)
{
  npu_status status = npu_handle_check(model, NPU_HANDLE_MODEL, "model");
  if (status == NPU_OK)
    atomic_fetch_add(&model->refcount, 1);
  return status;
}

NPU_API npu_status npu_model_release(npu_model *model)
{
  npu_status status = npu_handle_check(model, NPU_HANDLE_MODEL, "model");
  if (status != NPU_OK || atomic_fetch_sub(&model->refcount, 1) != 1)
    return status;
  npu_handle_unregister(model, NPU_HANDLE_MODEL, "model");
  npu_graph_clear(&model->graph);
  free_proto(model->proto, model->weights);
  npu_weight_store_destroy(model->weights);
  free(model);
  return NPU_OK;
}

static npu_status describe(npu_model *model, bool inputs, uint32_t index, npu_tensor_info *info)
{
  npu_status status = npu_handle_check(model, NPU_HANDLE_MODEL, "model");
  if (status != NPU_OK)
    return status;
  size_t count = inputs ? model->graph.input_count : model->graph.output_count;
  if (!info || index >= count)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "model %s %u: info is NULL or the model has "
                         "%zu", inputs ? "input" : "output", index, count);
  const npu_graph_tensor *t =
      &model->graph.tensors[inputs ? model->graph.inputs[index] : model->graph.outputs[index]];
  memset(info, 0, sizeof *info);
  info->name = t->name;
  info->dtype = t->dtype;
  info->rank = t->has_shape ? t->rank : 0;
  for (uint32_t i = 0; i < info->rank; i++) {
    info->dims[i] = t->dims[i];
    info->dim_names[i] = t->dim_names[i];
  }
  return NPU_OK;
}

NPU_API npu_status npu_model_input_info(npu_model *model, uint32_t index, npu_tensor_info *info)
{
  return describe(model, true, index, info);
}

NPU_API npu_status npu_model_output_info(npu_model *model, uint32_t index,
                                         npu_tensor_info *info)
{
  return describe(model, false, index, info);
}

static npu_status count_of(npu_model *model, uint32_t *count, size_t value, const char *what)
{
  npu_status status = npu_handle_check(model, NPU_HANDLE_MODEL, "model");
  if (status != NPU_OK)
    return status;
  if (!count)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "%s: count is NULL", what);
  *count = (uint32_t)value;
  return NPU_OK;
}

NPU_API npu_status npu_model_input_count(npu_model *model, uint32_t *count)
{
  return count_of(model, count, model ? model->graph.input_count : 0, "npu_model_input_count");
}

NPU_API npu_status npu_model_output_count(npu_model *model, uint32_t *count)
{
  return count_of(model, count, model ? model->graph.output_count : 0, "npu_model_output_count");
}

NPU_API npu_status npu_model_node_count(npu_model *model, uint32_t *count)
{
  return count_of(model, count, model ? model->graph.node_count : 0, "npu_model_node_count");
}

NPU_API npu_status npu_model_opset(npu_model *model, int64_t *opset)
{
  npu_status status = npu_handle_check(model, NPU_HANDLE_MODEL, "model");
  if (status != NPU_OK)
    return status;
  if (!opset)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_model_opset: opset is NULL");
  *opset = model->graph.opset;
  return NPU_OK;
}

const npu_graph *npu_model_graph(npu_model *model)
{
  return &model->graph;
}

npu_weight_store *npu_model_weight_store(npu_model *model)
{
  return model->weights;
}
