/* CPU graph kernels: what the operator files share. */
#ifndef NPU_CPU_KERNELS_H
#define NPU_CPU_KERNELS_H

#include "cpu/cpu_internal.h"
#include "npu_hal_graph.h"

/* outputs[output_count] is the kernel's workspace (workspace_bytes). */
typedef void (*cpu_kernel_fn)(const npu_hal_kernel *kernel, void *const *inputs,
                              void *const *outputs);

struct npu_hal_kernel {
  cpu_kernel_fn run;
  char op_type[32];                          /* for the profile */
  char label[128];                           /* "node 'NAME' (OP)" or "OP": for messages */
  npu_hal_device *device;
  uint32_t input_count, output_count;
  npu_hal_tensor_desc inputs[8], outputs[8]; /* the first 8 (variadic ops see input_count) */
  size_t workspace_bytes;                    /* scratch planned by the runtime */
  uint32_t packed_inputs;                    /* see kernel_packed_inputs */
  uint32_t in_place_inputs;                  /* see kernel_in_place_inputs */
  void *params;                              /* operator-specific, freed with the kernel */
  void (*free_params)(void *params);         /* NULL: free() */
};

/* Fills kernel->run (and params); NPU_ERROR_NOT_SUPPORTED with a message for
 * variants it does not handle. */
typedef npu_status (*cpu_kernel_create_fn)(const npu_hal_op *op, npu_hal_kernel *kernel);

/* The tensor layouts a kernel takes (see npu_hal_layout). */
typedef enum cpu_layouts {
  CPU_LAYOUTS_PLAIN = 0, /* plain tensors only */
  CPU_LAYOUTS_SHARED,    /* any one layout shared by all its same-shape tensors
                            (elementwise: one flat loop serves every layout) */
  CPU_LAYOUTS_ANY,       /* any layout per tensor */
  CPU_LAYOUTS_CHANNEL_AXIS,        /* one layout shared by all tensors when the operator
                                      works along the channel axis and every tensor holds
                                      whole channel blocks (Concat, Split): per batch item
                                      a tensor's blocks follow each other as its channels
                                      do in the plain layout, and channels-last is the
                                      plain layout with channels innermost */
  CPU_LAYOUTS_SHARED_SPATIAL,      /* one layout shared by all tensors, whose batch and
                                      channel axes agree (Resize) */
  CPU_LAYOUTS_BROADCAST,           /* inputs of the output's shape in its layout, broadcast
                                      ones in any layout but other channel blocks (binary
                                      elementwise: strides follow each input's layout) */
  CPU_LAYOUTS_SPATIAL_REDUCTION,   /* any layout when the operator reduces exactly the
                                      axes after N and C (ReduceMean as global pooling) */
  CPU_LAYOUTS_UNBLOCKED,           /* plain or channels-last, per tensor (Transpose's
                                      strided copy) */
} cpu_layouts;

typedef struct cpu_kernel_entry {
  const char *op_type;
  cpu_kernel_create_fn create;
  cpu_layouts layouts;
  bool takes_activations; /* fused activations (oneDNN's post-ops take them all) */
  uint32_t blocks;        /* the channel-block sizes it takes, one bit each (oneDNN's
                             formats: CPU_ONEDNN_BLOCKS); 0: any */
} cpu_kernel_entry;

#define CPU_ONEDNN_BLOCKS (4u | 8u | 16u | 32u)

/* Each operator file exports a NULL-terminated table. */
extern const cpu_kernel_entry cpu_elementwise_kernels[];
extern const cpu_kernel_entry cpu_layout_kernels[];
extern const cpu_kernel_entry cpu_nn_kernels[];
extern const cpu_kernel_entry cpu_batch_norm_kernels[];
extern const cpu_kernel_entry cpu_dnnl_kernels[];
extern const cpu_kernel_entry cpu_pointwise_kernels[];
extern const cpu_kernel_entry cpu_deconv_patch_kernels[];
extern const cpu_kernel_entry cpu_reduce_kernels[];
extern const cpu_kernel_entry cpu_resize_kernels[];
extern const cpu_kernel_entry cpu_index_map_kernels[];
extern const cpu_kernel_entry cpu_scatter_kernels[];
extern const cpu_kernel_entry cpu_pattern_kernels[];
extern const cpu_kernel_entry cpu_sampling_kernels[];
extern const cpu_kernel_entry cpu_recurrent_kernels[];

extern const npu_hal_graph_ops npu_cpu_graph_ops;

/* The activation layout oneDNN's convolutions run fastest on here. */
npu_hal_layout cpu_dnnl_preferred_layout(const npu_hal_tensor_desc *tensor, uint32_t *block);

/* Whether oneDNN multiplies bfloat16 natively here (AVX512_BF16 or AMX): the
 * CPU's answer to NPU_PRECISION_BF16. */
bool cpu_dnnl_bf16_products(void);

/* Whether NPU_CPU_PROFILE asks for a profile (1, shapes or nodes). */
bool cpu_profiling(void);

size_t cpu_tensor_elements(const npu_hal_tensor_desc *t);


/* Rows of `width` values per parallel task: some 4096 values, so that short
 * rows do not each cost a task (1 for rows that long or longer). */
size_t cpu_rows_per_task(size_t width);
npu_status cpu_unsupported(const npu_hal_op *op, const char *why);

/* A kernel that finds its inputs invalid while it runs (values only known
 * then: ScatterND's computed indices) calls this from its run function, on
 * the thread that called it, after leaving its outputs unwritten: the
 * plan's later launches are skipped, and the stream's next synchronize
 * returns `status` with the message (prefixed with the kernel's label). The
 * first failure of a launch is the one reported. */
void cpu_kernel_fail(const npu_hal_kernel *kernel, npu_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether a reduction's axes are exactly those after N and C (global pooling). */
bool cpu_reduces_spatial_axes(const npu_hal_op *op);

/* Where channel c of spatial position p (the spatial axes flattened) of
 * batch item n lies in a tensor of rank 3 or more, in any layout:
 * n * batch + cpu_channel_offset(walk, c) + p * pixel. */
typedef struct cpu_channel_walk {
  size_t batch, pixel, plane, block; /* block: channels per block (plain: 1; channels-last: 0) */
} cpu_channel_walk;

cpu_channel_walk cpu_channel_walk_of(const npu_hal_tensor_desc *t);

static inline size_t cpu_channel_offset(const cpu_channel_walk *w, size_t c)
{
  return w->block == 0 ? c : c / w->block * w->plane + c % w->block;
}

/* Keys' cubic convolution weights w[4] of the four inputs around a point
 * `ratio` (in [0, 1)) past the second one, with coefficient a (Resize's
 * cubic_coeff_a; GridSample's bicubic: -0.75). */
void cpu_cubic_weights(double ratio, double a, double *w);

/* Row-major strides (in elements) of a tensor. */
void cpu_strides(const npu_hal_tensor_desc *t, int64_t *strides);

/* Strides of `in` read through a NumPy broadcast to `rank` axes (0 along
 * the axes it is broadcast on). */
void cpu_broadcast_strides(const npu_hal_tensor_desc *in, uint32_t rank, int64_t *strides);

#endif
