/* The custom parser ABI of `npudecode method=custom parser=libparser.so`:
 * a shared library that turns a frame's tensors into regions, written in
 * plain C against this header alone (no GStreamer or GLib needed).
 *
 * The library exports one function, GST_NPU_DECODER_ENTRY_POINT:
 *
 *   #include <gst/npu/npu-decoder.h>
 *
 *   static int parse(void *state, const GstNpuDecoderFrame *frame,
 *                    const GstNpuDecoderOutput *out, char *error, size_t error_size)
 *   {
 *     const GstNpuDecoderTensor *t = &frame->tensors[0];
 *     ... read t->data (t->size bytes, t->dtype, t->dims) ...
 *     int region = out->add_region(out, "detection", "car", 2, 0.9, x, y, w, h);
 *     out->set_double(out, region, "speed", 12.5);
 *     return 0;
 *   }
 *
 *   const GstNpuDecoderInfo *gst_npu_decoder_get_info(void)
 *   {
 *     static const GstNpuDecoderInfo info = {GST_NPU_DECODER_ABI_VERSION, "my-parser",
 *                                            NULL, NULL, parse};
 *     return &info;
 *   }
 *
 * npudecode loads the library when it starts (a missing file, a missing
 * entry point or another ABI version is an element error), calls create()
 * with the `parser-options` string, parse() once per tensor meta it reads
 * (the streaming thread: one call at a time per element), and destroy() when
 * it stops. A nonzero return from create() or parse() is an element error
 * with the message the function wrote into `error`.
 *
 * Versioning: GST_NPU_DECODER_ABI_VERSION changes whenever a struct below
 * changes; npudecode refuses a library built against another version. */
#ifndef GST_NPU_DECODER_H
#define GST_NPU_DECODER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GST_NPU_DECODER_ABI_VERSION 1u
#define GST_NPU_DECODER_ENTRY_POINT "gst_npu_decoder_get_info"

/* One output tensor of the model for this frame (batch axis 1), in host
 * memory, valid during the parse() call only. */
typedef struct GstNpuDecoderTensor {
  const char *name;     /* the model output's name */
  int dtype;            /* ONNX TensorProto.DataType: 1 float32, 2 uint8, 6 int32, 7 int64 */
  unsigned rank;
  const int64_t *dims;  /* rank values */
  const void *data;     /* row-major values */
  size_t size;          /* bytes */
} GstNpuDecoderTensor;

/* The tensors of one inference and where they sit in the frame. */
typedef struct GstNpuDecoderFrame {
  const GstNpuDecoderTensor *tensors;
  unsigned n_tensors;
  unsigned width, height; /* the video frame, pixels */
  /* How frame pixels map into the model input: input = frame * scale +
   * offset (npuinfer's letterbox). scale_x 0: not recorded; the model
   * input was then stretched over the whole frame. */
  float scale_x, scale_y, offset_x, offset_y;
  int roi_id;       /* the region npuinfer ran on (roi mode), -1: the whole frame */
  int64_t pts;      /* nanoseconds, -1 when unknown */
} GstNpuDecoderFrame;

/* How parse() reports results: call the members with `out` itself. */
typedef struct GstNpuDecoderOutput GstNpuDecoderOutput;
struct GstNpuDecoderOutput {
  void *context; /* npudecode's; not for the parser */
  /* Adds a region (a GstVideoRegionOfInterestMeta named `label`) in frame
   * pixels, with a param structure named `param` ("detection" when NULL)
   * holding label, class-id and confidence. Returns the region's index for
   * the setters below, or -1 (NULL label). */
  int (*add_region)(const GstNpuDecoderOutput *out, const char *param, const char *label,
                    int class_id, double confidence, double x, double y, double w, double h);
  /* Extra fields on a region's param; 0, or -1 for an unknown region or a
   * NULL field name. set_doubles writes an array of `count` numbers. */
  int (*set_int)(const GstNpuDecoderOutput *out, int region, const char *field, int value);
  int (*set_double)(const GstNpuDecoderOutput *out, int region, const char *field,
                    double value);
  int (*set_string)(const GstNpuDecoderOutput *out, int region, const char *field,
                    const char *value);
  int (*set_doubles)(const GstNpuDecoderOutput *out, int region, const char *field,
                     const double *values, size_t count);
};

typedef struct GstNpuDecoderInfo {
  uint32_t abi_version; /* GST_NPU_DECODER_ABI_VERSION */
  const char *name;     /* for messages */
  /* Optional: the parser's state from the `parser-options` string (NULL
   * when unset). Returns 0 and sets *state, or nonzero with a message. */
  int (*create)(const char *options, void **state, char *error, size_t error_size);
  /* Optional: frees what create() made. */
  void (*destroy)(void *state);
  /* Required: one inference's tensors into regions. 0, or nonzero with a
   * message (the pipeline stops with an element error). */
  int (*parse)(void *state, const GstNpuDecoderFrame *frame, const GstNpuDecoderOutput *out,
               char *error, size_t error_size);
} GstNpuDecoderInfo;

typedef const GstNpuDecoderInfo *(*GstNpuDecoderGetInfo)(void);

#ifdef __cplusplus
}
#endif
#endif
