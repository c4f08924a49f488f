/* The tracker's parts alone: the assignment against brute force on random
 * problems, the Kalman filter on known motion, and the tracker's life
 * cycle (birth, confirmation, ByteTrack's low-score pass, loss, the end
 * reported once, classes kept apart, bad configs refused). */
#include <glib.h>
#include <math.h>

#include "assignment.h"
#include "kalman.h"
#include "tracker.h"

/* The least objective (matched costs + max_cost / 2 per row or column left
 * out) over every matching, by enumeration. */
static double best_by_enumeration(const float *cost, int rows, int cols, float max_cost, int row,
                                  bool *col_used)
{
  if (row == rows) {
    int free_cols = 0;
    for (int c = 0; c < cols; c++)
      free_cols += !col_used[c];
    return free_cols * max_cost / 2.0;
  }
  double best = max_cost / 2.0 + best_by_enumeration(cost, rows, cols, max_cost, row + 1, col_used);
  for (int c = 0; c < cols; c++) {
    float v = cost[row * cols + c];
    if (col_used[c] || v > max_cost)
      continue;
    col_used[c] = true;
    double total = v + best_by_enumeration(cost, rows, cols, max_cost, row + 1, col_used);
    col_used[c] = false;
    if (total < best)
      best = total;
  }
  return best;
}

static double objective(const float *cost, int rows, int cols, float max_cost,
                        const int *row_to_col)
{
  double total = 0;
  int matched = 0;
  bool col_used[8] = {false};
  for (int r = 0; r < rows; r++) {
    if (row_to_col[r] < 0) {
      total += max_cost / 2.0;
      continue;
    }
    g_assert_cmpint(row_to_col[r], <, cols);
    g_assert_false(col_used[row_to_col[r]]);
    col_used[row_to_col[r]] = true;
    float v = cost[r * cols + row_to_col[r]];
    g_assert_cmpfloat(v, <=, max_cost);
    total += v;
    matched++;
  }
  return total + (cols - matched) * max_cost / 2.0;
}

static void test_assignment_is_optimal(void)
{
  GRand *rand = g_rand_new_with_seed(19);
  npu_assignment assignment = {0};
  for (int trial = 0; trial < 2000; trial++) {
    int rows = g_rand_int_range(rand, 1, 7), cols = g_rand_int_range(rand, 1, 7);
    float cost[64];
    /* some problems with ties (costs in tenths), some sparse (many above max_cost) */
    for (int i = 0; i < rows * cols; i++)
      cost[i] = trial % 3 == 0 ? g_rand_int_range(rand, 0, 10) / 10.0f
                               : (float)g_rand_double(rand);
    float max_cost = trial % 2 ? 0.8f : 0.3f;
    int row_to_col[8];
    g_assert_true(npu_assignment_solve(&assignment, cost, rows, cols, max_cost, row_to_col));
    bool col_used[8] = {false};
    double expected = best_by_enumeration(cost, rows, cols, max_cost, 0, col_used);
    g_assert_cmpfloat_with_epsilon(objective(cost, rows, cols, max_cost, row_to_col), expected,
                                   1e-5);
  }
  npu_assignment_clear(&assignment);
  g_rand_free(rand);
}

static void test_assignment_prefers_the_global_optimum(void)
{
  /* greedy would take the 0.1 and leave row 1 with nothing below 0.5 */
  const float cost[] = {0.1f, 0.2f,
                        0.15f, 0.9f};
  int row_to_col[2];
  npu_assignment assignment = {0};
  g_assert_true(npu_assignment_solve(&assignment, cost, 2, 2, 0.5f, row_to_col));
  g_assert_cmpint(row_to_col[0], ==, 1);
  g_assert_cmpint(row_to_col[1], ==, 0);
  /* nothing within reach: nothing matched */
  const float far[] = {0.7f, 0.9f};
  g_assert_true(npu_assignment_solve(&assignment, far, 1, 2, 0.5f, row_to_col));
  g_assert_cmpint(row_to_col[0], ==, -1);
  npu_assignment_clear(&assignment);
}

