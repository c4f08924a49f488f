/* npuinfer's batcher: frames (and events) from many lanes (an element's
 * pads), jobs (a frame or a region of one) batched across lanes, and each
 * lane's output in arrival order, a frame leaving once all its jobs are
 * complete. It owns the policy: batch size, how long a job waits for a
 * batch to fill, every Nth frame inferred (interval), a tracked object
 * re-inferred every Nth frame it appears in (reclassify interval), how many
 * batches run at once, and back-pressure on the lanes.
 *
 * Pure GLib and thread-safe: lanes push from their own threads, one thread
 * takes batches, any thread (a device stream's host function) completes
 * them, and each lane's output side pops from its own thread. Unit-tested
 * without GStreamer (tests/gst/test_batcher.c). */
#ifndef GST_NPU_BATCHER_H
#define GST_NPU_BATCHER_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct _GstNpuBatcher GstNpuBatcher;
typedef struct _GstNpuBatchLane GstNpuBatchLane;
typedef struct _GstNpuBatchEntry GstNpuBatchEntry;

/* A frame or an event in its lane's order. */
struct _GstNpuBatchEntry {
  GstNpuBatchLane *lane;
  gpointer data;     /* the caller's (freed with the batcher's free_data when dropped) */
  gboolean is_frame;
  gint64 queued_at;  /* monotonic us */
  guint pending;     /* jobs not complete yet */
  gboolean done;     /* may leave */
};

/* One slot of a batch. Callers put it first in a struct of their own. */
typedef struct {
  GstNpuBatchEntry *entry;
  gint64 object_id;       /* a tracked object; -1: none */
  guint width, height;    /* the input size it wants; 0: not known yet */
} GstNpuBatchJob;

/* Sets the input size a job wants (with same_size policies); called on
 * the thread that takes batches. */
typedef void (*GstNpuBatchSizeFunc)(GstNpuBatchJob *job, gpointer user_data);

typedef struct {
  GDestroyNotify free_data; /* a frame or event dropped */
  GDestroyNotify free_job;
  GstNpuBatchSizeFunc size_of;
  /* A tracked object not inferred on a frame: its last result (see
   * gst_npu_batcher_remember) given to the frame, before the frame is
   * queued; may be NULL. */
  void (*reuse_result)(gpointer frame, GstNpuBatchJob *job, gconstpointer result,
                       gpointer user_data);
  GDestroyNotify free_result;
  gpointer user_data; /* of size_of and reuse_result */
} GstNpuBatcherFuncs;

typedef struct {
  guint batch_size;          /* most jobs per batch (>= 1) */
  gint64 timeout_us;         /* most a job waits for its batch to fill; 0: none */
  guint max_inflight;        /* batches taken and not complete; also bounds what waits */
  guint interval;            /* infer every Nth frame of a lane (>= 1) */
  guint reclassify_interval; /* infer a tracked object on every Nth frame it is in (>= 1) */
  gboolean same_size;        /* a batch holds only jobs of the oldest one's size */
} GstNpuBatchPolicy;

typedef struct {
  guint64 frames;      /* pushed */
  guint64 inferences;  /* jobs completed */
  guint64 skipped_late;
  guint64 skipped_tracked; /* jobs of tracked objects inferred recently */
  gint64 latency_sum, latency_max; /* queued -> complete, us, per job */
} GstNpuBatchLaneStats;

/* What a push got. */
typedef enum {
  GST_NPU_BATCH_QUEUED,   /* queued (with or without jobs) */
  GST_NPU_BATCH_FLUSHING, /* the lane's input is flushing: nothing queued */
  GST_NPU_BATCH_STOPPED,  /* the lane's output stopped with an error code: nothing queued */
  GST_NPU_BATCH_FAILED,   /* a batch failed: nothing queued */
} GstNpuBatchPush;

GstNpuBatcher *gst_npu_batcher_new(const GstNpuBatcherFuncs *funcs);
/* With no batch taken and not complete. */
void gst_npu_batcher_free(GstNpuBatcher *batcher);

void gst_npu_batcher_set_policy(GstNpuBatcher *batcher, const GstNpuBatchPolicy *policy);
void gst_npu_batcher_get_policy(GstNpuBatcher *batcher, GstNpuBatchPolicy *policy);

/* A lane starts flushing on both sides. */
GstNpuBatchLane *gst_npu_batcher_add_lane(GstNpuBatcher *batcher, guint index);
/* Drops what the lane holds (waiting for its jobs in batches first). */
void gst_npu_batcher_remove_lane(GstNpuBatcher *batcher, GstNpuBatchLane *lane);
guint gst_npu_batch_lane_index(const GstNpuBatchLane *lane);

