#include "mot_metrics.h"

#include <glib.h>

#include "assignment.h"

#define MATCH_IOU 0.5f

struct mot_metrics {
  mot_summary totals;
  GHashTable *last_match;  /* truth id -> hypothesis id it was last matched to */
  GHashTable *co_occurrences; /* (truth id, hypothesis id) -> frames within MATCH_IOU */
  npu_assignment assignment;
};

typedef struct {
  int truth;
  uint64_t hypothesis;
} id_pair;

static guint pair_hash(gconstpointer p)
{
  const id_pair *pair = p;
  return g_int_hash(&pair->truth) * 31u + g_int64_hash(&pair->hypothesis);
}

static gboolean pair_equal(gconstpointer a, gconstpointer b)
{
  const id_pair *x = a, *y = b;
  return x->truth == y->truth && x->hypothesis == y->hypothesis;
}

mot_metrics *mot_metrics_new(void)
{
  mot_metrics *m = g_new0(mot_metrics, 1);
  m->last_match = g_hash_table_new_full(g_int_hash, g_int_equal, g_free, g_free);
  m->co_occurrences = g_hash_table_new_full(pair_hash, pair_equal, g_free, g_free);
  return m;
}

void mot_metrics_free(mot_metrics *m)
{
  g_hash_table_unref(m->last_match);
  g_hash_table_unref(m->co_occurrences);
  npu_assignment_clear(&m->assignment);
  g_free(m);
}

static void count_co_occurrences(mot_metrics *m, const mot_truth *truth, int n_truth,
                                 const mot_hypothesis *hypotheses, int n_hypotheses)
{
  for (int t = 0; t < n_truth; t++)
    for (int h = 0; h < n_hypotheses; h++) {
      if (npu_box_iou(&truth[t].box, &hypotheses[h].box) < MATCH_IOU)
        continue;
      id_pair key = {truth[t].id, hypotheses[h].id};
      long *frames = g_hash_table_lookup(m->co_occurrences, &key);
      if (!frames) {
        frames = g_new0(long, 1);
        g_hash_table_insert(m->co_occurrences, g_memdup2(&key, sizeof key), frames);
      }
      (*frames)++;
    }
}

void mot_metrics_add_frame(mot_metrics *m, const mot_truth *truth, int n_truth,
                           const mot_hypothesis *hypotheses, int n_hypotheses)
{
  count_co_occurrences(m, truth, n_truth, hypotheses, n_hypotheses);
  int *truth_to_hypothesis = g_new(int, n_truth ? n_truth : 1);
  bool *taken = g_new0(bool, n_hypotheses ? n_hypotheses : 1);
  /* CLEAR MOT: a correspondence of the previous frame is kept while it
   * still overlaps enough; the rest are matched optimally */
  for (int t = 0; t < n_truth; t++) {
    truth_to_hypothesis[t] = -1;
    const uint64_t *last = g_hash_table_lookup(m->last_match, &truth[t].id);
    for (int h = 0; last && h < n_hypotheses; h++)
      if (!taken[h] && hypotheses[h].id == *last &&
          npu_box_iou(&truth[t].box, &hypotheses[h].box) >= MATCH_IOU) {
        truth_to_hypothesis[t] = h;
        taken[h] = true;
      }
  }
  float *cost = g_new(float, (gsize)MAX(n_truth * n_hypotheses, 1));
  for (int t = 0; t < n_truth; t++)
    for (int h = 0; h < n_hypotheses; h++)
      cost[t * n_hypotheses + h] =
          truth_to_hypothesis[t] >= 0 || taken[h]
              ? 2.0f : 1.0f - npu_box_iou(&truth[t].box, &hypotheses[h].box);
  int *row_to_col = g_new(int, n_truth ? n_truth : 1);
  npu_assignment_solve(&m->assignment, cost, n_truth, n_hypotheses, 1.0f - MATCH_IOU,
                       row_to_col);
  int matched = 0;
  for (int t = 0; t < n_truth; t++) {
    if (truth_to_hypothesis[t] < 0)
      truth_to_hypothesis[t] = row_to_col[t];
    int h = truth_to_hypothesis[t];
    if (h < 0)
      continue;
    matched++;
    uint64_t *last = g_hash_table_lookup(m->last_match, &truth[t].id);
    if (last && *last != hypotheses[h].id)
      m->totals.id_switches++;
    if (!last) {
      last = g_new(uint64_t, 1);
      g_hash_table_insert(m->last_match, g_memdup2(&truth[t].id, sizeof(int)), last);
    }
    *last = hypotheses[h].id;
  }
  m->totals.truths += n_truth;
  m->totals.hypotheses += n_hypotheses;
  m->totals.misses += n_truth - matched;
  m->totals.false_positives += n_hypotheses - matched;
  g_free(cost);
  g_free(row_to_col);
  g_free(taken);
  g_free(truth_to_hypothesis);
}

