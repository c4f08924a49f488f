/* The README's application example: run a model on video with npuinfer,
 * let npudecode pick the best class, and read both the raw tensors and the
 * answer from each frame. Built and run by meson test (the model outputs
 * each colour channel's mean: on red frames, class 0 wins). */
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/npu/npu-tensor-meta.h>
#include <gst/video/video.h>

int main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  const char *model = argc > 1 ? argv[1] : "channel_mean.onnx";
  gchar *description = g_strdup_printf(
      "videotestsrc num-buffers=3 pattern=red ! video/x-raw,width=64,height=64 ! "
      "npuinfer model=%s ! npudecode method=classify ! appsink name=results", model);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  g_free(description);
  if (!pipeline)
    return 1;
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "results");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  int frames = 0, red = 0;
  GstSample *sample;
  while ((sample = gst_app_sink_pull_sample(GST_APP_SINK(sink)))) {
    GstBuffer *frame = gst_sample_get_buffer(sample);
    /* the raw outputs: one GstNpuTensorMeta per inference on the frame */
    const GstNpuTensorMeta *meta = gst_buffer_get_npu_tensor_meta(frame);
    for (guint i = 0; meta && i < meta->n_tensors; i++) {
      const GstNpuTensor *t = &meta->tensors[i];
      GstMapInfo map;
      const float *values = gst_npu_tensor_map(t, &map); /* t->dtype 1: float32 */
      if (values) {
        g_print("frame %d %s: %.3f %.3f %.3f\n", frames, t->name, values[0], values[1],
                values[2]);
        gst_npu_tensor_unmap(t, &map);
      }
    }
    /* the answer: a region of interest with a "classification" param */
    GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta(frame);
    GstStructure *answer = roi ? gst_video_region_of_interest_meta_get_param(roi, "classification")
                               : NULL;
    gint class_id = -1;
    gdouble confidence = 0;
    if (answer && gst_structure_get_int(answer, "class-id", &class_id) &&
        gst_structure_get_double(answer, "confidence", &confidence))
      g_print("frame %d: class %d (%.2f)\n", frames, class_id, confidence);
    red += class_id == 0;
    frames++;
    gst_sample_unref(sample);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return frames == 3 && red == 3 ? 0 : 1;
}
