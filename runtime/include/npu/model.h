/* gst-npu runtime: models.
 *
 * A model is loaded once from an ONNX file or memory, validated completely
 * (a bad model is refused with a message naming the node and the problem),
 * and described: inputs and outputs with names, element types and
 * dimensions, dynamic axes marked. One loaded model is shared by reference
 * between users (npu_model_retain/release, thread-safe). */
#ifndef NPU_MODEL_H
#define NPU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <npu/memory.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types; the values are ONNX's TensorProto.DataType. */
typedef enum npu_dtype {
  NPU_DTYPE_UNDEFINED = 0,
  NPU_DTYPE_FLOAT32 = 1,
  NPU_DTYPE_UINT8 = 2,
  NPU_DTYPE_INT8 = 3,
  NPU_DTYPE_UINT16 = 4,
  NPU_DTYPE_INT16 = 5,
  NPU_DTYPE_INT32 = 6,
  NPU_DTYPE_INT64 = 7,
  NPU_DTYPE_BOOL = 9,
  NPU_DTYPE_FLOAT16 = 10,
  NPU_DTYPE_FLOAT64 = 11,
  NPU_DTYPE_UINT32 = 12,
  NPU_DTYPE_UINT64 = 13,
} npu_dtype;

/* Bytes per element, 0 for types the runtime does not handle. */
NPU_API size_t npu_dtype_size(npu_dtype dtype);
NPU_API const char *npu_dtype_name(npu_dtype dtype);

#define NPU_MAX_RANK 8
#define NPU_DIM_DYNAMIC (-1)

typedef struct npu_tensor_info {
  const char *name;           /* valid while the model lives */
  npu_dtype dtype;
  uint32_t rank;
  int64_t dims[NPU_MAX_RANK]; /* NPU_DIM_DYNAMIC where the model leaves it open */
  const char *dim_names[NPU_MAX_RANK]; /* the symbolic name of a dynamic axis, or NULL */
} npu_tensor_info;

typedef struct npu_model npu_model;

/* Loads and validates an ONNX model (opsets 9 to 18 of the default domain).
 * External data files are read from the model file's directory. */
NPU_API npu_status npu_model_load_file(const char *path, npu_model **model);

/* The same from bytes in memory; external data is looked up in `base_dir`
 * (NULL: a model with external data is refused). The bytes are copied. */
NPU_API npu_status npu_model_load_memory(const void *data, size_t size, const char *base_dir,
                                         npu_model **model);

NPU_API npu_status npu_model_retain(npu_model *model);
NPU_API npu_status npu_model_release(npu_model *model);

NPU_API npu_status npu_model_input_count(npu_model *model, uint32_t *count);
NPU_API npu_status npu_model_output_count(npu_model *model, uint32_t *count);
NPU_API npu_status npu_model_input_info(npu_model *model, uint32_t index, npu_tensor_info *info);
NPU_API npu_status npu_model_output_info(npu_model *model, uint32_t index,
                                         npu_tensor_info *info);

/* The default-domain opset the model was exported with, and its node count. */
NPU_API npu_status npu_model_opset(npu_model *model, int64_t *opset);
NPU_API npu_status npu_model_node_count(npu_model *model, uint32_t *count);

/* An execution context: one model on one device, planned for a set of
 * input shapes (a shape profile: pick the batch size and image size of
 * dynamic axes at creation, change them with npu_context_reshape). It owns
 * the weights on the device (uploaded once, whatever the shapes), and per
 * shape the kernels and one memory arena, so running it allocates no device
 * memory. Many contexts share one loaded model. A context runs one
 * inference at a time: a run queued while the previous one is pending
 * waits for it first. */
typedef struct npu_context npu_context;

/* The phases of planning a shape (npu_context_create, npu_context_reshape),
 * in the order they run. */
typedef enum npu_plan_phase {
  NPU_PLAN_PHASE_SHAPES,  /* shape inference and constant folding */
  NPU_PLAN_PHASE_LAYOUTS, /* devices and tensor layouts */
  NPU_PLAN_PHASE_KERNELS, /* creating kernels: describing them, packing weights */
  NPU_PLAN_PHASE_MEMORY,  /* placing weights, constants and the arena; binding launches */
  NPU_PLAN_PHASE_COMPILE, /* waiting for (and helping) a backend that compiles
                             kernels on its own threads meanwhile */
  NPU_PLAN_PHASE_COUNT
} npu_plan_phase;

/* "shapes", "layouts", ...; NULL for a value out of range. */
NPU_API const char *npu_plan_phase_name(npu_plan_phase phase);

