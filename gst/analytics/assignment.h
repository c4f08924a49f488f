/* Optimal assignment: rows (tracks) to columns (detections) at the least
 * total cost, shortest augmenting paths with potentials (the
 * Jonker-Volgenant form of the Hungarian method). Plain C11, no GStreamer. */
#ifndef NPU_ANALYTICS_ASSIGNMENT_H
#define NPU_ANALYTICS_ASSIGNMENT_H

#include <stdbool.h>
#include <stddef.h>

/* Scratch memory kept between calls (zero-initialise it; steady-state
 * calls of similar sizes allocate nothing). */
typedef struct {
  double *square;
  size_t square_capacity;
  int *ints;
  size_t ints_capacity;
  double *doubles;
  size_t doubles_capacity;
} npu_assignment;

/* cost: rows x cols, row-major. A pair costing more than max_cost is never
 * made, and rows or columns may stay unassigned: the matching minimises the
 * matched cost plus max_cost / 2 for each row and each column left out, so
 * a pair is worth making when it costs less than max_cost (lapjv's
 * cost_limit). row_to_col[r]: the column of row r, or -1. Independent groups of rows and columns (no pair within
 * max_cost between them) are solved apart, so scattered objects cost
 * little. Returns false when memory runs out. */
bool npu_assignment_solve(npu_assignment *assignment, const float *cost, int rows, int cols,
                          float max_cost, int *row_to_col);

/* Makes room for problems of up to rows x cols, so that solving them cannot
 * fail. False when memory runs out. */
bool npu_assignment_reserve(npu_assignment *assignment, int rows, int cols);

void npu_assignment_clear(npu_assignment *assignment);

#endif
