/* gst-npu HAL: the graph kernel family. The runtime infers shapes, folds
 * constants (on the host), partitions the graph by what each backend runs
 * and plans memory; a backend turns each of its operators into a kernel
 * once per plan (weights packed, loops chosen) and runs a plan's launches in
 * order on a stream. Windows, axes and ranges come resolved (npu_hal_window,
 * npu_hal_axes, npu_hal_ranges); the operator's other attributes (alpha,
 * epsilon, modes) are read through callbacks. */
#ifndef NPU_HAL_GRAPH_H
#define NPU_HAL_GRAPH_H

#include "npu_hal.h"

typedef struct npu_hal_kernel npu_hal_kernel;

/* How a tensor's elements lie in memory. dims are always in the operator's
 * logical order (N, C, spatial...). Convolution engines run fastest on
 * channels-last or channel-blocked activations, so the runtime keeps them in
 * the backend's preferred layout between kernels that take it. Channel
 * blocks (NC1HWC0) have the block size C0 the backend asks for (the
 * tensor's `block`: 4, 8, 16, 32...) and only hold whole blocks:
 * C % C0 == 0. */
typedef enum npu_hal_layout {
  NPU_HAL_LAYOUT_PLAIN = 0,       /* row-major in dims order */
  NPU_HAL_LAYOUT_CHANNELS_LAST,   /* rank >= 3: (N, spatial..., C) */
  NPU_HAL_LAYOUT_CHANNEL_BLOCKS,  /* rank >= 3: (N, C/C0, spatial..., C0) */
} npu_hal_layout;

/* How an integer tensor's elements stand for real numbers:
 * real = (q - zero_point) * scale, with one (scale, zero point) for the whole
 * tensor (count 1) or one per index of axis `axis` (count = dims[axis]). The
 * runtime fills it where a tensor's quantisation is known when planning (a
 * QuantizeLinear or QLinear* output with constant parameters), so that a
 * backend can run integer kernels without looking for the parameters. */
typedef struct npu_hal_quant {
  uint32_t count;            /* 0: not quantised (or not known when planning) */
  int32_t axis;              /* count > 1: the axis the parameters run along */
  const float *scales;       /* host values, valid while the plan lives */
  const void *zero_points;   /* elements of the tensor's own dtype; NULL: all zero */
} npu_hal_quant;

typedef struct npu_hal_tensor_desc {
  npu_dtype dtype;      /* NPU_DTYPE_UNDEFINED: an optional input left out */
  uint32_t rank;
  int64_t dims[NPU_MAX_RANK];
  npu_hal_layout layout;
  npu_hal_quant quant;
  uint32_t block;       /* NPU_HAL_LAYOUT_CHANNEL_BLOCKS: channels per block (C0) */
} npu_hal_tensor_desc;

/* Channels per block of a tensor's layout: its block in channel blocks, 1
 * in the others. */
static inline uint32_t npu_hal_channel_block(const npu_hal_tensor_desc *t)
{
  return t->layout == NPU_HAL_LAYOUT_CHANNEL_BLOCKS ? t->block : 1;
}

/* Whether two tensors lie in one layout (with one block size). */
static inline bool npu_hal_same_layout(const npu_hal_tensor_desc *a, const npu_hal_tensor_desc *b)
{
  return a->layout == b->layout && npu_hal_channel_block(a) == npu_hal_channel_block(b);
}

/* Operator attributes, read by name with a fallback when absent. A tensor-
 * valued attribute NAME answers get_int/get_float with its first element,
 * and get_int("NAME.dtype") with its element type. */
typedef struct npu_hal_attributes {
  const void *node;
  int64_t (*get_int)(const void *node, const char *name, int64_t fallback);
  float (*get_float)(const void *node, const char *name, float fallback);
  /* Number of values (0 when absent); *values stays valid for the plan's life. */
  size_t (*get_ints)(const void *node, const char *name, const int64_t **values);
  const char *(*get_string)(const void *node, const char *name, const char *fallback);
  /* A FLOATS attribute: as get_ints. */
  size_t (*get_floats)(const void *node, const char *name, const float **values);
  /* Element `index` of a STRINGS attribute (fallback when absent or shorter);
   * its number of elements is get_string_count's. */
  const char *(*get_string_at)(const void *node, const char *name, size_t index,
                               const char *fallback);
  size_t (*get_string_count)(const void *node, const char *name);
} npu_hal_attributes;

