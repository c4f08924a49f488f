/* npuinfer's batcher without GStreamer: batches across lanes in arrival
 * order, each lane's output in its own order (events too), the interval,
 * the reclassify interval of tracked objects (their last result handed on),
 * same-size batches, max-inflight, back-pressure, flushing and errors. */
#include <glib.h>

#include "gstnpubatcher.h"

/* A frame: its lane and number. */
typedef struct {
  guint lane, number;
} Frame;

typedef struct {
  GstNpuBatchJob base;
  guint size; /* the input size it wants, for same_size */
} Job;

static guint frames_freed, results_reused;
static gpointer last_reused;

static void free_frame(gpointer data)
{
  frames_freed++;
  g_free(data);
}

static void size_of(GstNpuBatchJob *base, gpointer data)
{
  (void)data;
  base->width = base->height = ((Job *)base)->size;
}

static void reuse(gpointer frame, GstNpuBatchJob *job, gconstpointer result, gpointer data)
{
  (void)frame;
  (void)job;
  (void)data;
  results_reused++;
  last_reused = (gpointer)result;
}

static GstNpuBatcher *new_batcher(guint batch_size, guint max_inflight)
{
  frames_freed = results_reused = 0;
  last_reused = NULL;
  GstNpuBatcherFuncs funcs = {.free_data = free_frame, .free_job = g_free, .size_of = size_of,
                              .reuse_result = reuse, .free_result = g_free};
  GstNpuBatcher *batcher = gst_npu_batcher_new(&funcs);
  GstNpuBatchPolicy policy = {.batch_size = batch_size, .max_inflight = max_inflight,
                              .interval = 1, .reclassify_interval = 1};
  gst_npu_batcher_set_policy(batcher, &policy);
  return batcher;
}

static GstNpuBatchLane *open_lane(GstNpuBatcher *batcher, guint index)
{
  GstNpuBatchLane *lane = gst_npu_batcher_add_lane(batcher, index);
  gst_npu_batcher_set_input_flushing(batcher, lane, FALSE);
  gst_npu_batcher_set_output_flushing(batcher, lane, FALSE);
  return lane;
}

/* Pushes frame `number` of `lane` with a job per entry of `objects` (-1:
 * untracked; objects == NULL: one untracked job); returns whether a job
 * was queued. */
static gboolean push(GstNpuBatcher *batcher, GstNpuBatchLane *lane, guint number,
                     const gint64 *objects, guint n_objects, guint size)
{
  Frame *frame = g_new0(Frame, 1);
  frame->lane = gst_npu_batch_lane_index(lane);
  frame->number = number;
  GPtrArray *jobs = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < (objects ? n_objects : 1); i++) {
    Job *job = g_new0(Job, 1);
    job->base.object_id = objects ? objects[i] : -1;
    job->size = size;
    g_ptr_array_add(jobs, job);
  }
  gboolean inferred = FALSE;
  gint code = 0;
  g_assert_cmpint(gst_npu_batcher_push_frame(batcher, lane, frame, jobs, FALSE, &inferred, &code),
                  ==, GST_NPU_BATCH_QUEUED);
  g_ptr_array_unref(jobs);
  return inferred;
}

/* Pops the lane's next entry: a frame that must be `number`. */
static void expect_frame(GstNpuBatcher *batcher, GstNpuBatchLane *lane, guint number)
{
  gboolean is_frame = FALSE;
  Frame *frame = gst_npu_batcher_pop(batcher, lane, &is_frame);
  g_assert_nonnull(frame);
  g_assert_true(is_frame);
  g_assert_cmpuint(frame->lane, ==, gst_npu_batch_lane_index(lane));
  g_assert_cmpuint(frame->number, ==, number);
  g_free(frame);
}

static guint frame_number(GstNpuBatchJob *job)
{
  return ((Frame *)job->entry->data)->number;
}

