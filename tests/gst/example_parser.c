/* An example npudecode parser (gst/npu/npu-decoder.h), plain C without
 * GStreamer: a model output "boxes" of rows x0, y0, x1, y1 (model-input
 * pixels), score, class becomes one region per row whose score reaches the
 * threshold, labelled "blob", with two extra fields: "area" (frame pixels)
 * and "corner" (x0, y0 as an array).
 *
 *   npudecode method=custom parser=libnpu_example_parser.so parser-options=threshold=0.5
 *
 * Options: "threshold=<0..1>" (0.5 when unset). Boxes map to the frame
 * through npuinfer's letterbox; when none is recorded the model input is
 * taken to be the frame. Built a second time with EXAMPLE_PARSER_ABI set to
 * another version, for npudecode's refusal of it. */
#include <gst/npu/npu-decoder.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EXAMPLE_PARSER_ABI
#define EXAMPLE_PARSER_ABI GST_NPU_DECODER_ABI_VERSION
#endif

typedef struct {
  double threshold;
} Options;

static int create(const char *options, void **state, char *error, size_t error_size)
{
  double threshold = 0.5;
  if (options && strncmp(options, "threshold=", 10) == 0) {
    char *end;
    threshold = strtod(options + 10, &end);
    if (*end || !(threshold >= 0 && threshold <= 1)) {
      snprintf(error, error_size, "threshold '%s' is not a number 0..1", options + 10);
      return 1;
    }
  } else if (options) {
    snprintf(error, error_size, "unknown option '%s' (only threshold=<0..1>)", options);
    return 1;
  }
  Options *parsed = malloc(sizeof *parsed);
  if (!parsed) {
    snprintf(error, error_size, "out of memory");
    return 1;
  }
  parsed->threshold = threshold;
  *state = parsed;
  return 0;
}

static void destroy(void *state)
{
  free(state);
}

/* Model-input pixels back to the frame. */
static double to_frame(double input, float scale, float offset)
{
  return scale > 0 ? (input - offset) / scale : input;
}

static int parse(void *state, const GstNpuDecoderFrame *frame, const GstNpuDecoderOutput *out,
                 char *error, size_t error_size)
{
  const Options *options = state;
  const GstNpuDecoderTensor *boxes = NULL;
  for (unsigned i = 0; i < frame->n_tensors; i++)
    if (strcmp(frame->tensors[i].name, "boxes") == 0)
      boxes = &frame->tensors[i];
  if (!boxes || boxes->dtype != 1 || boxes->rank < 2 || boxes->dims[boxes->rank - 1] != 6) {
    snprintf(error, error_size, "needs a float32 output 'boxes' of rows of 6 values");
    return 1;
  }
  const float *row = boxes->data;
  for (size_t r = 0; r < boxes->size / (6 * sizeof(float)); r++, row += 6) {
    if (row[4] < options->threshold)
      continue;
    double x0 = to_frame(row[0], frame->scale_x, frame->offset_x);
    double y0 = to_frame(row[1], frame->scale_y, frame->offset_y);
    double x1 = to_frame(row[2], frame->scale_x, frame->offset_x);
    double y1 = to_frame(row[3], frame->scale_y, frame->offset_y);
    int region = out->add_region(out, NULL, "blob", (int)row[5], row[4], x0, y0, x1 - x0, y1 - y0);
    const double corner[2] = {x0, y0};
    if (region < 0 || out->set_double(out, region, "area", (x1 - x0) * (y1 - y0)) != 0 ||
        out->set_doubles(out, region, "corner", corner, 2) != 0) {
      snprintf(error, error_size, "npudecode refused region %zu", r);
      return 1;
    }
  }
  return 0;
}

const GstNpuDecoderInfo *gst_npu_decoder_get_info(void);

const GstNpuDecoderInfo *gst_npu_decoder_get_info(void)
{
  static const GstNpuDecoderInfo info = {EXAMPLE_PARSER_ABI, "example", create, destroy, parse};
  return &info;
}