/* Elementwise functions applied, in order, to a kernel's output as it is
 * written (operator fusion); the runtime fuses only where the output has
 * no other reader. */
typedef enum npu_hal_activation_kind {
  NPU_HAL_ACTIVATION_RELU,
  NPU_HAL_ACTIVATION_LEAKY_RELU,   /* alpha: the negative slope */
  NPU_HAL_ACTIVATION_CLIP,         /* alpha, beta: the bounds */
  NPU_HAL_ACTIVATION_SIGMOID,
  NPU_HAL_ACTIVATION_HARD_SIGMOID, /* max(0, min(1, alpha x + beta)) */
  NPU_HAL_ACTIVATION_HARD_SWISH,   /* x * max(0, min(1, x / 6 + 0.5)) */
  NPU_HAL_ACTIVATION_SWISH,        /* x * sigmoid(x) */
  NPU_HAL_ACTIVATION_GELU,         /* x * (1 + erf(x / sqrt 2)) / 2 */
  NPU_HAL_ACTIVATION_GELU_TANH,    /* x * (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2 */
  NPU_HAL_ACTIVATION_TANH,
  NPU_HAL_ACTIVATION_LINEAR,       /* alpha x + beta */
  NPU_HAL_ACTIVATION_MISH,         /* x * tanh(ln(1 + e^x)) */
  NPU_HAL_ACTIVATION_ADD,          /* x + fused_inputs[input]: same shape and layout as x
                                      (a residual connection), or plain with x's last
                                      axis only, all others 1 (a bias, as after MatMul) */
  /* On a quantised kernel (its output 8-bit), x is its output's real value
   * as its own quantisation leaves it (rounded, saturated, dequantised): */
  NPU_HAL_ACTIVATION_DEQUANTIZED_ADD, /* x + (fused_inputs[input] - beta) * alpha: an 8-bit
                                         tensor of x's shape, type and layout (scale alpha,
                                         zero point beta), as QLinearAdd adds it */
  NPU_HAL_ACTIVATION_QUANTIZE,        /* the last: x quantised with scale alpha and zero
                                         point beta (rounded half to even, saturated) is
                                         written instead of the kernel's own output */
} npu_hal_activation_kind;

typedef struct npu_hal_activation {
  npu_hal_activation_kind kind;
  float alpha, beta;
  uint32_t input; /* ADD, DEQUANTIZED_ADD: which of the op's fused inputs */
} npu_hal_activation;

#define NPU_HAL_MAX_ACTIVATIONS 8

#define NPU_HAL_MAX_SPATIAL (NPU_MAX_RANK - 2)

/* The sliding window of a convolution or pooling (Conv, ConvTranspose,
 * MaxPool, AveragePool and their integer forms), resolved once by the
 * runtime from the attributes and the input's shape: a backend reads
 * these numbers and no attribute of the window. Padding is the model's
 * (auto_pad already applied); an engine that needs the end padding that
 * gives the output size exactly (floor, ceil_mode, output_padding)
 * derives it from the output's dims. */
typedef struct npu_hal_window {
  uint32_t spatial;                          /* axes after N and C */
  int64_t kernel[NPU_HAL_MAX_SPATIAL];       /* the weights' or kernel_shape */
  int64_t strides[NPU_HAL_MAX_SPATIAL];
  int64_t dilations[NPU_HAL_MAX_SPATIAL];
  int64_t pad_begin[NPU_HAL_MAX_SPATIAL];
  int64_t pad_end[NPU_HAL_MAX_SPATIAL];
  int64_t output_padding[NPU_HAL_MAX_SPATIAL]; /* ConvTranspose; 0 elsewhere */
  int64_t output[NPU_HAL_MAX_SPATIAL];       /* the output's spatial dims */
  int64_t group;                             /* 1 for pooling */
  bool ceil_mode;                            /* pooling: the last partial window counts */
  bool count_include_pad;                    /* AveragePool: padded positions count in the mean */
} npu_hal_window;