static void test_kalman_learns_velocity(void)
{
  npu_box_filter filter;
  npu_box box = {100, 50, 40, 80};
  npu_box_filter_init(&filter, &box);
  for (int frame = 1; frame <= 30; frame++) {
    npu_box_filter_predict(&filter);
    box.x += 3;
    box.y -= 1;
    npu_box_filter_update(&filter, &box);
  }
  g_assert_cmpfloat_with_epsilon(filter.axis[0].velocity, 3, 0.05);
  g_assert_cmpfloat_with_epsilon(filter.axis[1].velocity, -1, 0.05);
  /* coasting: the prediction follows the motion without measurements */
  for (int frame = 0; frame < 5; frame++)
    npu_box_filter_predict(&filter);
  npu_box predicted = npu_box_filter_box(&filter);
  g_assert_cmpfloat_with_epsilon(predicted.x, box.x + 15, 1.0);
  g_assert_cmpfloat_with_epsilon(predicted.y, box.y - 5, 1.0);
  g_assert_cmpfloat_with_epsilon(predicted.w, 40, 0.5);
  g_assert_cmpfloat_with_epsilon(predicted.h, 80, 0.5);
}

static void test_kalman_size_stays_positive(void)
{
  npu_box_filter filter;
  npu_box box = {0, 0, 40, 40};
  npu_box_filter_init(&filter, &box);
  for (int frame = 0; frame < 10; frame++) {
    npu_box_filter_predict(&filter);
    box.w -= 4;
    box.h -= 4;
    npu_box_filter_update(&filter, &box);
  }
  for (int frame = 0; frame < 50; frame++) {
    npu_box_filter_predict(&filter);
    npu_box predicted = npu_box_filter_box(&filter);
    g_assert_cmpfloat(predicted.w, >, 0);
    g_assert_cmpfloat(predicted.h, >, 0);
  }
}

static npu_tracker *default_tracker(void)
{
  npu_tracker_config config;
  npu_tracker_config_default(&config);
  config.max_age = 5;
  npu_tracker *tracker = npu_tracker_new(&config);
  g_assert_nonnull(tracker);
  return tracker;
}

static void step(npu_tracker *tracker, const npu_track_detection *detections, size_t count,
                 npu_track_match *matches)
{
  g_assert_true(npu_tracker_update(tracker, detections, count, matches));
}

static void test_tracker_life_cycle(void)
{
  npu_tracker *tracker = default_tracker();
  npu_track_detection d = {{100, 100, 50, 50}, 0.9f, 0};
  npu_track_match m;
  for (int frame = 0; frame < 10; frame++) {
    step(tracker, &d, 1, &m);
    g_assert_cmpuint(m.id, ==, 1);
    g_assert_cmpint(m.state, ==, frame < 2 ? NPU_TRACK_TENTATIVE : NPU_TRACK_CONFIRMED);
    g_assert_cmpint(m.hits, ==, frame + 1);
    g_assert_cmpint(m.age, ==, frame);
    d.box.x += 5;
  }
  /* gone: kept, lost, for max_age frames; the end reported once, after them */
  size_t ended;
  for (int frame = 0; frame < 5; frame++) {
    step(tracker, NULL, 0, NULL);
    npu_tracker_ended(tracker, &ended);
    g_assert_cmpuint(ended, ==, 0);
    g_assert_cmpuint(npu_tracker_live_tracks(tracker), ==, 1);
  }
  step(tracker, NULL, 0, NULL);
  const npu_track_end *end = npu_tracker_ended(tracker, &ended);
  g_assert_cmpuint(ended, ==, 1);
  g_assert_cmpuint(end->id, ==, 1);
  g_assert_cmpint(end->hits, ==, 10);
  /* it kept moving while lost: 6 frames on from x = 145 */
  g_assert_cmpfloat_with_epsilon(end->box.x, 145 + 6 * 5, 3);
  g_assert_cmpuint(npu_tracker_live_tracks(tracker), ==, 0);
  step(tracker, NULL, 0, NULL);
  npu_tracker_ended(tracker, &ended);
  g_assert_cmpuint(ended, ==, 0);
  npu_tracker_free(tracker);
}

static void test_tracker_recovers_after_occlusion(void)
{
  npu_tracker *tracker = default_tracker();
  npu_track_detection d = {{100, 100, 50, 50}, 0.9f, 0};
  npu_track_match m;
  for (int frame = 0; frame < 10; frame++, d.box.x += 4)
    step(tracker, &d, 1, &m);
  for (int frame = 0; frame < 4; frame++, d.box.x += 4)
    step(tracker, NULL, 0, NULL);
  step(tracker, &d, 1, &m);
  g_assert_cmpuint(m.id, ==, 1);
  g_assert_cmpint(m.state, ==, NPU_TRACK_CONFIRMED);
  npu_tracker_free(tracker);
}