typedef struct npu_context_stats {
  uint64_t arena_bytes;      /* planned intermediate memory */
  uint64_t naive_bytes;      /* what one buffer per intermediate tensor would take */
  uint64_t constant_bytes;   /* weights and folded constants on the device */
  uint32_t kernels;          /* kernel launches per run (compiled subgraphs apart) */
  uint32_t folded_nodes;     /* nodes computed once while planning */
  uint32_t fused_nodes;      /* elementwise nodes run inside another kernel */
  uint32_t relaid_tensors;   /* intermediates kept in the backend's own layout
                                (channels-last or channel blocks) between kernels */
  uint32_t shape_plans;      /* input shapes planned and kept (npu_context_reshape) */
  /* Partitioning, where the device's backend runs only some operators: */
  uint32_t subgraphs;        /* runs of consecutive kernels on one device (1: no split) */
  uint32_t host_kernels;     /* kernels the CPU backend runs for the device */
  uint64_t transfer_bytes;   /* copied between the device and the host per run */
  /* Subgraphs the device's backend compiled whole (npu_hal_graph.h); their
   * nodes are not among `kernels`: */
  uint32_t compiled_subgraphs; /* executables launched per run */
  uint32_t compiled_nodes;     /* nodes they run */
  /* Where the current shape's plan spent its time, per phase: wall clock,
   * and CPU time of the planning thread (a backend's own threads, such as
   * the CPU backend's compile helpers, are not in it). */
  double plan_phase_ms[NPU_PLAN_PHASE_COUNT];
  double plan_phase_cpu_ms[NPU_PLAN_PHASE_COUNT];
} npu_context_stats;

/* The arithmetic a context may compute a float32 model's convolutions and
 * matrix products in. A hint to the device: one without bfloat16 products
 * (npu_device_caps.bf16_compute false) computes in float32 all the same. */
typedef enum npu_precision {
  NPU_PRECISION_FP32 = 0, /* float32 throughout (the default) */
  NPU_PRECISION_BF16,     /* inputs of products rounded to bfloat16 (8 bits of mantissa),
                             sums and everything else in float32: faster, some 1e-3
                             relative error per layer */
} npu_precision;

/* "fp32", "bf16"; NULL for a value that is none of them. */
NPU_API const char *npu_precision_name(npu_precision precision);
/* The precision of that name; NPU_ERROR_INVALID_ARGUMENT for another. */
NPU_API npu_status npu_precision_from_name(const char *name, npu_precision *precision);

/* How a context computes; all zero: the defaults. */
typedef struct npu_context_options {
  npu_precision precision;
} npu_context_options;

/* `shapes` (may be NULL when every input is static) gives each model input's
 * dims in input order; only dims left dynamic by the model may differ. */
NPU_API npu_status npu_context_create(npu_model *model, npu_device *device,
                                      const npu_tensor_info *shapes, uint32_t shape_count,
                                      npu_context **context);

/* The same with options (NULL: the defaults); a value out of range is
 * refused (NPU_ERROR_INVALID_ARGUMENT). */
NPU_API npu_status npu_context_create_with_options(npu_model *model, npu_device *device,
                                                   const npu_tensor_info *shapes,
                                                   uint32_t shape_count,
                                                   const npu_context_options *options,
                                                   npu_context **context);
NPU_API npu_status npu_context_destroy(npu_context *context);

/* Plans the context for other input shapes (same rules as at creation) and
 * makes them current; later runs take buffers of those shapes. The weights
 * stay on the device and packed as they are: a new shape costs only its
 * kernels' set-up and its arena, and the last 12 shapes stay planned, so
 * going back to one costs nothing. Waits for a pending run first. On
 * failure the current shapes stay. */
NPU_API npu_status npu_context_reshape(npu_context *context, const npu_tensor_info *shapes,
                                       uint32_t shape_count);

/* Concrete shapes of this profile. */
NPU_API npu_status npu_context_input_info(npu_context *context, uint32_t index,
                                          npu_tensor_info *info);
NPU_API npu_status npu_context_output_info(npu_context *context, uint32_t index,
                                           npu_tensor_info *info);

/* Queues one inference on `stream`: inputs and outputs are device buffers
 * of at least the tensors' sizes, in model order. They must stay alive
 * until the stream has run it (the call keeps references itself). */
/* Waits until the current shapes' plan runs as fast as a first plan made
 * for them: a re-plan may start out running kernels made for an earlier
 * shape (a batch of 8 as 8 runs of batch 1) while the device compiles their
 * own in the background at low priority, and swaps those in between
 * kernel launches. This waits for (and helps with) that compiling. Outputs
 * are the same either way: a pipeline need not call it. */
NPU_API npu_status npu_context_settle(npu_context *context);

NPU_API npu_status npu_context_run(npu_context *context, npu_stream *stream,
                                   npu_buffer *const *inputs, npu_buffer *const *outputs);

/* The same, synchronously: runs on a stream of the context's own and
 * returns when the outputs are written. */
NPU_API npu_status npu_context_run_sync(npu_context *context, npu_buffer *const *inputs,
                                        npu_buffer *const *outputs);

NPU_API npu_status npu_context_get_stats(npu_context *context, npu_context_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