/* The axes an operator works on, resolved by the runtime from its `axis`
 * or `axes` (an attribute, or a constant input in newer opsets) and the
 * rank of the tensor they index: each in [0, rank). Per operator:
 * ArgMax, ArgMin, Concat, Gather, LayerNormalization (its first normalised
 * axis), LogSoftmax, Softmax, Split, TopK: one axis. Flatten: one, in
 * [0, rank]. Reductions: the reduced axes in increasing order (all of them
 * when the model names none; none with noop_with_empty_axes). Squeeze: the
 * removed axes, increasing (every axis of size 1 when the model names
 * none). Unsqueeze: the inserted axes of the output, increasing.
 * Transpose: the permutation, one per axis: output axis i is input axis
 * axes[i]. */
typedef struct npu_hal_axes {
  uint32_t count;
  uint32_t axes[NPU_MAX_RANK];
} npu_hal_axes;

/* Pad's and Slice's per-axis parameters, resolved by the runtime from
 * attributes (older opsets) or constant inputs, for every axis of input 0.
 * Pad: `begin` elements added before each axis (negative: removed), `end`
 * after (step unused). Slice: on each axis the indices from `begin` (in
 * range) towards `end` (exclusive; clamped as ONNX does) by `step` (0, dim
 * and 1 on the axes not sliced): npu_strided_count() of them, the output's
 * dim. */
typedef struct npu_hal_ranges {
  int64_t begin[NPU_MAX_RANK];
  int64_t end[NPU_MAX_RANK];
  int64_t step[NPU_MAX_RANK];
} npu_hal_ranges;

typedef struct npu_hal_op {
  const char *op_type;
  int64_t opset;
  npu_hal_attributes attributes;
  uint32_t input_count, output_count;
  const npu_hal_tensor_desc *inputs, *outputs;
  /* Host copies of inputs whose values are known when planning (weights,
   * shapes), NULL elsewhere: kernels may pre-pack them. They stay at these
   * addresses, unchanged, while a kernel made from them lives. Inputs an
   * operator needs as constants (Reshape's shape, Clip's bounds, Pad's
   * constant value, TopK's k...) always have them: the runtime refuses the
   * node otherwise. */
  const void *const *input_values;
  /* Fused into output 0; a kernel that cannot apply them answers
   * NPU_ERROR_NOT_SUPPORTED and the runtime runs those operators apart. */
  const npu_hal_activation *activations;
  uint32_t activation_count;
  /* Tensors the activations read (ADD); a launch passes them after the
   * op's own inputs. */
  const npu_hal_tensor_desc *fused_inputs;
  uint32_t fused_input_count;
  /* The node's name, for messages (NULL or empty: none). */
  const char *name;
  /* Window operators: their resolved window (NULL elsewhere). */
  const npu_hal_window *window;
  /* Operators with axes: their resolved axes (NULL elsewhere). */
  const npu_hal_axes *axes;
  /* Pad and Slice: their resolved ranges (NULL elsewhere). */
  const npu_hal_ranges *ranges;
  /* The context's precision (npu_context_options): a hint that a float32
   * operator may be computed with less (NPU_PRECISION_BF16: products of
   * bfloat16-rounded inputs). A backend that cannot ignores it and says so
   * in npu_device_caps.bf16_compute. Constants are folded in float32. */
  npu_precision precision;
} npu_hal_op;

/* One kernel run: where its inputs and outputs are. */
typedef struct npu_hal_launch {
  npu_hal_kernel *kernel;
  uint32_t input_count, output_count; /* inputs: the op's own, then its fused inputs */
  npu_hal_mem_ref *inputs;  /* .buffer NULL and .host NULL: an input left out */
  npu_hal_mem_ref *outputs;
  npu_hal_mem_ref workspace; /* kernel_workspace() bytes, planned in the arena */
} npu_hal_launch;

/* Compiled subgraphs: defined at the end. */
typedef struct npu_hal_executable npu_hal_executable;
typedef struct npu_hal_subgraph npu_hal_subgraph;

