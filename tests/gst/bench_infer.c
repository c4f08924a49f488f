/* npuinfer's multi-stream benchmark with frames from memory: each stream is
 * an appsrc pushing pre-rendered 1080p NV12 frames (rendered once, pushed as
 * shallow copies: the source costs next to nothing) into one npuinfer. It
 * prints the aggregate inferences/s in the steady state (from the moment the
 * first two batches' worth of frames have left npuinfer to the last frame
 * out, as npu-run leaves out its warm-up runs; model loading excluded) and
 * each stream's latency through npuinfer, p50 and p99 (a sink pad probe to
 * the src pad probe of the same frame).
 *   bench_infer MODEL STREAMS BATCH FRAMES_PER_STREAM [EXTRA NPUINFER PROPERTIES...] */
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WIDTH 1920
#define HEIGHT 1080
#define DISTINCT_FRAMES 8

/* Frames out of npuinfer, all streams together: the steady-state clock. */
typedef struct {
  GMutex lock;
  guint warmup, left;
  gint64 warm, last; /* monotonic us when frame `warmup` and the last frame left */
  gint64 warm_cpu, last_cpu; /* the process's CPU time (us) then: cores busy in the steady state */
} Output;

typedef struct {
  Output *output;
  GstElement *src;
  guint frames;
  GstBuffer **rendered;
  gint64 *entered; /* monotonic us per frame number, at npuinfer's sink pad */
  GArray *latencies; /* gint64 us */
  GMutex lock;
} Stream;

/* A frame of moving stripes, so that frames differ. */
static GstBuffer *render_frame(guint n)
{
  gsize luma = (gsize)WIDTH * HEIGHT;
  GstBuffer *buffer = gst_buffer_new_allocate(NULL, luma * 3 / 2, NULL);
  GstMapInfo map;
  gst_buffer_map(buffer, &map, GST_MAP_WRITE);
  for (guint y = 0; y < HEIGHT; y++)
    for (guint x = 0; x < WIDTH; x++)
      map.data[(gsize)y * WIDTH + x] = (guint8)((x + y + 37 * n) & 0xff);
  memset(map.data + luma, (int)(96 + 8 * n), luma / 2);
  gst_buffer_unmap(buffer, &map);
  return buffer;
}

static guint frame_number(GstBuffer *buffer)
{
  return (guint)(GST_BUFFER_PTS(buffer) / (GST_SECOND / 30));
}

static GstPadProbeReturn entered(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  Stream *stream = data;
  guint f = frame_number(GST_PAD_PROBE_INFO_BUFFER(info));
  if (f < stream->frames)
    stream->entered[f] = g_get_monotonic_time();
  return GST_PAD_PROBE_OK;
}

static gint64 process_cpu_us(void)
{
  struct timespec used;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
  return (gint64)used.tv_sec * 1000000 + used.tv_nsec / 1000;
}

static GstPadProbeReturn left(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  Stream *stream = data;
  guint f = frame_number(GST_PAD_PROBE_INFO_BUFFER(info));
  if (f < stream->frames) {
    gint64 latency = g_get_monotonic_time() - stream->entered[f];
    g_mutex_lock(&stream->lock);
    g_array_append_val(stream->latencies, latency);
    g_mutex_unlock(&stream->lock);
  }
  Output *output = stream->output;
  g_mutex_lock(&output->lock);
  output->last = g_get_monotonic_time();
  output->last_cpu = process_cpu_us();
  if (++output->left == output->warmup) {
    output->warm = output->last;
    output->warm_cpu = output->last_cpu;
  }
  g_mutex_unlock(&output->lock);
  return GST_PAD_PROBE_OK;
}

static gpointer push_frames(gpointer data)
{
  Stream *stream = data;
  for (guint f = 0; f < stream->frames; f++) {
    GstBuffer *frame = gst_buffer_copy(stream->rendered[f % DISTINCT_FRAMES]); /* shallow */
    GST_BUFFER_PTS(frame) = f * (GST_SECOND / 30);
    GST_BUFFER_DURATION(frame) = GST_SECOND / 30;
    if (gst_app_src_push_buffer(GST_APP_SRC(stream->src), frame) != GST_FLOW_OK)
      break;
  }
  gst_app_src_end_of_stream(GST_APP_SRC(stream->src));
  return NULL;
}

static gint compare_latency(gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return x < y ? -1 : x > y;
}

static double percentile_ms(GArray *sorted, double p)
{
  if (sorted->len == 0)
    return 0;
  guint i = (guint)(p * (sorted->len - 1) + 0.5);
  return g_array_index(sorted, gint64, i) / 1000.0;
}

