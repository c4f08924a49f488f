/* npuinfer's batcher (see gstnpubatcher.h). One mutex guards everything;
 * one condition wakes every waiter (pushers, the batch taker, output
 * sides): few threads, short waits, and no lost wake-up to reason about. */
#include "gstnpubatcher.h"

/* A tracked object of a lane. */
typedef struct {
  guint64 inferred_at; /* the lane's frame number it was last queued for inference */
  guint64 seen_at;     /* ... last seen in */
  gpointer result;     /* its newest result, or NULL */
} TrackedObject;

struct _GstNpuBatchLane {
  guint index;
  gboolean input_flushing, output_flushing;
  gboolean draining;     /* no frame coming for now: its jobs do not wait for more */
  gboolean delivering;   /* an entry popped and still being sent on (until the next pop) */
  gint error;            /* the output side's error code; 0: none */
  GQueue out;            /* GstNpuBatchEntry*, oldest first */
  guint frames_held;     /* frames in `out` */
  guint running;         /* its jobs in batches taken, not complete */
  GHashTable *objects;   /* gint64 object id -> TrackedObject* */
  GstNpuBatchLaneStats stats;
};

struct _GstNpuBatcher {
  GstNpuBatcherFuncs funcs;
  GMutex lock;
  GCond changed;
  GstNpuBatchPolicy policy;
  GPtrArray *lanes;
  GQueue waiting; /* GstNpuBatchJob*, oldest first */
  guint inflight; /* batches taken, not complete */
  gboolean stopping, failed;
  guint64 batches, batched_jobs;
};

static void entry_free(GstNpuBatcher *batcher, GstNpuBatchEntry *entry)
{
  if (entry->data && batcher->funcs.free_data)
    batcher->funcs.free_data(entry->data);
  g_free(entry);
}

static void job_free(GstNpuBatcher *batcher, GstNpuBatchJob *job)
{
  batcher->funcs.free_job(job);
}

static void tracked_free(GstNpuBatcher *batcher, TrackedObject *object)
{
  if (object->result && batcher->funcs.free_result)
    batcher->funcs.free_result(object->result);
  g_free(object);
}

GstNpuBatcher *gst_npu_batcher_new(const GstNpuBatcherFuncs *funcs)
{
  g_return_val_if_fail(funcs && funcs->free_job, NULL);
  GstNpuBatcher *batcher = g_new0(GstNpuBatcher, 1);
  batcher->funcs = *funcs;
  g_mutex_init(&batcher->lock);
  g_cond_init(&batcher->changed);
  batcher->policy = (GstNpuBatchPolicy){.batch_size = 1, .max_inflight = 1, .interval = 1,
                                        .reclassify_interval = 1};
  batcher->lanes = g_ptr_array_new();
  g_queue_init(&batcher->waiting);
  return batcher;
}

static void drop_lane_entries(GstNpuBatcher *batcher, GstNpuBatchLane *lane)
{
  while (lane->running > 0)
    g_cond_wait(&batcher->changed, &batcher->lock);
  for (GList *l = batcher->waiting.head; l;) {
    GList *next = l->next;
    GstNpuBatchJob *job = l->data;
    if (job->entry->lane == lane) {
      g_queue_delete_link(&batcher->waiting, l);
      job_free(batcher, job);
    }
    l = next;
  }
  GstNpuBatchEntry *entry;
  while ((entry = g_queue_pop_head(&lane->out)))
    entry_free(batcher, entry);
  lane->frames_held = 0;
  lane->draining = FALSE;
  GHashTableIter iter;
  gpointer object;
  g_hash_table_iter_init(&iter, lane->objects);
  while (g_hash_table_iter_next(&iter, NULL, &object)) {
    tracked_free(batcher, object);
    g_hash_table_iter_remove(&iter);
  }
  g_cond_broadcast(&batcher->changed);
}

static void lane_free(GstNpuBatcher *batcher, GstNpuBatchLane *lane)
{
  drop_lane_entries(batcher, lane);
  g_hash_table_unref(lane->objects);
  g_free(lane);
}