struct npu_hal_graph_ops {
  /* Capability: whether the backend runs `op` with the shapes, element types
   * and layouts its tensors carry, asked before any kernel is made. The
   * runtime partitions the graph into subgraphs per device: what the backend
   * does not run goes to the CPU backend, with the transfers between them
   * planned on streams. Optional (NULL: every operator; kernel_create then
   * must take them all). */
  bool (*op_supported)(npu_hal_device *device, const npu_hal_op *op);
  /* NPU_ERROR_NOT_SUPPORTED (with a message) when the backend cannot run it. */
  npu_status (*kernel_create)(npu_hal_device *device, const npu_hal_op *op,
                              npu_hal_kernel **kernel);
  void (*kernel_destroy)(npu_hal_kernel *kernel);
  /* Whether kernel_create takes `op` with the layouts its tensors carry (the
   * runtime asks before choosing channels-last for a tensor). Optional
   * (NULL: plain layouts only). */
  bool (*layout_supported)(npu_hal_device *device, const npu_hal_op *op);
  /* The layout the backend's kernels run fastest on for this activation
   * tensor, and for channel blocks their size in *block (the runtime falls
   * back to halves of that block down to 8, then channels-last, then plain,
   * where a kernel around it does not take it). Optional (NULL:
   * channels-last). */
  npu_hal_layout (*preferred_layout)(npu_hal_device *device, const npu_hal_tensor_desc *tensor,
                                     uint32_t *block);
  /* The inputs (bit i: input i) that the kernel copied from op->input_values
   * when it was created (packed weights) and never reads when it runs: the
   * runtime keeps no device copy of constants only such kernels read.
   * Optional (NULL: none). */
  uint32_t (*kernel_packed_inputs)(const npu_hal_kernel *kernel);
  /* The inputs (bit i: input i) whose memory the kernel's output 0 may take:
   * of the output's type, shape and layout, each of their elements read only
   * to compute the same element of the output, before it is written. Where
   * such an input dies at this launch the runtime gives the output its
   * memory, so that an elementwise step (squeeze-excitation's channel
   * scale) writes over what it reads. Optional (NULL: none). */
  uint32_t (*kernel_in_place_inputs)(const npu_hal_kernel *kernel);
  /* Scratch memory a kernel needs while it runs; the runtime plans it like a
   * tensor that lives for that one launch. Optional (NULL: none). */
  size_t (*kernel_workspace)(const npu_hal_kernel *kernel);
  /* Kernels finished in the background: between kernels_begin and
   * kernels_ready, a kernel that kernel_create returns on the calling
   * thread may not be ready to run yet (the CPU backend compiles their
   * oneDNN primitives on helper threads meanwhile); kernels_ready waits
   * until they all are, reports the first failure, and ends that. Destroying such a kernel before is
   * allowed. The runtime brackets the creation of a plan's kernels with
   * them. Optional (NULL: kernel_create returns kernels ready to run). */
  void (*kernels_begin)(npu_hal_device *device);
  npu_status (*kernels_ready)(npu_hal_device *device);
  /* Kernels that start out running another way (a batch of 8 as 8 runs of
   * a batch-1 kernel) while their own code is compiled in the background,
   * at low priority, after kernels_ready, and switch to it between
   * launches; outputs are the same either way. kernels_settle waits until
   * every such kernel has switched (the caller may help compile). Optional
   * (NULL: kernels_ready leaves nothing to wait for). */
  void (*kernels_settle)(npu_hal_device *device);
  /* Runs the launches, in order, now, and returns once they have run (the
   * first failure is returned with its message): for the runtime's
   * constant folding while it plans, where a stream's round trips per
   * folded node cost more than the kernels. Optional (NULL: the runtime
   * queues them with run on a stream and waits for it). */
  npu_status (*run_now)(npu_hal_device *device, const npu_hal_launch *launches, size_t count);
  /* Queues the launches, in order, on `stream`; `done` runs after the last. */
  npu_status (*run)(npu_hal_device *device, npu_hal_stream *stream,
                    const npu_hal_launch *launches, size_t count, npu_hal_task_fn done,
                    void *done_data);

