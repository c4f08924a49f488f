/* DBNet text-region extraction (PP-OCR det post-processing): binarise the
 * probability map, label 8-connected components, fit each one's minimum-area
 * rotated rectangle (convex hull + rotating calipers), score it, and expand
 * it by the unclip offset area * ratio / perimeter. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_hal.h"

typedef struct point {
  float x, y;
} point;

typedef struct rotated_rect {
  point center;
  point axis_u, axis_v; /* unit vectors along the sides */
  float width, height;  /* extents along axis_u and axis_v */
} rotated_rect;

/* Working memory for one call, sized by the map height. */
typedef struct workspace {
  int32_t *row_min, *row_max; /* per-row x extent of the current component */
  point *points, *hull;
} workspace;

typedef struct component {
  size_t pixels;
  double probability_sum;
  uint32_t y_min, y_max;
} component;

static void flood_component(const float *probability, uint32_t width, uint32_t height,
                            float threshold, uint32_t start, int32_t label, int32_t *labels,
                            int32_t *queue, workspace *ws, component *c)
{
  size_t head = 0, tail = 0;
  queue[tail++] = (int32_t)start;
  labels[start] = label;
  *c = (component){.y_min = start / width, .y_max = start / width};
  while (head < tail) {
    uint32_t index = (uint32_t)queue[head++];
    uint32_t x = index % width, y = index / width;
    c->pixels++;
    c->probability_sum += probability[index];
    if (y < c->y_min)
      c->y_min = y;
    if (y > c->y_max)
      c->y_max = y;
    if ((int32_t)x < ws->row_min[y])
      ws->row_min[y] = (int32_t)x;
    if ((int32_t)x > ws->row_max[y])
      ws->row_max[y] = (int32_t)x;
    for (int dy = -1; dy <= 1; dy++) {
      for (int dx = -1; dx <= 1; dx++) {
        int64_t nx = (int64_t)x + dx, ny = (int64_t)y + dy;
        if (nx < 0 || ny < 0 || nx >= width || ny >= height)
          continue;
        uint32_t neighbour = (uint32_t)ny * width + (uint32_t)nx;
        if (labels[neighbour] == 0 && probability[neighbour] > threshold) {
          labels[neighbour] = label;
          queue[tail++] = (int32_t)neighbour;
        }
      }
    }
  }
}

static int by_x_then_y(const void *a, const void *b)
{
  const point *p = a, *q = b;
  if (p->x != q->x)
    return (p->x > q->x) - (p->x < q->x);
  return (p->y > q->y) - (p->y < q->y);
}

static float cross(point o, point a, point b)
{
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

/* Andrew's monotone chain; returns the hull size (counter-clockwise). */
static size_t convex_hull(point *points, size_t n, point *hull)
{
  qsort(points, n, sizeof *points, by_x_then_y);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], points[i]) <= 0)
      k--;
    hull[k++] = points[i];
  }
  for (size_t i = n - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && cross(hull[k - 2], hull[k - 1], points[i]) <= 0)
      k--;
    hull[k++] = points[i];
  }
  return k - 1; /* the last point repeats the first */
}

/* Rotating calipers: the minimum-area rectangle has a side on a hull edge. */
static rotated_rect min_area_rect(const point *hull, size_t n)
{
  rotated_rect best = {0};
  float best_area = INFINITY;
  for (size_t i = 0; i < n; i++) {
    point a = hull[i], b = hull[(i + 1) % n];
    float length = hypotf(b.x - a.x, b.y - a.y);
    if (length == 0)
      continue;
    point u = {(b.x - a.x) / length, (b.y - a.y) / length};
    point v = {-u.y, u.x};
    float u_min = INFINITY, u_max = -INFINITY, v_min = INFINITY, v_max = -INFINITY;
    for (size_t j = 0; j < n; j++) {
      float pu = (hull[j].x - a.x) * u.x + (hull[j].y - a.y) * u.y;
      float pv = (hull[j].x - a.x) * v.x + (hull[j].y - a.y) * v.y;
      u_min = fminf(u_min, pu);
      u_max = fmaxf(u_max, pu);
      v_min = fminf(v_min, pv);
      v_max = fmaxf(v_max, pv);
    }
    float area = (u_max - u_min) * (v_max - v_min);
    if (area < best_area) {
      best_area = area;
      float cu = (u_min + u_max) / 2, cv = (v_min + v_max) / 2;
      best = (rotated_rect){{a.x + u.x * cu + v.x * cv, a.y + u.y * cu + v.y * cv},
                            u, v, u_max - u_min, v_max - v_min};
    }
  }
  return best;
}