static void test_batches_across_lanes(void)
{
  GstNpuBatcher *batcher = new_batcher(4, 2);
  GstNpuBatchLane *a = open_lane(batcher, 0), *b = open_lane(batcher, 1);
  for (guint f = 0; f < 4; f++) {
    g_assert_true(push(batcher, a, f, NULL, 0, 0));
    g_assert_true(push(batcher, b, f, NULL, 0, 0));
  }
  GstNpuBatchJob *first[4], *second[4];
  g_assert_cmpuint(gst_npu_batcher_take(batcher, first), ==, 4);
  g_assert_cmpuint(gst_npu_batcher_take(batcher, second), ==, 4);
  /* arrival order: a0 b0 a1 b1 | a2 b2 a3 b3 */
  for (guint i = 0; i < 4; i++) {
    g_assert_cmpuint(frame_number(first[i]), ==, i / 2);
    g_assert_cmpuint(frame_number(second[i]), ==, 2 + i / 2);
    g_assert_true(first[i]->entry->lane == (i % 2 ? b : a));
  }
  /* the second batch completes first: frames still leave in order */
  gst_npu_batcher_complete(batcher, second, 4, TRUE);
  gst_npu_batcher_complete(batcher, first, 4, TRUE);
  for (guint f = 0; f < 4; f++) {
    expect_frame(batcher, a, f);
    expect_frame(batcher, b, f);
  }
  guint64 batches, jobs;
  gst_npu_batcher_totals(batcher, &batches, &jobs);
  g_assert_cmpuint(batches, ==, 2);
  g_assert_cmpuint(jobs, ==, 8);
  GstNpuBatchLaneStats stats;
  gst_npu_batcher_lane_stats(batcher, a, &stats);
  g_assert_cmpuint(stats.frames, ==, 4);
  g_assert_cmpuint(stats.inferences, ==, 4);
  gst_npu_batcher_free(batcher);
}

static void test_timeout_takes_what_waits(void)
{
  GstNpuBatcher *batcher = new_batcher(4, 1);
  GstNpuBatchLane *lane = open_lane(batcher, 0);
  push(batcher, lane, 0, NULL, 0, 0);
  GstNpuBatchPolicy policy;
  gst_npu_batcher_get_policy(batcher, &policy);
  policy.timeout_us = 1000; /* the batch cannot fill: it goes when the job has waited */
  gst_npu_batcher_set_policy(batcher, &policy);
  GstNpuBatchJob *batch[4];
  g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 1);
  gst_npu_batcher_complete(batcher, batch, 1, FALSE);
  expect_frame(batcher, lane, 0);
  GstNpuBatchLaneStats stats;
  gst_npu_batcher_lane_stats(batcher, lane, &stats);
  g_assert_cmpuint(stats.inferences, ==, 0); /* completed without results */
  gst_npu_batcher_free(batcher);
}

/* A draining lane (it ended, or waits for a query's answer) does not wait
 * for the batch to fill (no timeout here: it would wait for ever); a new
 * frame of it ends the draining. */
static void test_draining_lane_runs_the_partial_batch(void)
{
  GstNpuBatcher *batcher = new_batcher(4, 2);
  GstNpuBatchLane *a = open_lane(batcher, 0), *b = open_lane(batcher, 1);
  push(batcher, a, 0, NULL, 0, 0);
  push(batcher, b, 0, NULL, 0, 0);
  gst_npu_batcher_drain_lane(batcher, b);
  GstNpuBatchJob *batch[4];
  g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 2);
  gst_npu_batcher_complete(batcher, batch, 2, TRUE);
  expect_frame(batcher, a, 0);
  expect_frame(batcher, b, 0);
  /* b pushes again: batches wait to fill once more, until a drains */
  push(batcher, b, 1, NULL, 0, 0);
  push(batcher, a, 1, NULL, 0, 0);
  GstNpuBatchPolicy policy;
  gst_npu_batcher_get_policy(batcher, &policy);
  policy.timeout_us = 200000;
  gst_npu_batcher_set_policy(batcher, &policy);
  gint64 started = g_get_monotonic_time();
  g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 2);
  g_assert_cmpint(g_get_monotonic_time() - started, >=, 150000); /* it waited */
  gst_npu_batcher_complete(batcher, batch, 2, TRUE);
  expect_frame(batcher, a, 1);
  expect_frame(batcher, b, 1);
  gst_npu_batcher_free(batcher);
}

typedef struct {
  GstNpuBatcher *batcher;
  GstNpuBatchLane *lane;
  gint returned; /* atomic */
} Drainer;