/* IDF1: truth and hypothesis identities paired one to one for the whole
 * sequence so that they share the most frames (an assignment on
 * "frames not shared"). */
static long id_true_positives(mot_metrics *m)
{
  GHashTable *truth_index = g_hash_table_new(g_int_hash, g_int_equal);
  GHashTable *hypothesis_index = g_hash_table_new(g_int64_hash, g_int64_equal);
  GHashTableIter iter;
  gpointer key, value;
  long most = 0;
  g_hash_table_iter_init(&iter, m->co_occurrences);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    id_pair *pair = key;
    if (!g_hash_table_contains(truth_index, &pair->truth))
      g_hash_table_insert(truth_index, &pair->truth,
                          GINT_TO_POINTER(g_hash_table_size(truth_index)));
    if (!g_hash_table_contains(hypothesis_index, &pair->hypothesis))
      g_hash_table_insert(hypothesis_index, &pair->hypothesis,
                          GINT_TO_POINTER(g_hash_table_size(hypothesis_index)));
    most = MAX(most, *(long *)value);
  }
  int rows = (int)g_hash_table_size(truth_index), cols = (int)g_hash_table_size(hypothesis_index);
  float *cost = g_new(float, (gsize)MAX(rows * cols, 1));
  for (int i = 0; i < rows * cols; i++)
    cost[i] = (float)most;
  g_hash_table_iter_init(&iter, m->co_occurrences);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    id_pair *pair = key;
    int r = GPOINTER_TO_INT(g_hash_table_lookup(truth_index, &pair->truth));
    int c = GPOINTER_TO_INT(g_hash_table_lookup(hypothesis_index, &pair->hypothesis));
    cost[r * cols + c] = (float)(most - *(long *)value);
  }
  /* max_cost = most: every pair allowed, the objective is -sum(shared) */
  int *row_to_col = g_new(int, MAX(rows, 1));
  npu_assignment_solve(&m->assignment, cost, rows, cols, (float)most, row_to_col);
  long shared = 0;
  for (int r = 0; r < rows; r++)
    if (row_to_col[r] >= 0)
      shared += most - (long)cost[r * cols + row_to_col[r]];
  g_free(row_to_col);
  g_free(cost);
  g_hash_table_unref(truth_index);
  g_hash_table_unref(hypothesis_index);
  return shared;
}

mot_summary mot_metrics_summary(mot_metrics *m)
{
  mot_summary s = m->totals;
  s.id_true_positives = id_true_positives(m);
  s.mota = s.truths ? 1.0 - (double)(s.misses + s.false_positives + s.id_switches) / s.truths : 0;
  s.idf1 = s.truths + s.hypotheses
               ? 2.0 * s.id_true_positives / (double)(s.truths + s.hypotheses) : 0;
  return s;
}

mot_summary mot_evaluate_tracker(const mot_scene *scene, const npu_tracker_config *config,
                                 double *seconds_per_frame)
{
  npu_tracker *tracker = npu_tracker_new(config);
  g_assert(tracker);
  mot_metrics *metrics = mot_metrics_new();
  int most = 1;
  for (int f = 0; f < scene->frames; f++)
    most = MAX(most, scene->detection_start[f + 1] - scene->detection_start[f]);
  npu_track_match *matches = g_new(npu_track_match, most);
  mot_hypothesis *hypotheses = g_new(mot_hypothesis, most);
  gint64 busy = 0;
  for (int f = 0; f < scene->frames; f++) {
    const npu_track_detection *detections = &scene->detections[scene->detection_start[f]];
    int count = scene->detection_start[f + 1] - scene->detection_start[f];
    gint64 start = g_get_monotonic_time();
    g_assert(npu_tracker_update(tracker, detections, (size_t)count, matches));
    busy += g_get_monotonic_time() - start;
    /* a tracker's output: its confirmed tracks */
    int n_hypotheses = 0;
    for (int i = 0; i < count; i++)
      if (matches[i].state == NPU_TRACK_CONFIRMED)
        hypotheses[n_hypotheses++] = (mot_hypothesis){matches[i].id, detections[i].box};
    mot_metrics_add_frame(metrics, &scene->truth[scene->truth_start[f]],
                          scene->truth_start[f + 1] - scene->truth_start[f], hypotheses,
                          n_hypotheses);
  }
  if (seconds_per_frame)
    *seconds_per_frame = busy / 1e6 / scene->frames;
  mot_summary summary = mot_metrics_summary(metrics);
  g_free(matches);
  g_free(hypotheses);
  mot_metrics_free(metrics);
  npu_tracker_free(tracker);
  return summary;
}
