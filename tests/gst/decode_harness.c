/* What npudecode's tests share: frames carrying hand-made tensors, label
 * files, and one frame through a pipeline. */
#include "decode_harness.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#include <unistd.h>

void set_tensor(GstNpuTensor *t, const gchar *name, gint dtype, gconstpointer values, gsize size,
                guint rank, const gint64 *dims)
{
  t->name = g_strdup(name);
  t->dtype = dtype;
  t->rank = rank;
  memcpy(t->dims, dims, rank * sizeof *dims);
  t->data = gst_buffer_new_memdup(values, size);
  t->offset = 0;
  t->size = size;
}

GstBuffer *frame_with_tensor(const float *values, gsize count, guint rank, const gint64 *dims)
{
  GstBuffer *frame = gst_buffer_new_allocate(NULL, FRAME * FRAME * 3, NULL);
  gst_buffer_memset(frame, 0, 0, FRAME * FRAME * 3);
  if (!values)
    return frame;
  GstNpuTensorMeta *meta = gst_buffer_add_npu_tensor_meta(frame, 1);
  set_tensor(&meta->tensors[0], "out", 1, values, count * sizeof(float), rank, dims);
  return frame;
}

gchar *write_labels(const gchar *text)
{
  gchar *path = NULL;
  gint fd = g_file_open_tmp("npudecode-labels-XXXXXX", &path, NULL);
  fail_unless(fd >= 0);
  close(fd);
  fail_unless(g_file_set_contents(path, text, -1, NULL));
  return path;
}

GstBuffer *decode(const gchar *options, GstBuffer *frame, gchar **error)
{
  gchar *description = g_strdup_printf(
      "appsrc name=src format=time caps=video/x-raw,format=RGB,width=%d,height=%d,"
      "framerate=30/1 ! npudecode %s ! appsink name=sink sync=false wait-on-eos=false",
      FRAME, FRAME, options);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL);
  g_free(description);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  gst_app_src_push_buffer(GST_APP_SRC(src), frame);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg != NULL, "timed out");
  GstBuffer *out = NULL;
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError *err;
    gst_message_parse_error(msg, &err, NULL);
    *error = g_strdup(err->message);
    g_error_free(err);
  } else {
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), GST_SECOND);
    fail_unless(sample != NULL);
    out = gst_buffer_ref(gst_sample_get_buffer(sample));
    gst_sample_unref(sample);
  }
  gst_message_unref(msg);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return out;
}

guint count_rois(GstBuffer *buffer)
{
  guint n = 0;
  gpointer state = NULL;
  while (gst_buffer_iterate_meta_filtered(buffer, &state,
                                          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    n++;
  return n;
}