/* The input side: a flushing lane refuses pushes and wakes a blocked one. */
void gst_npu_batcher_set_input_flushing(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                                        gboolean flushing);
/* The output side: a flushing lane's pop returns NULL at once. */
void gst_npu_batcher_set_output_flushing(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                                         gboolean flushing);
/* The output side failed with `code` (the caller's, != 0): pushes return
 * GST_NPU_BATCH_STOPPED with it; 0 clears it. `stop_output` also stops pops. */
void gst_npu_batcher_set_lane_error(GstNpuBatcher *batcher, GstNpuBatchLane *lane, gint code,
                                    gboolean stop_output);
/* Drops the lane's entries (after its jobs in batches are complete) and
 * clears its error and the skip state; the counters stay. */
void gst_npu_batcher_flush_lane(GstNpuBatcher *batcher, GstNpuBatchLane *lane);

/* Queues a frame with its jobs (may be none: the frame passes without
 * inference). Applies the interval and the reclassify interval, skips
 * inference when `late`, and blocks while the lane holds max_inflight x
 * batch_size frames not popped or that many jobs wait (back-pressure). The
 * jobs queued, and those of tracked objects inferred recently (handed to
 * reuse_result), move out of `jobs`; those left are the caller's. `frame`
 * is the caller's until GST_NPU_BATCH_QUEUED. *code gets the lane's error code
 * with GST_NPU_BATCH_STOPPED. *inferred (may be NULL): whether a job was
 * queued. */
GstNpuBatchPush gst_npu_batcher_push_frame(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                                           gpointer frame, GPtrArray *jobs, gboolean late,
                                           gboolean *inferred, gint *code);
/* Queues an event after the lane's earlier entries; FALSE (not queued)
 * while the lane's input is flushing. */
gboolean gst_npu_batcher_push_event(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                                    gpointer event);
/* A tracked object's newest result (taken), handed to reuse_result for
 * its jobs that are not inferred; forgotten once the object is not seen
 * for reclassify_interval frames. */
void gst_npu_batcher_remember(GstNpuBatcher *batcher, GstNpuBatchLane *lane, gint64 object_id,
                              gpointer result);
/* The lane sends no frame for now (it ended, or waits for an answer): its
 * waiting jobs run without waiting for their batch to fill, until it
 * pushes a frame again or flushes. */
void gst_npu_batcher_drain_lane(GstNpuBatcher *batcher, GstNpuBatchLane *lane);
/* Drains the lane and blocks until everything it queued has left and the
 * output side has finished sending the last of it on (or it flushes): a
 * serialized query may then go downstream from the calling thread without
 * overtaking, or racing, the lane's last frame. */
void gst_npu_batcher_wait_lane_drained(GstNpuBatcher *batcher, GstNpuBatchLane *lane);

/* The output side: blocks until the lane's oldest entry may leave and
 * returns its data (the caller's now), or NULL when the output is flushing.
 * Calling it again says the entry it returned before has been sent on. */
gpointer gst_npu_batcher_pop(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                             gboolean *is_frame);

/* The batch side: blocks until a batch is due (full, or its oldest job
 * waited timeout_us) and fewer than max_inflight are running, then moves
 * up to batch_size jobs into `batch` (room for batch_size) and returns
 * their count; 0 once stopping. */
guint gst_npu_batcher_take(GstNpuBatcher *batcher, GstNpuBatchJob **batch);
/* Any thread: the batch's jobs are complete (`inferred`: with results;
 * FALSE: the frames pass without); frees the jobs. */
void gst_npu_batcher_complete(GstNpuBatcher *batcher, GstNpuBatchJob **batch, guint count,
                              gboolean inferred);
/* Blocks until at most `most` batches are taken and not complete (the
 * caller's own among them). */
void gst_npu_batcher_wait_inflight(GstNpuBatcher *batcher, guint most);
/* take() returns 0 from now on (until restarted), pushes still queue. */
void gst_npu_batcher_set_stopping(GstNpuBatcher *batcher, gboolean stopping);
/* A batch failed: pushes return GST_NPU_BATCH_FAILED until cleared. */
void gst_npu_batcher_set_failed(GstNpuBatcher *batcher, gboolean failed);
/* Sizes wanted by the jobs waiting are asked again (the model changed). */
void gst_npu_batcher_forget_sizes(GstNpuBatcher *batcher);

/* Statistics. */
void gst_npu_batcher_lane_stats(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                                GstNpuBatchLaneStats *stats);
void gst_npu_batcher_reset_stats(GstNpuBatcher *batcher);
/* Batches completed with results and the jobs in them. */
void gst_npu_batcher_totals(GstNpuBatcher *batcher, guint64 *batches, guint64 *jobs);

G_END_DECLS

#endif