static gpointer wait_drained(gpointer data)
{
  Drainer *drainer = data;
  gst_npu_batcher_wait_lane_drained(drainer->batcher, drainer->lane);
  g_atomic_int_set(&drainer->returned, 1);
  return NULL;
}

static gpointer pop_next(gpointer data)
{
  Drainer *drainer = data;
  gboolean is_frame;
  g_assert_null(gst_npu_batcher_pop(drainer->batcher, drainer->lane, &is_frame));
  return NULL;
}

/* A lane is drained once its last entry has been sent on, not when it has
 * been popped: a serialized query that went downstream meanwhile would race
 * that frame's push (npuinfer's drain query once waited for a frame stuck
 * behind it). The output side says "sent" by popping again. */
static void test_drained_after_the_last_entry_is_sent(void)
{
  GstNpuBatcher *batcher = new_batcher(4, 1);
  GstNpuBatchLane *lane = open_lane(batcher, 0);
  push(batcher, lane, 0, NULL, 0, 0);
  gst_npu_batcher_drain_lane(batcher, lane);
  GstNpuBatchJob *batch[4];
  g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 1);
  gst_npu_batcher_complete(batcher, batch, 1, TRUE);
  expect_frame(batcher, lane, 0); /* popped, being sent on */
  Drainer drainer = {batcher, lane, 0};
  GThread *waiter = g_thread_new("drain", wait_drained, &drainer);
  g_usleep(50000);
  g_assert_cmpint(g_atomic_int_get(&drainer.returned), ==, 0);
  GThread *output = g_thread_new("output", pop_next, &drainer); /* frame 0 was sent */
  g_thread_join(waiter);
  g_assert_cmpint(g_atomic_int_get(&drainer.returned), ==, 1);
  gst_npu_batcher_set_output_flushing(batcher, lane, TRUE); /* ends the output's pop */
  g_thread_join(output);
  gst_npu_batcher_free(batcher);
}

static void test_interval_and_events(void)
{
  GstNpuBatcher *batcher = new_batcher(1, 8);
  GstNpuBatchPolicy policy;
  gst_npu_batcher_get_policy(batcher, &policy);
  policy.interval = 3;
  gst_npu_batcher_set_policy(batcher, &policy);
  GstNpuBatchLane *lane = open_lane(batcher, 0);
  for (guint f = 0; f < 7; f++)
    g_assert_cmpint(push(batcher, lane, f, NULL, 0, 0), ==, f % 3 == 0);
  Frame *event = g_new0(Frame, 1);
  event->number = 100;
  g_assert_true(gst_npu_batcher_push_event(batcher, lane, event));
  /* frames 0, 3, 6 wait for inference: 0 holds back everything after it */
  GstNpuBatchJob *batch[1];
  for (guint i = 0; i < 3; i++) {
    g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 1);
    g_assert_cmpuint(frame_number(batch[0]), ==, 3 * i);
    gst_npu_batcher_complete(batcher, batch, 1, TRUE);
  }
  for (guint f = 0; f < 7; f++)
    expect_frame(batcher, lane, f);
  gboolean is_frame = TRUE;
  Frame *out = gst_npu_batcher_pop(batcher, lane, &is_frame);
  g_assert_false(is_frame);
  g_assert_cmpuint(out->number, ==, 100);
  g_free(out);
  gst_npu_batcher_free(batcher);
}

