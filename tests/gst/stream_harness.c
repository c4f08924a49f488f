#include "stream_harness.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

GstBuffer *harness_frame(guint index)
{
  GstBuffer *frame = gst_buffer_new_allocate(NULL, HARNESS_WIDTH * HARNESS_HEIGHT * 3, NULL);
  GST_BUFFER_PTS(frame) = gst_util_uint64_scale(index, GST_SECOND, 30);
  GST_BUFFER_DURATION(frame) = GST_SECOND / 30;
  return frame;
}

void harness_add_region(GstBuffer *frame, const gchar *label, gint x, gint y, gint w, gint h,
                        gdouble score)
{
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_add_video_region_of_interest_meta(frame, label, x, y, w, h);
  gst_video_region_of_interest_meta_add_param(
      roi, gst_structure_new("detection", "label", G_TYPE_STRING, label, "confidence",
                             G_TYPE_DOUBLE, score, NULL));
}

guint64 harness_object_id(GstVideoRegionOfInterestMeta *roi)
{
  GstStructure *tracking = gst_video_region_of_interest_meta_get_param(roi, "tracking");
  guint64 id = 0;
  if (tracking)
    fail_unless(gst_structure_get_uint64(tracking, "object-id", &id));
  return id;
}

static GstBusSyncReply keep_element_message(GstBus *bus, GstMessage *message, gpointer data)
{
  (void)bus;
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ELEMENT)
    g_ptr_array_add(data, gst_structure_copy(gst_message_get_structure(message)));
  return GST_BUS_PASS;
}

GPtrArray **harness_run(const gchar *description, guint streams, GPtrArray **frames,
                        gchar **error, GPtrArray **messages)
{
  GError *parse_error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &parse_error);
  fail_unless(pipeline != NULL, "%s", parse_error ? parse_error->message : description);
  GstCaps *caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGB", "width",
                                      G_TYPE_INT, HARNESS_WIDTH, "height", G_TYPE_INT,
                                      HARNESS_HEIGHT, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
  GstElement **sources = g_new0(GstElement *, streams), **sinks = g_new0(GstElement *, streams);
  for (guint s = 0; s < streams; s++) {
    gchar *name = g_strdup_printf("src%u", s);
    sources[s] = gst_bin_get_by_name(GST_BIN(pipeline), name);
    g_free(name);
    name = g_strdup_printf("out%u", s);
    sinks[s] = gst_bin_get_by_name(GST_BIN(pipeline), name);
    g_free(name);
    fail_unless(sources[s] && sinks[s]);
    g_object_set(sources[s], "caps", caps, "format", GST_FORMAT_TIME, NULL);
    /* all frames are pulled after EOS */
    g_object_set(sinks[s], "sync", FALSE, "wait-on-eos", FALSE, NULL);
  }
  gst_caps_unref(caps);
  GstBus *bus = gst_element_get_bus(pipeline);
  if (messages) {
    *messages = g_ptr_array_new_with_free_func((GDestroyNotify)gst_structure_free);
    gst_bus_set_sync_handler(bus, keep_element_message, *messages, NULL);
  }
  GstMessage *msg = NULL;
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE) {
    for (guint s = 0; s < streams; s++) {
      for (guint i = 0; i < frames[s]->len; i++)
        gst_app_src_push_buffer(GST_APP_SRC(sources[s]), gst_buffer_ref(frames[s]->pdata[i]));
      gst_app_src_end_of_stream(GST_APP_SRC(sources[s]));
    }
    msg = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless(msg != NULL, "no EOS nor error");
  } else {
    msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(msg != NULL, "the pipeline did not start and said nothing");
  }
  GPtrArray **outputs = NULL;
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError *err;
    gst_message_parse_error(msg, &err, NULL);
    *error = g_strdup(err->message);
    g_error_free(err);
  } else {
    outputs = g_new0(GPtrArray *, streams);
    for (guint s = 0; s < streams; s++) {
      outputs[s] = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
      GstSample *sample;
      while ((sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sinks[s]), 0))) {
        g_ptr_array_add(outputs[s], gst_buffer_ref(gst_sample_get_buffer(sample)));
        gst_sample_unref(sample);
      }
    }
  }
  gst_message_unref(msg);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
  gst_object_unref(bus);
  for (guint s = 0; s < streams; s++) {
    gst_object_unref(sources[s]);
    gst_object_unref(sinks[s]);
    g_ptr_array_unref(frames[s]);
  }
  g_free(sources);
  g_free(sinks);
  gst_object_unref(pipeline);
  return outputs;
}

void harness_free_outputs(GPtrArray **outputs, guint streams)
{
  if (!outputs)
    return;
  for (guint s = 0; s < streams; s++)
    if (outputs[s])
      g_ptr_array_unref(outputs[s]);
  g_free(outputs);
}