  /* Compiled subgraphs (npu_hal_subgraph below). Optional: a backend
   * chooses them by setting subgraph_compile (and executable_destroy and
   * executable_run), and the runtime then offers it each of its subgraphs
   * whole, falling back to the per-op entries above for one it refuses
   * (NPU_ERROR_NOT_SUPPORTED); without it (the CPU backend), every
   * operator gets a kernel of its own. */
  npu_status (*subgraph_compile)(npu_hal_device *device, const npu_hal_subgraph *graph,
                                 npu_hal_executable **executable);
  /* The same subgraph (same nodes, same tensor numbering) with other shapes,
   * from an executable compiled for earlier ones, sharing what does not
   * depend on shapes (its packed constants: a constant with the same host
   * address and desc as in `compiled` holds the same values). The result
   * keeps what it shares alive itself: `compiled` may be destroyed first.
   * Optional (NULL or NPU_ERROR_NOT_SUPPORTED: subgraph_compile again). */
  npu_status (*executable_reshape)(npu_hal_device *device,
                                   const npu_hal_executable *compiled,
                                   const npu_hal_subgraph *graph,
                                   npu_hal_executable **executable);
  void (*executable_destroy)(npu_hal_executable *executable);
  /* Device memory the executable needs while it runs (its intermediates,
   * laid out as it likes); planned in the runtime's arena. Optional (NULL: none). */
  size_t (*executable_workspace)(const npu_hal_executable *executable);
  /* Whether the executable keeps its own copy of constant `constant` (an
   * index into graph->constants): the runtime then keeps no device copy and
   * passes a NULL reference for it. Optional (NULL: none is packed). */
  bool (*executable_packed_constant)(const npu_hal_executable *executable,
                                     uint32_t constant);
  /* Queues one run of the whole subgraph on `stream`: inputs, constants and
   * outputs in the order of graph->inputs, ->constants and ->outputs;
   * `workspace` holds executable_workspace() bytes. `done` runs after it. */
  npu_status (*executable_run)(npu_hal_device *device, npu_hal_stream *stream,
                               npu_hal_executable *executable, const npu_hal_mem_ref *inputs,
                               const npu_hal_mem_ref *constants, const npu_hal_mem_ref *outputs,
                               npu_hal_mem_ref workspace, npu_hal_task_fn done,
                               void *done_data);
};

/* ---- Compiled subgraphs ---------------------------------------------------
 * A backend may take a whole subgraph (operators it runs, consecutive in the
 * plan) and compile it into one executable, as an NPU's model compiler or a
 * GPU graph compiler does: its own fusion, kernels, memory layout and
 * binary format. The runtime plans only the subgraph's boundary (its inputs
 * and outputs, in the runtime's memory) and one workspace the executable
 * asks for; everything inside is the backend's. The description is whole:
 * a backend needs nothing from the runtime's model or ONNX to compile it. */

#define NPU_HAL_SUBGRAPH_ABSENT UINT32_MAX

/* One operator of a subgraph. op's descs and input_values are the
 * subgraph's (op.activations: none, the backend fuses what it likes);
 * inputs and outputs name subgraph tensors (NPU_HAL_SUBGRAPH_ABSENT: an
 * optional input left out, or an output nothing names). */
typedef struct npu_hal_subgraph_node {
  npu_hal_op op;
  const uint32_t *inputs;   /* op.input_count */
  const uint32_t *outputs;  /* op.output_count */
} npu_hal_subgraph_node;

struct npu_hal_subgraph {
  uint32_t node_count;
  const npu_hal_subgraph_node *nodes; /* producers before consumers */
  uint32_t tensor_count;
  const npu_hal_tensor_desc *tensors; /* every tensor a node reads or writes */
  /* Per tensor: the host value of a constant (weights, folded values), NULL
   * for the others; valid while the executable lives. */
  const void *const *values;
  uint32_t input_count, output_count, constant_count;
  const uint32_t *inputs;    /* written before the subgraph runs, read in it */
  const uint32_t *outputs;   /* written in it, read after it (or the model's outputs) */
  const uint32_t *constants; /* read in it, with host values */
  /* The other tensors are internal: only the executable sees them. */
};

#endif