static void test_tracker_low_score_second_pass(void)
{
  npu_tracker *tracker = default_tracker();
  npu_track_detection d = {{100, 100, 50, 50}, 0.9f, 0};
  npu_track_match m;
  for (int frame = 0; frame < 5; frame++)
    step(tracker, &d, 1, &m);
  /* partly hidden: the score drops below high-score, the track holds it */
  d.score = 0.3f;
  step(tracker, &d, 1, &m);
  g_assert_cmpuint(m.id, ==, 1);
  g_assert_cmpint(m.state, ==, NPU_TRACK_CONFIRMED);
  /* a low-score detection elsewhere starts nothing */
  npu_track_detection clutter = {{600, 400, 30, 30}, 0.3f, 0};
  step(tracker, &clutter, 1, &m);
  g_assert_cmpuint(m.id, ==, 0);
  /* below low-score: ignored even where the track is */
  d.score = 0.05f;
  step(tracker, &d, 1, &m);
  g_assert_cmpuint(m.id, ==, 0);
  npu_tracker_free(tracker);
}

static void test_tracker_drops_unconfirmed_silently(void)
{
  npu_tracker *tracker = default_tracker();
  npu_track_detection d = {{100, 100, 50, 50}, 0.9f, 0};
  npu_track_match m;
  step(tracker, &d, 1, &m);
  g_assert_cmpuint(m.id, ==, 1);
  step(tracker, NULL, 0, NULL);
  size_t ended;
  npu_tracker_ended(tracker, &ended);
  g_assert_cmpuint(ended, ==, 0);
  g_assert_cmpuint(npu_tracker_live_tracks(tracker), ==, 0);
  step(tracker, &d, 1, &m);
  g_assert_cmpuint(m.id, ==, 2);
  npu_tracker_free(tracker);
}

static void test_tracker_keeps_classes_apart(void)
{
  npu_tracker *tracker = default_tracker();
  npu_track_detection d[2] = {{{100, 100, 50, 50}, 0.9f, 0}, {{400, 100, 50, 50}, 0.9f, 1}};
  npu_track_match m[2];
  for (int frame = 0; frame < 4; frame++)
    step(tracker, d, 2, m);
  g_assert_cmpuint(m[0].id, ==, 1);
  g_assert_cmpuint(m[1].id, ==, 2);
  /* a class-1 box where the class-0 track is: a new track, not a match */
  npu_track_detection other = {{100, 100, 50, 50}, 0.9f, 1};
  step(tracker, &other, 1, m);
  g_assert_cmpuint(m[0].id, ==, 3);
  npu_tracker_free(tracker);
}

static void test_tracker_refuses_bad_config(void)
{
  npu_tracker_config config;
  npu_tracker_config_default(&config);
  config.low_score = 0.7f;
  g_assert_null(npu_tracker_new(&config));
  npu_tracker_config_default(&config);
  config.iou_threshold = 1.5f;
  g_assert_null(npu_tracker_new(&config));
  npu_tracker_config_default(&config);
  config.min_hits = 0;
  g_assert_null(npu_tracker_new(&config));
  npu_tracker_config_default(&config);
  config.high_score = NAN;
  g_assert_null(npu_tracker_new(&config));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/assignment/optimal", test_assignment_is_optimal);
  g_test_add_func("/assignment/global", test_assignment_prefers_the_global_optimum);
  g_test_add_func("/kalman/velocity", test_kalman_learns_velocity);
  g_test_add_func("/kalman/size", test_kalman_size_stays_positive);
  g_test_add_func("/tracker/life-cycle", test_tracker_life_cycle);
  g_test_add_func("/tracker/occlusion", test_tracker_recovers_after_occlusion);
  g_test_add_func("/tracker/low-score", test_tracker_low_score_second_pass);
  g_test_add_func("/tracker/unconfirmed", test_tracker_drops_unconfirmed_silently);
  g_test_add_func("/tracker/classes", test_tracker_keeps_classes_apart);
  g_test_add_func("/tracker/bad-config", test_tracker_refuses_bad_config);
  return g_test_run();
}
