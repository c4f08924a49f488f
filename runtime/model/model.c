/* Models: loading (protobuf-c), validation (onnx_graph.c) and description. */
#include <errno.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "float16.h"
#include "model_internal.h"
#include "npu_internal.h"

struct npu_model {
  atomic_uint refcount;
  Onnx__ModelProto *proto; /* owns names, attributes and raw constant data */
  npu_graph graph;
};

NPU_API size_t npu_dtype_size(npu_dtype dtype)
{
  switch (dtype) {
  case NPU_DTYPE_FLOAT32: case NPU_DTYPE_INT32: return 4;
  case NPU_DTYPE_UINT8: case NPU_DTYPE_INT8: case NPU_DTYPE_BOOL: return 1;
  case NPU_DTYPE_UINT16: case NPU_DTYPE_INT16: case NPU_DTYPE_FLOAT16: return 2;
  case NPU_DTYPE_INT64: case NPU_DTYPE_FLOAT64: return 8;
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

static npu_status load(const void *data, size_t size, const char *base_dir, npu_model **out)
{
  npu_model *model = calloc(1, sizeof *model);
  if (!model)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory loading a model");
  /* protobuf-c copies what it keeps: the caller's bytes may go after this. */
  model->proto = onnx__model_proto__unpack(NULL, size, data);
  if (!model->proto) {
    free(model);
    return npu_set_error(NPU_ERROR_INVALID_MODEL,
                         "not an ONNX model: the %zu bytes do not parse as a ModelProto", size);
  }
  npu_status status = npu_graph_from_onnx(model->proto, base_dir, &model->graph);
  if (status == NPU_OK) {
    status = npu_graph_float16_to_float32(&model->graph);
    if (status == NPU_OK)
      status = npu_graph_optimize(&model->graph);
    if (status != NPU_OK)
      npu_graph_clear(&model->graph);
  }
  if (status != NPU_OK) {
    onnx__model_proto__free_unpacked(model->proto, NULL);
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
  return load(data, size, base_dir, model);
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
  bytes = malloc((size_t)size);
  dir_copy = strdup(path);
  if (!bytes || !dir_copy) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory reading model '%s'", path);
    goto done;
  }
  if (fread(bytes, 1, (size_t)size, file) != (size_t)size) {
    status = npu_set_error(NPU_ERROR_IO, "cannot read model '%s'", path);
    goto done;
  }
  status = load(bytes, (size_t)size, dirname(dir_copy), model);
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
  onnx__model_proto__free_unpacked(model->proto, NULL);
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
