#include "assignment.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "growable.h"

static int find_root(int *parent, int i)
{
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

/* Square n x n minimum-cost perfect matching; a is 1-indexed ((n+1) x
 * (n+1), row and column 0 unused). col_row[j]: the row matched to column
 * j. Scratch: ints 2 (n+1), doubles 3 (n+1). */
static void solve_square(const double *a, int n, int *col_row, int *way, double *u, double *v,
                         double *min_slack, bool *used)
{
  size_t stride = (size_t)n + 1;
  for (int j = 0; j <= n; j++) {
    u[j] = v[j] = 0;
    col_row[j] = 0;
  }
  for (int i = 1; i <= n; i++) {
    /* grow a tree of alternating paths from row i until it reaches a free
     * column, keeping reduced costs non-negative through the potentials */
    col_row[0] = i;
    int j0 = 0;
    for (int j = 0; j <= n; j++) {
      min_slack[j] = DBL_MAX;
      used[j] = false;
    }
    do {
      used[j0] = true;
      int i0 = col_row[j0], j1 = 0;
      double delta = DBL_MAX;
      for (int j = 1; j <= n; j++) {
        if (used[j])
          continue;
        double slack = a[(size_t)i0 * stride + j] - u[i0] - v[j];
        if (slack < min_slack[j]) {
          min_slack[j] = slack;
          way[j] = j0;
        }
        if (min_slack[j] < delta) {
          delta = min_slack[j];
          j1 = j;
        }
      }
      for (int j = 0; j <= n; j++) {
        if (used[j]) {
          u[col_row[j]] += delta;
          v[j] -= delta;
        } else {
          min_slack[j] -= delta;
        }
      }
      j0 = j1;
    } while (col_row[j0] != 0);
    /* flip the path */
    do {
      int j1 = way[j0];
      col_row[j0] = col_row[j1];
      j0 = j1;
    } while (j0 != 0);
  }
}

/* One group of rows and columns: the square problem with a dummy column per
 * row and a dummy row per column, each pairing costing max_cost / 2 (the
 * price of leaving that row or column out), dummies pairing free. */
static void solve_group(npu_assignment *s, const float *cost, int cols, const int *group_rows,
                        int n_rows, const int *group_cols, int n_cols, float max_cost,
                        int *row_to_col)
{
  int n = n_rows + n_cols;
  size_t stride = (size_t)n + 1;
  double half = max_cost / 2.0, infeasible = 2.0 * n * (double)max_cost + 1.0;
  for (int i = 1; i <= n; i++) {
    double *row = &s->square[(size_t)i * stride];
    for (int j = 1; j <= n; j++) {
      bool real_row = i <= n_rows, real_col = j <= n_cols;
      if (real_row && real_col) {
        float c = cost[(size_t)group_rows[i - 1] * cols + group_cols[j - 1]];
        row[j] = c <= max_cost ? c : infeasible;
      } else {
        row[j] = real_row || real_col ? half : 0;
      }
    }
  }
  /* the scratch in front of the grouping arrays (see npu_assignment_solve) */
  int *col_row = s->ints, *way = s->ints + stride;
  bool *used = (bool *)(s->ints + 2 * stride);
  double *u = s->doubles, *v = s->doubles + stride, *min_slack = s->doubles + 2 * stride;
  solve_square(s->square, n, col_row, way, u, v, min_slack, used);
  for (int j = 1; j <= n_cols; j++) {
    int i = col_row[j];
    if (i >= 1 && i <= n_rows &&
        cost[(size_t)group_rows[i - 1] * cols + group_cols[j - 1]] <= max_cost)
      row_to_col[group_rows[i - 1]] = group_cols[j - 1];
  }
}

bool npu_assignment_reserve(npu_assignment *s, int rows, int cols)
{
  size_t nodes = (size_t)(rows > 0 ? rows : 0) + (size_t)(cols > 0 ? cols : 0);
  size_t square_side = nodes + 1;
  /* one square's scratch (3 sides), then the grouping arrays (parent, members) */
  return npu_reserve((void **)&s->ints, &s->ints_capacity, 3 * square_side + 2 * nodes,
                     sizeof(int)) &&
         npu_reserve((void **)&s->doubles, &s->doubles_capacity, 3 * square_side,
                     sizeof(double)) &&
         npu_reserve((void **)&s->square, &s->square_capacity, square_side * square_side,
                 sizeof(double));
}

bool npu_assignment_solve(npu_assignment *s, const float *cost, int rows, int cols, float max_cost,
                          int *row_to_col)
{
  for (int r = 0; r < rows; r++)
    row_to_col[r] = -1;
  if (rows <= 0 || cols <= 0)
    return true;
  if (!npu_assignment_reserve(s, rows, cols))
    return false;
  size_t nodes = (size_t)rows + cols, square_side = nodes + 1;
  int *parent = s->ints + 3 * square_side, *members = parent + nodes;
  for (size_t i = 0; i < nodes; i++)
    parent[i] = (int)i;
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++)
      if (cost[(size_t)r * cols + c] <= max_cost) {
        int a = find_root(parent, r), b = find_root(parent, rows + c);
        if (a != b)
          parent[a] = b;
      }
  for (size_t i = 0; i < nodes; i++)
    parent[i] = find_root(parent, (int)i);
  /* each group in turn: its rows, then its columns */
  for (size_t root = 0; root < nodes; root++) {
    if (parent[root] != (int)root)
      continue;
    int n_rows = 0, n_cols = 0;
    for (int r = 0; r < rows; r++)
      if (parent[r] == (int)root)
        members[n_rows++] = r;
    for (int c = 0; c < cols; c++)
      if (parent[rows + c] == (int)root)
        members[n_rows + n_cols++] = c;
    if (n_rows == 0 || n_cols == 0)
      continue;
    if (n_rows == 1 && n_cols == 1) {
      row_to_col[members[0]] = members[1];
      continue;
    }
    solve_group(s, cost, cols, members, n_rows, members + n_rows, n_cols, max_cost, row_to_col);
  }
  return true;
}

void npu_assignment_clear(npu_assignment *s)
{
  free(s->square);
  free(s->ints);
  free(s->doubles);
  memset(s, 0, sizeof *s);
}