int main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  if (argc < 5) {
    fprintf(stderr, "usage: %s MODEL STREAMS BATCH FRAMES_PER_STREAM [PROPERTY=VALUE...]\n",
            argv[0]);
    return 2;
  }
  guint streams = (guint)atoi(argv[2]), batch = (guint)atoi(argv[3]);
  guint frames = (guint)atoi(argv[4]);
  GString *description = g_string_new(NULL);
  g_string_printf(description, "npuinfer name=infer model=%s batch-size=%u batch-timeout=50000",
                  argv[1], batch);
  for (int i = 5; i < argc; i++)
    g_string_append_printf(description, " %s", argv[i]);
  for (guint s = 0; s < streams; s++)
    g_string_append_printf(description,
                           " appsrc name=a%u format=time block=true max-buffers=4 "
                           "caps=video/x-raw,format=NV12,width=%d,height=%d,framerate=30/1 ! "
                           "infer.sink_%u infer.src_%u ! fakesink sync=false async=false",
                           s, WIDTH, HEIGHT, s, s);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description->str, &error);
  g_string_free(description, TRUE);
  if (!pipeline) {
    fprintf(stderr, "bench_infer: %s\n", error->message);
    return 1;
  }
  GstBuffer *rendered[DISTINCT_FRAMES];
  for (guint n = 0; n < DISTINCT_FRAMES; n++)
    rendered[n] = render_frame(n);
  GstElement *infer = gst_bin_get_by_name(GST_BIN(pipeline), "infer");
  Stream *all = g_new0(Stream, streams);
  Output output = {.warmup = 2 * batch};
  g_mutex_init(&output.lock);
  for (guint s = 0; s < streams; s++) {
    Stream *stream = &all[s];
    stream->output = &output;
    gchar *name = g_strdup_printf("a%u", s);
    stream->src = gst_bin_get_by_name(GST_BIN(pipeline), name);
    g_free(name);
    stream->frames = frames;
    stream->rendered = rendered;
    stream->entered = g_new0(gint64, frames);
    stream->latencies = g_array_new(FALSE, FALSE, sizeof(gint64));
    g_mutex_init(&stream->lock);
    name = g_strdup_printf("sink_%u", s);
    GstPad *sink = gst_element_get_static_pad(infer, name);
    g_free(name);
    name = g_strdup_printf("src_%u", s);
    GstPad *src = gst_element_get_static_pad(infer, name);
    g_free(name);
    gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, entered, stream, NULL);
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, left, stream, NULL);
    gst_object_unref(sink);
    gst_object_unref(src);
  }
  /* the model is loaded and planned before the clock starts */
  if (gst_element_set_state(pipeline, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE) {
    fprintf(stderr, "bench_infer: the pipeline does not start\n");
    return 1;
  }
  gst_element_get_state(pipeline, NULL, NULL, GST_CLOCK_TIME_NONE);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GThread **pushers = g_new(GThread *, streams);
  for (guint s = 0; s < streams; s++)
    pushers[s] = g_thread_new("pusher", push_frames, &all[s]);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, GST_CLOCK_TIME_NONE,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  int rc = GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS ? 0 : 1;
  if (rc) {
    GError *err;
    gst_message_parse_error(msg, &err, NULL);
    fprintf(stderr, "bench_infer: %s\n", err->message);
    g_error_free(err);
  }
  gst_message_unref(msg);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  for (guint s = 0; s < streams; s++)
    g_thread_join(pushers[s]);
  if (rc == 0 && output.left > output.warmup && output.last > output.warm)
    printf("inferences/s %.1f\ncores busy %.2f\n",
           (output.left - output.warmup) / ((output.last - output.warm) / 1e6),
           (double)(output.last_cpu - output.warm_cpu) / (double)(output.last - output.warm));
  else if (rc == 0)
    fprintf(stderr, "bench_infer: too few frames for a steady state (%u out)\n", output.left);
  for (guint s = 0; s < streams; s++) {
    Stream *stream = &all[s];
    g_array_sort(stream->latencies, compare_latency);
    printf("stream %u latency ms p50 %.1f p99 %.1f (%u frames)\n", s,
           percentile_ms(stream->latencies, 0.5), percentile_ms(stream->latencies, 0.99),
           stream->latencies->len);
    g_array_unref(stream->latencies);
    g_free(stream->entered);
    g_mutex_clear(&stream->lock);
    gst_object_unref(stream->src);
  }
  for (guint n = 0; n < DISTINCT_FRAMES; n++)
    gst_buffer_unref(rendered[n]);
  g_free(pushers);
  g_free(all);
  g_mutex_clear(&output.lock);
  gst_object_unref(bus);
  gst_object_unref(infer);
  gst_object_unref(pipeline);
  return rc;
}