static void test_tracked_objects_reclassified(void)
{
  GstNpuBatcher *batcher = new_batcher(8, 8);
  GstNpuBatchPolicy policy;
  gst_npu_batcher_get_policy(batcher, &policy);
  policy.reclassify_interval = 3;
  gst_npu_batcher_set_policy(batcher, &policy);
  GstNpuBatchLane *lane = open_lane(batcher, 0);
  const gint64 objects[] = {7, -1};
  GstNpuBatchJob *batch[8];
  /* frame 0: object 7 and an untracked ROI are inferred */
  push(batcher, lane, 0, objects, 2, 0);
  g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 2);
  gint *result = g_new(gint, 1);
  *result = 42;
  gst_npu_batcher_remember(batcher, lane, 7, result);
  gst_npu_batcher_complete(batcher, batch, 2, TRUE);
  /* frames 1 and 2: only the untracked one; object 7 gets its last result */
  for (guint f = 1; f <= 2; f++) {
    push(batcher, lane, f, objects, 2, 0);
    g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 1);
    g_assert_cmpint(batch[0]->object_id, ==, -1);
    gst_npu_batcher_complete(batcher, batch, 1, TRUE);
  }
  g_assert_cmpuint(results_reused, ==, 2);
  g_assert_true(last_reused == result);
  /* frame 3: object 7 again */
  push(batcher, lane, 3, objects, 2, 0);
  g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 2);
  gst_npu_batcher_complete(batcher, batch, 2, TRUE);
  /* gone for three frames, object 7 is forgotten and inferred on return */
  for (guint f = 4; f <= 6; f++)
    g_assert_true(push(batcher, lane, f, NULL, 0, 0));
  g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 3);
  gst_npu_batcher_complete(batcher, batch, 3, TRUE);
  push(batcher, lane, 7, objects, 1, 0);
  g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 1);
  g_assert_cmpint(batch[0]->object_id, ==, 7);
  gst_npu_batcher_complete(batcher, batch, 1, TRUE);
  GstNpuBatchLaneStats stats;
  gst_npu_batcher_lane_stats(batcher, lane, &stats);
  g_assert_cmpuint(stats.skipped_tracked, ==, 2);
  for (guint f = 0; f <= 7; f++)
    expect_frame(batcher, lane, f);
  gst_npu_batcher_free(batcher);
}

static void test_same_size_batches(void)
{
  GstNpuBatcher *batcher = new_batcher(4, 2);
  GstNpuBatchPolicy policy;
  gst_npu_batcher_get_policy(batcher, &policy);
  policy.same_size = TRUE;
  gst_npu_batcher_set_policy(batcher, &policy);
  GstNpuBatchLane *lane = open_lane(batcher, 0);
  const guint sizes[] = {64, 128, 64, 128};
  for (guint f = 0; f < 4; f++)
    push(batcher, lane, f, NULL, 0, sizes[f]);
  GstNpuBatchJob *first[4], *second[4];
  g_assert_cmpuint(gst_npu_batcher_take(batcher, first), ==, 2);
  g_assert_cmpuint(gst_npu_batcher_take(batcher, second), ==, 2);
  g_assert_cmpuint(frame_number(first[0]), ==, 0);
  g_assert_cmpuint(frame_number(first[1]), ==, 2);
  g_assert_cmpuint(first[1]->width, ==, 64);
  g_assert_cmpuint(second[0]->width, ==, 128);
  gst_npu_batcher_complete(batcher, first, 2, TRUE);
  gst_npu_batcher_complete(batcher, second, 2, TRUE);
  for (guint f = 0; f < 4; f++)
    expect_frame(batcher, lane, f);
  gst_npu_batcher_free(batcher);
}

typedef struct {
  GstNpuBatcher *batcher;
  GstNpuBatchLane *lane;
  GstNpuBatchJob *batch[1];
  guint taken;
} Helper;

static gpointer take_one(gpointer data)
{
  Helper *helper = data;
  helper->taken = gst_npu_batcher_take(helper->batcher, helper->batch);
  return NULL;
}

static gpointer push_second(gpointer data)
{
  Helper *helper = data;
  push(helper->batcher, helper->lane, 1, NULL, 0, 0);
  return NULL;
}

/* max-inflight 1: a second batch is taken only once the first completes;
 * a lane holding its limit of frames (max-inflight x batch-size) blocks its
 * pusher until one leaves. */
