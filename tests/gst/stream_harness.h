/* Runs frames through a pipeline of the per-stream elements (nputrack,
 * npuanalytics, npupublish) for their gst-check tests: appsrc "src<N>"
 * feeds stream N, appsink "out<N>" collects it. */
#ifndef STREAM_HARNESS_H
#define STREAM_HARNESS_H

#include <gst/gst.h>
#include <gst/video/video.h>

#define HARNESS_WIDTH 640
#define HARNESS_HEIGHT 480

/* An empty RGB frame at frame index @index (30 frames/s). */
GstBuffer *harness_frame(guint index);

/* A region of @label at x, y, w, h with a "detection" param of @score. */
void harness_add_region(GstBuffer *frame, const gchar *label, gint x, gint y, gint w, gint h,
                        gdouble score);

/* Runs `description` (its appsrc/appsink named as above; caps are set
 * here), pushing frames[s] (a GPtrArray of GstBuffer, taken) into src<s>
 * for each of @streams streams in turn, then EOS. Returns one GPtrArray of
 * output buffers per stream, or NULL with *error set to the first error
 * message. @messages (optional): a new GPtrArray of the structures of the
 * element messages posted. */
GPtrArray **harness_run(const gchar *description, guint streams, GPtrArray **frames,
                        gchar **error, GPtrArray **messages);
void harness_free_outputs(GPtrArray **outputs, guint streams);

/* The "tracking" param's object-id of a region (0: none). */
guint64 harness_object_id(GstVideoRegionOfInterestMeta *roi);

#endif