void gst_npu_batcher_free(GstNpuBatcher *batcher)
{
  if (!batcher)
    return;
  g_mutex_lock(&batcher->lock);
  g_warn_if_fail(batcher->inflight == 0);
  while (batcher->lanes->len > 0)
    lane_free(batcher, g_ptr_array_steal_index(batcher->lanes, batcher->lanes->len - 1));
  g_mutex_unlock(&batcher->lock);
  g_ptr_array_unref(batcher->lanes);
  g_mutex_clear(&batcher->lock);
  g_cond_clear(&batcher->changed);
  g_free(batcher);
}

void gst_npu_batcher_set_policy(GstNpuBatcher *batcher, const GstNpuBatchPolicy *policy)
{
  g_mutex_lock(&batcher->lock);
  batcher->policy = *policy;
  batcher->policy.batch_size = MAX(policy->batch_size, 1);
  batcher->policy.max_inflight = MAX(policy->max_inflight, 1);
  batcher->policy.interval = MAX(policy->interval, 1);
  batcher->policy.reclassify_interval = MAX(policy->reclassify_interval, 1);
  g_cond_broadcast(&batcher->changed); /* a batch may be due under the new policy */
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_get_policy(GstNpuBatcher *batcher, GstNpuBatchPolicy *policy)
{
  g_mutex_lock(&batcher->lock);
  *policy = batcher->policy;
  g_mutex_unlock(&batcher->lock);
}

GstNpuBatchLane *gst_npu_batcher_add_lane(GstNpuBatcher *batcher, guint index)
{
  GstNpuBatchLane *lane = g_new0(GstNpuBatchLane, 1);
  lane->index = index;
  lane->input_flushing = lane->output_flushing = TRUE;
  g_queue_init(&lane->out);
  lane->objects = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  g_mutex_lock(&batcher->lock);
  g_ptr_array_add(batcher->lanes, lane);
  g_mutex_unlock(&batcher->lock);
  return lane;
}

void gst_npu_batcher_remove_lane(GstNpuBatcher *batcher, GstNpuBatchLane *lane)
{
  g_mutex_lock(&batcher->lock);
  g_ptr_array_remove(batcher->lanes, lane);
  lane_free(batcher, lane);
  g_mutex_unlock(&batcher->lock);
}

guint gst_npu_batch_lane_index(const GstNpuBatchLane *lane)
{
  return lane->index;
}

void gst_npu_batcher_set_input_flushing(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                                        gboolean flushing)
{
  g_mutex_lock(&batcher->lock);
  lane->input_flushing = flushing;
  g_cond_broadcast(&batcher->changed);
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_set_output_flushing(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                                         gboolean flushing)
{
  g_mutex_lock(&batcher->lock);
  lane->output_flushing = flushing;
  g_cond_broadcast(&batcher->changed);
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_set_lane_error(GstNpuBatcher *batcher, GstNpuBatchLane *lane, gint code,
                                    gboolean stop_output)
{
  g_mutex_lock(&batcher->lock);
  lane->error = code;
  lane->output_flushing |= stop_output;
  g_cond_broadcast(&batcher->changed);
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_flush_lane(GstNpuBatcher *batcher, GstNpuBatchLane *lane)
{
  g_mutex_lock(&batcher->lock);
  drop_lane_entries(batcher, lane);
  lane->error = 0;
  g_mutex_unlock(&batcher->lock);
}

/* Under the lock: the lane's tracked objects not seen for the reclassify
 * interval are forgotten (one coming back is inferred again at once). */
static void forget_gone_objects(GstNpuBatcher *batcher, GstNpuBatchLane *lane, guint64 frame)
{
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init(&iter, lane->objects);
  while (g_hash_table_iter_next(&iter, NULL, &value)) {
    TrackedObject *object = value;
    if (frame - object->seen_at >= batcher->policy.reclassify_interval) {
      tracked_free(batcher, object);
      g_hash_table_iter_remove(&iter);
    }
  }
}

/* Under the lock: whether a tracked object's job runs on the lane's frame
 * number `frame`; for one that does not, `data` gets the object's last
 * result. */
static gboolean reclassify(GstNpuBatcher *batcher, GstNpuBatchLane *lane, GstNpuBatchJob *job,
                           guint64 frame, gpointer data)
{
  TrackedObject *object = g_hash_table_lookup(lane->objects, &job->object_id);
  if (!object) {
    object = g_new0(TrackedObject, 1);
    object->inferred_at = frame;
    g_hash_table_insert(lane->objects, g_memdup2(&job->object_id, sizeof(gint64)), object);
    object->seen_at = frame;
    return TRUE;
  }
  object->seen_at = frame;
  if (frame - object->inferred_at >= batcher->policy.reclassify_interval) {
    object->inferred_at = frame;
    return TRUE;
  }
  if (object->result && batcher->funcs.reuse_result)
    batcher->funcs.reuse_result(data, job, object->result, batcher->funcs.user_data);
  lane->stats.skipped_tracked++;
  return FALSE;
}

GstNpuBatchPush gst_npu_batcher_push_frame(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                                           gpointer frame, GPtrArray *jobs, gboolean late,
                                           gboolean *inferred, gint *code)
{
  GstNpuBatchEntry *entry = g_new0(GstNpuBatchEntry, 1);
  entry->lane = lane;
  entry->is_frame = TRUE;
  g_mutex_lock(&batcher->lock);
  guint limit = batcher->policy.max_inflight * batcher->policy.batch_size;
  guint64 number = lane->stats.frames++;
  gboolean infer = number % batcher->policy.interval == 0 && jobs->len > 0;
  if (infer && late) { /* the frame goes on, without results */
    infer = FALSE;
    lane->stats.skipped_late++;
  }
  while (!lane->input_flushing && lane->error == 0 && !batcher->failed &&
         (lane->frames_held >= limit ||
          (infer && g_queue_get_length(&batcher->waiting) >= limit)))
    g_cond_wait(&batcher->changed, &batcher->lock);
  GstNpuBatchPush result = lane->input_flushing ? GST_NPU_BATCH_FLUSHING
                           : lane->error != 0   ? GST_NPU_BATCH_STOPPED
                           : batcher->failed    ? GST_NPU_BATCH_FAILED
                                                : GST_NPU_BATCH_QUEUED;
  if (code)
    *code = lane->error;
  if (result != GST_NPU_BATCH_QUEUED) {
    g_mutex_unlock(&batcher->lock);
    g_free(entry);
    return result;
  }
  entry->data = frame;
  entry->queued_at = g_get_monotonic_time();
  lane->draining = FALSE;
  if (batcher->policy.reclassify_interval > 1)
    forget_gone_objects(batcher, lane, number);
  for (guint i = 0; infer && i < jobs->len;) {
    GstNpuBatchJob *job = g_ptr_array_index(jobs, i);
    job->entry = entry;
    if (job->object_id >= 0 && batcher->policy.reclassify_interval > 1 &&
        !reclassify(batcher, lane, job, number, frame)) {
      job_free(batcher, g_ptr_array_steal_index(jobs, i));
      continue;
    }
    g_queue_push_tail(&batcher->waiting, g_ptr_array_steal_index(jobs, i));
    entry->pending++;
  }
  entry->done = entry->pending == 0;
  g_queue_push_tail(&lane->out, entry);
  lane->frames_held++;
  if (inferred)
    *inferred = entry->pending > 0;
  g_cond_broadcast(&batcher->changed);
  g_mutex_unlock(&batcher->lock);
  return result;
}

void gst_npu_batcher_remember(GstNpuBatcher *batcher, GstNpuBatchLane *lane, gint64 object_id,
                              gpointer result)
{
  g_mutex_lock(&batcher->lock);
  TrackedObject *object = g_hash_table_lookup(lane->objects, &object_id);
  if (object) {
    if (object->result && batcher->funcs.free_result)
      batcher->funcs.free_result(object->result);
    object->result = result;
    result = NULL;
  }
  g_mutex_unlock(&batcher->lock);
  if (result && batcher->funcs.free_result) /* forgotten meanwhile */
    batcher->funcs.free_result(result);
}

gboolean gst_npu_batcher_push_event(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                                    gpointer event)
{
  g_mutex_lock(&batcher->lock);
  gboolean queued = !lane->input_flushing;
  if (queued) {
    GstNpuBatchEntry *entry = g_new0(GstNpuBatchEntry, 1);
    entry->lane = lane;
    entry->data = event;
    entry->done = TRUE;
    g_queue_push_tail(&lane->out, entry);
    g_cond_broadcast(&batcher->changed);
  }
  g_mutex_unlock(&batcher->lock);
  return queued;
}

void gst_npu_batcher_drain_lane(GstNpuBatcher *batcher, GstNpuBatchLane *lane)
{
  g_mutex_lock(&batcher->lock);
  lane->draining = TRUE;
  g_cond_broadcast(&batcher->changed);
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_wait_lane_drained(GstNpuBatcher *batcher, GstNpuBatchLane *lane)
{
  g_mutex_lock(&batcher->lock);
  lane->draining = TRUE;
  g_cond_broadcast(&batcher->changed);
  while (!lane->input_flushing && !lane->output_flushing &&
         (!g_queue_is_empty(&lane->out) || lane->delivering))
    g_cond_wait(&batcher->changed, &batcher->lock);
  g_mutex_unlock(&batcher->lock);
}

gpointer gst_npu_batcher_pop(GstNpuBatcher *batcher, GstNpuBatchLane *lane, gboolean *is_frame)
{
  g_mutex_lock(&batcher->lock);
  if (lane->delivering) { /* the previous entry has been sent on */
    lane->delivering = FALSE;
    g_cond_broadcast(&batcher->changed);
  }
  GstNpuBatchEntry *head = NULL;
  while (!lane->output_flushing && !((head = g_queue_peek_head(&lane->out)) && head->done))
    g_cond_wait(&batcher->changed, &batcher->lock);
  gpointer data = NULL;
  if (!lane->output_flushing) {
    g_queue_pop_head(&lane->out);
    lane->frames_held -= head->is_frame;
    lane->delivering = TRUE;
    *is_frame = head->is_frame;
    data = head->data;
    g_free(head);
    g_cond_broadcast(&batcher->changed);
  }
  g_mutex_unlock(&batcher->lock);
  return data;
}

/* Under the lock: whether a waiting job's lane is draining (no more of its
 * frames will fill the batch). */
static gboolean lane_draining(GstNpuBatcher *batcher)
{
  for (GList *l = batcher->waiting.head; l; l = l->next)
    if (((GstNpuBatchJob *)l->data)->entry->lane->draining)
      return TRUE;
  return FALSE;
}

/* Under the lock: whether the waiting jobs should run now; else when. */
static gboolean batch_due(GstNpuBatcher *batcher, gint64 now, gint64 *wake_at)
{
  const GstNpuBatchJob *oldest = g_queue_peek_head(&batcher->waiting);
  *wake_at = G_MAXINT64;
  if (!oldest || batcher->inflight >= batcher->policy.max_inflight)
    return FALSE;
  gint64 due = oldest->entry->queued_at + batcher->policy.timeout_us;
  if (g_queue_get_length(&batcher->waiting) >= batcher->policy.batch_size || now >= due ||
      lane_draining(batcher))
    return TRUE;
  *wake_at = due;
  return FALSE;
}

/* Under the lock: the oldest waiting job and up to batch_size - 1 more, in
 * arrival order. With same_size, only jobs of the oldest one's size go
 * with it: a crop is then read the same whatever else waits (a
 * recogniser's reading changes with the padding a wider neighbour adds). */
static guint take_jobs(GstNpuBatcher *batcher, GstNpuBatchJob **batch)
{
  gboolean same_size = batcher->policy.same_size && batcher->funcs.size_of;
  guint count = 0;
  for (GList *l = batcher->waiting.head; l && count < batcher->policy.batch_size;) {
    GList *next = l->next;
    GstNpuBatchJob *job = l->data;
    if (same_size && job->width == 0)
      batcher->funcs.size_of(job, batcher->funcs.user_data);
    if (count == 0 || !same_size ||
        (job->width == batch[0]->width && job->height == batch[0]->height)) {
      batch[count++] = job;
      g_queue_delete_link(&batcher->waiting, l);
      job->entry->lane->running++;
    }
    l = next;
  }
  return count;
}

guint gst_npu_batcher_take(GstNpuBatcher *batcher, GstNpuBatchJob **batch)
{
  guint count = 0;
  g_mutex_lock(&batcher->lock);
  while (!batcher->stopping) {
    gint64 wake_at;
    if (batch_due(batcher, g_get_monotonic_time(), &wake_at)) {
      count = take_jobs(batcher, batch);
      batcher->inflight++;
      g_cond_broadcast(&batcher->changed); /* room for pushers */
      break;
    }
    if (wake_at == G_MAXINT64)
      g_cond_wait(&batcher->changed, &batcher->lock);
    else
      g_cond_wait_until(&batcher->changed, &batcher->lock, wake_at);
  }
  g_mutex_unlock(&batcher->lock);
  return count;
}

void gst_npu_batcher_complete(GstNpuBatcher *batcher, GstNpuBatchJob **batch, guint count,
                              gboolean inferred)
{
  gint64 now = g_get_monotonic_time();
  g_mutex_lock(&batcher->lock);
  if (inferred) {
    batcher->batches++;
    batcher->batched_jobs += count;
  }
  for (guint i = 0; i < count; i++) {
    GstNpuBatchEntry *entry = batch[i]->entry;
    GstNpuBatchLane *lane = entry->lane;
    if (inferred) {
      gint64 latency = now - entry->queued_at;
      lane->stats.inferences++;
      lane->stats.latency_sum += latency;
      lane->stats.latency_max = MAX(lane->stats.latency_max, latency);
    }
    entry->done = --entry->pending == 0;
    lane->running--;
    job_free(batcher, batch[i]);
  }
  batcher->inflight--;
  g_cond_broadcast(&batcher->changed);
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_wait_inflight(GstNpuBatcher *batcher, guint most)
{
  g_mutex_lock(&batcher->lock);
  while (batcher->inflight > most)
    g_cond_wait(&batcher->changed, &batcher->lock);
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_set_stopping(GstNpuBatcher *batcher, gboolean stopping)
{
  g_mutex_lock(&batcher->lock);
  batcher->stopping = stopping;
  g_cond_broadcast(&batcher->changed);
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_set_failed(GstNpuBatcher *batcher, gboolean failed)
{
  g_mutex_lock(&batcher->lock);
  batcher->failed = failed;
  g_cond_broadcast(&batcher->changed);
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_forget_sizes(GstNpuBatcher *batcher)
{
  g_mutex_lock(&batcher->lock);
  for (GList *l = batcher->waiting.head; l; l = l->next) {
    GstNpuBatchJob *job = l->data;
    job->width = job->height = 0;
  }
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_lane_stats(GstNpuBatcher *batcher, GstNpuBatchLane *lane,
                                GstNpuBatchLaneStats *stats)
{
  g_mutex_lock(&batcher->lock);
  *stats = lane->stats;
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_reset_stats(GstNpuBatcher *batcher)
{
  g_mutex_lock(&batcher->lock);
  for (guint i = 0; i < batcher->lanes->len; i++) {
    GstNpuBatchLane *lane = g_ptr_array_index(batcher->lanes, i);
    lane->stats = (GstNpuBatchLaneStats){0};
  }
  batcher->batches = batcher->batched_jobs = 0;
  g_mutex_unlock(&batcher->lock);
}

void gst_npu_batcher_totals(GstNpuBatcher *batcher, guint64 *batches, guint64 *jobs)
{
  g_mutex_lock(&batcher->lock);
  *batches = batcher->batches;
  *jobs = batcher->batched_jobs;
  g_mutex_unlock(&batcher->lock);
}