static void test_inflight_and_back_pressure(void)
{
  GstNpuBatcher *batcher = new_batcher(1, 1);
  GstNpuBatchLane *a = open_lane(batcher, 0), *b = open_lane(batcher, 1);
  push(batcher, a, 0, NULL, 0, 0);
  GstNpuBatchJob *first[1];
  g_assert_cmpuint(gst_npu_batcher_take(batcher, first), ==, 1);
  g_assert_true(first[0]->entry->lane == a);
  push(batcher, b, 0, NULL, 0, 0); /* (one job may wait: max-inflight x batch-size) */
  Helper taker = {batcher, b, {NULL}, 0};
  GThread *thread = g_thread_new("taker", take_one, &taker);
  gst_npu_batcher_complete(batcher, first, 1, TRUE); /* lets the taker take b's frame */
  g_thread_join(thread);
  g_assert_cmpuint(taker.taken, ==, 1);
  g_assert_true(taker.batch[0]->entry->lane == b);
  gst_npu_batcher_complete(batcher, taker.batch, 1, TRUE);
  Helper pusher = {batcher, a, {NULL}, 0};
  thread = g_thread_new("pusher", push_second, &pusher); /* a holds frame 0: waits */
  expect_frame(batcher, a, 0);                          /* room for it */
  g_thread_join(thread);
  g_assert_cmpuint(gst_npu_batcher_take(batcher, first), ==, 1);
  gst_npu_batcher_complete(batcher, first, 1, TRUE);
  expect_frame(batcher, a, 1);
  expect_frame(batcher, b, 0);
  gst_npu_batcher_wait_inflight(batcher, 0);
  gst_npu_batcher_free(batcher);
}

static void test_flushing_errors_and_stop(void)
{
  GstNpuBatcher *batcher = new_batcher(2, 1);
  GstNpuBatchLane *lane = open_lane(batcher, 0);
  push(batcher, lane, 0, NULL, 0, 0);
  Frame *event = g_new0(Frame, 1);
  g_assert_true(gst_npu_batcher_push_event(batcher, lane, event));
  gst_npu_batcher_flush_lane(batcher, lane); /* the frame and the event are dropped */
  g_assert_cmpuint(frames_freed, ==, 2);
  GPtrArray *jobs = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(jobs, g_new0(Job, 1));
  gint code = 0;
  gst_npu_batcher_set_lane_error(batcher, lane, -5, FALSE);
  g_assert_cmpint(gst_npu_batcher_push_frame(batcher, lane, NULL, jobs, FALSE, NULL, &code), ==,
                  GST_NPU_BATCH_STOPPED);
  g_assert_cmpint(code, ==, -5);
  gst_npu_batcher_set_lane_error(batcher, lane, 0, FALSE);
  gst_npu_batcher_set_failed(batcher, TRUE);
  g_assert_cmpint(gst_npu_batcher_push_frame(batcher, lane, NULL, jobs, FALSE, NULL, &code), ==,
                  GST_NPU_BATCH_FAILED);
  gst_npu_batcher_set_failed(batcher, FALSE);
  gst_npu_batcher_set_input_flushing(batcher, lane, TRUE);
  g_assert_cmpint(gst_npu_batcher_push_frame(batcher, lane, NULL, jobs, FALSE, NULL, &code), ==,
                  GST_NPU_BATCH_FLUSHING);
  g_assert_cmpuint(jobs->len, ==, 1); /* not queued: still the caller's */
  g_ptr_array_unref(jobs);
  gst_npu_batcher_set_output_flushing(batcher, lane, TRUE);
  gboolean is_frame;
  g_assert_null(gst_npu_batcher_pop(batcher, lane, &is_frame));
  gst_npu_batcher_set_stopping(batcher, TRUE);
  GstNpuBatchJob *batch[2];
  g_assert_cmpuint(gst_npu_batcher_take(batcher, batch), ==, 0);
  gst_npu_batcher_remove_lane(batcher, lane);
  gst_npu_batcher_free(batcher);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/batcher/batches-across-lanes", test_batches_across_lanes);
  g_test_add_func("/batcher/timeout", test_timeout_takes_what_waits);
  g_test_add_func("/batcher/draining-lane", test_draining_lane_runs_the_partial_batch);
  g_test_add_func("/batcher/drained-after-sent", test_drained_after_the_last_entry_is_sent);
  g_test_add_func("/batcher/interval-and-events", test_interval_and_events);
  g_test_add_func("/batcher/tracked-objects", test_tracked_objects_reclassified);
  g_test_add_func("/batcher/same-size", test_same_size_batches);
  g_test_add_func("/batcher/inflight-and-back-pressure", test_inflight_and_back_pressure);
  g_test_add_func("/batcher/flushing-errors-stop", test_flushing_errors_and_stop);
  return g_test_run();
}