/* Corners clockwise on screen (y down), starting at the top-left one. */
static void rect_corners(const rotated_rect *r, float corners[4][2])
{
  static const float signs[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  point p[4];
  for (int i = 0; i < 4; i++) {
    float su = signs[i][0] * r->width / 2, sv = signs[i][1] * r->height / 2;
    p[i] = (point){r->center.x + r->axis_u.x * su + r->axis_v.x * sv,
                   r->center.y + r->axis_u.y * su + r->axis_v.y * sv};
  }
  /* These four go round in one direction; make it clockwise on screen. */
  if (cross(p[0], p[1], p[2]) < 0) {
    point t = p[1];
    p[1] = p[3];
    p[3] = t;
  }
  int first = 0;
  for (int i = 1; i < 4; i++)
    if (p[i].x + p[i].y < p[first].x + p[first].y)
      first = i;
  for (int i = 0; i < 4; i++) {
    corners[i][0] = p[(first + i) % 4].x;
    corners[i][1] = p[(first + i) % 4].y;
  }
}

static void region_from_rect(const rotated_rect *r, float score, uint32_t width, uint32_t height,
                             npu_text_region *region)
{
  rect_corners(r, region->corners);
  region->x0 = region->y0 = INFINITY;
  region->x1 = region->y1 = -INFINITY;
  for (int i = 0; i < 4; i++) {
    region->x0 = fminf(region->x0, region->corners[i][0]);
    region->x1 = fmaxf(region->x1, region->corners[i][0]);
    region->y0 = fminf(region->y0, region->corners[i][1]);
    region->y1 = fmaxf(region->y1, region->corners[i][1]);
  }
  region->x0 = fmaxf(region->x0, 0);
  region->y0 = fmaxf(region->y0, 0);
  region->x1 = fminf(region->x1, (float)width);
  region->y1 = fminf(region->y1, (float)height);
  region->score = score;
}

static npu_status check_params(const float *probability, uint32_t width, uint32_t height,
                               const npu_dbnet_params *params, const int32_t *scratch,
                               size_t capacity, const npu_text_region *out, const size_t *count)
{
  if (!probability || !params || !scratch || !count || (capacity && !out) || width == 0 ||
      height == 0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_dbnet_regions: NULL argument or empty %ux%u map", width, height);
  if ((uint64_t)width * height > INT32_MAX)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_dbnet_regions: %ux%u map too large",
                         width, height);
  if (!(params->unclip_ratio >= 0) || !(params->threshold >= 0) || !(params->threshold < 1))
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_dbnet_regions: threshold must be in [0, 1), unclip_ratio >= 0");
  return NPU_OK;
}

NPU_API npu_status npu_dbnet_regions(const float *probability, uint32_t width, uint32_t height,
                                     const npu_dbnet_params *params, int32_t *scratch,
                                     npu_text_region *out, size_t capacity, size_t *count)
{
  npu_status status = check_params(probability, width, height, params, scratch, capacity, out,
                                   count);
  if (status != NPU_OK)
    return status;
  workspace ws = {malloc(height * sizeof(int32_t)), malloc(height * sizeof(int32_t)),
                  malloc(4 * (size_t)height * sizeof(point)),
                  malloc((4 * (size_t)height + 1) * sizeof(point))};
  if (!ws.row_min || !ws.row_max || !ws.points || !ws.hull) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "npu_dbnet_regions: out of host memory");
    goto done;
  }
  for (uint32_t y = 0; y < height; y++) {
    ws.row_min[y] = INT32_MAX;
    ws.row_max[y] = -1;
  }
  int32_t *labels = scratch, *queue = scratch + (size_t)width * height;
  memset(labels, 0, (size_t)width * height * sizeof *labels);
  *count = 0;
  int32_t next_label = 1;

  for (uint32_t start = 0; start < width * height; start++) {
    if (labels[start] != 0 || !(probability[start] > params->threshold))
      continue;
    component c;
    flood_component(probability, width, height, params->threshold, start, next_label++, labels,
                    queue, &ws, &c);
    /* Hull of the component's pixel squares: each row's outer corners suffice. */
    size_t n = 0;
    for (uint32_t y = c.y_min; y <= c.y_max; y++) {
      float left = (float)ws.row_min[y], right = (float)ws.row_max[y] + 1;
      ws.points[n++] = (point){left, (float)y};
      ws.points[n++] = (point){right, (float)y};
      ws.points[n++] = (point){left, (float)y + 1};
      ws.points[n++] = (point){right, (float)y + 1};
      ws.row_min[y] = INT32_MAX;
      ws.row_max[y] = -1;
    }
    size_t hull_size = convex_hull(ws.points, n, ws.hull);
    rotated_rect rect = min_area_rect(ws.hull, hull_size);
    float score = (float)(c.probability_sum / (double)c.pixels);
    if (fminf(rect.width, rect.height) < (float)params->min_size || score < params->box_threshold)
      continue;
    float area = rect.width * rect.height, perimeter = 2 * (rect.width + rect.height);
    float offset = area * params->unclip_ratio / perimeter;
    rect.width += 2 * offset;
    rect.height += 2 * offset;
    if (fminf(rect.width, rect.height) < (float)params->min_size + 2)
      continue;
    if (*count < capacity)
      region_from_rect(&rect, score, width, height, &out[*count]);
    (*count)++;
  }
done:
  free(ws.row_min);
  free(ws.row_max);
  free(ws.points);
  free(ws.hull);
  return status;
}
