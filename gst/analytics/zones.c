#include "zones.h"

#include <stdlib.h>
#include <string.h>

#include "growable.h"

/* What is known of one object: where it stood last and since when it is in
 * each zone (-2: outside). */
typedef struct {
  uint64_t id;
  npu_point last;
  int64_t *entered_at; /* per zone */
} object_state;

struct npu_analytics {
  npu_line *lines;
  size_t n_lines;
  npu_point *corners;
  npu_zone *zones;
  size_t n_zones;
  npu_line_counts *line_counts;
  npu_zone_counts *zone_counts;
  object_state *objects;
  size_t n_objects, objects_capacity;
  int64_t *entered_at; /* objects_capacity x n_zones */
  npu_event *events;
  size_t n_events, events_capacity;
};

#define OUTSIDE (-2)

npu_analytics *npu_analytics_new(const npu_line *lines, size_t n_lines, const npu_zone *zones,
                                 size_t n_zones)
{
  size_t n_corners = 0;
  for (size_t z = 0; z < n_zones; z++) {
    if (zones[z].count < 3)
      return NULL;
    n_corners += zones[z].count;
  }
  npu_analytics *a = calloc(1, sizeof *a);
  if (!a)
    return NULL;
  a->n_lines = n_lines;
  a->n_zones = n_zones;
  a->lines = calloc(n_lines + 1, sizeof *a->lines);
  a->line_counts = calloc(n_lines + 1, sizeof *a->line_counts);
  a->zones = calloc(n_zones + 1, sizeof *a->zones);
  a->zone_counts = calloc(n_zones + 1, sizeof *a->zone_counts);
  a->corners = calloc(n_corners + 1, sizeof *a->corners);
  if (!a->lines || !a->line_counts || !a->zones || !a->zone_counts || !a->corners) {
    npu_analytics_free(a);
    return NULL;
  }
  if (n_lines > 0) /* lines may be NULL then */
    memcpy(a->lines, lines, n_lines * sizeof *lines);
  npu_point *corner = a->corners;
  for (size_t z = 0; z < n_zones; z++) {
    memcpy(corner, zones[z].points, zones[z].count * sizeof *corner);
    a->zones[z] = (npu_zone){corner, zones[z].count};
    corner += zones[z].count;
  }
  return a;
}

void npu_analytics_free(npu_analytics *a)
{
  if (!a)
    return;
  free(a->lines);
  free(a->line_counts);
  free(a->zones);
  free(a->zone_counts);
  free(a->corners);
  free(a->objects);
  free(a->entered_at);
  free(a->events);
  free(a);
}

bool npu_point_in_polygon(npu_point p, const npu_point *polygon, size_t count)
{
  /* even-odd rule: a ray to the right crosses the border an odd number of times */
  bool inside = false;
  for (size_t i = 0, j = count - 1; i < count; j = i++) {
    npu_point u = polygon[i], v = polygon[j];
    if ((u.y > p.y) != (v.y > p.y) && p.x < (v.x - u.x) * (p.y - u.y) / (v.y - u.y) + u.x)
      inside = !inside;
  }
  return inside;
}

static float cross(npu_point o, npu_point a, npu_point b)
{
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

/* +1 forward, -1 backward, 0 no crossing of the segment. A point on the
 * line counts as on its backward side, so that an object stepping onto
 * the line and back does not count twice. */
static int crossing(const npu_line *line, npu_point from, npu_point to)
{
  float side_from = cross(line->a, line->b, from), side_to = cross(line->a, line->b, to);
  bool was_ahead = side_from > 0, is_ahead = side_to > 0;
  if (was_ahead == is_ahead)
    return 0;
  /* the step's line separates the ends of the counting line: they cross */
  float end_a = cross(from, to, line->a), end_b = cross(from, to, line->b);
  if ((end_a > 0 && end_b > 0) || (end_a < 0 && end_b < 0))
    return 0;
  return was_ahead ? 1 : -1;
}

static bool push_event(npu_analytics *a, npu_event event)
{
  if (!npu_reserve((void **)&a->events, &a->events_capacity, a->n_events + 1, sizeof event))
    return false;
  a->events[a->n_events++] = event;
  return true;
}

static object_state *find_object(npu_analytics *a, uint64_t id)
{
  for (size_t i = 0; i < a->n_objects; i++)
    if (a->objects[i].id == id)
      return &a->objects[i];
  return NULL;
}

static bool reserve_objects(npu_analytics *a, size_t count)
{
  if (count <= a->objects_capacity)
    return true;
  size_t grown = count < 2 * a->objects_capacity ? 2 * a->objects_capacity : count;
  object_state *objects = realloc(a->objects, grown * sizeof *objects);
  if (!objects)
    return false;
  a->objects = objects;
  int64_t *entered_at = realloc(a->entered_at, grown * (a->n_zones + 1) * sizeof *entered_at);
  if (!entered_at)
    return false;
  a->entered_at = entered_at;
  a->objects_capacity = grown;
  /* the zone rows moved with the block */
  for (size_t i = 0; i < a->n_objects; i++)
    a->objects[i].entered_at = a->entered_at + i * a->n_zones;
  return true;
}

static npu_point anchor_of(const npu_box *box)
{
  return (npu_point){box->x + box->w / 2, box->y + box->h};
}

static bool leave_zone(npu_analytics *a, object_state *o, size_t z, int64_t time)
{
  int64_t since = o->entered_at[z];
  o->entered_at[z] = OUTSIDE;
  a->zone_counts[z].left++;
  a->zone_counts[z].occupancy--;
  int64_t dwell = since >= 0 && time >= 0 ? time - since : -1;
  return push_event(a, (npu_event){NPU_EVENT_LEAVE, z, o->id, dwell});
}

static bool update_zones(npu_analytics *a, object_state *o, npu_point at, int64_t time)
{
  for (size_t z = 0; z < a->n_zones; z++) {
    bool inside = npu_point_in_polygon(at, a->zones[z].points, a->zones[z].count);
    bool was_inside = o->entered_at[z] != OUTSIDE;
    if (inside && !was_inside) {
      /* -1: entered at an unknown time */
      o->entered_at[z] = time >= 0 ? time : -1;
      a->zone_counts[z].entered++;
      a->zone_counts[z].occupancy++;
      if (!push_event(a, (npu_event){NPU_EVENT_ENTER, z, o->id, -1}))
        return false;
    } else if (!inside && was_inside && !leave_zone(a, o, z, time)) {
      return false;
    }
  }
  return true;
}

bool npu_analytics_update(npu_analytics *a, const npu_tracked_object *objects, size_t count,
                          int64_t time)
{
  a->n_events = 0;
  if (!reserve_objects(a, a->n_objects + count))
    return false;
  for (size_t i = 0; i < count; i++) {
    npu_point at = anchor_of(&objects[i].box);
    object_state *o = find_object(a, objects[i].id);
    if (!o) {
      o = &a->objects[a->n_objects];
      *o = (object_state){objects[i].id, at, a->entered_at + a->n_objects * a->n_zones};
      for (size_t z = 0; z < a->n_zones; z++)
        o->entered_at[z] = OUTSIDE;
      a->n_objects++;
    } else {
      for (size_t l = 0; l < a->n_lines; l++) {
        int direction = crossing(&a->lines[l], o->last, at);
        if (direction == 0)
          continue;
        if (direction > 0)
          a->line_counts[l].forward++;
        else
          a->line_counts[l].backward++;
        npu_event_kind kind = direction > 0 ? NPU_EVENT_CROSS_FORWARD : NPU_EVENT_CROSS_BACKWARD;
        if (!push_event(a, (npu_event){kind, l, o->id, -1}))
          return false;
      }
    }
    o->last = at;
    if (!update_zones(a, o, at, time))
      return false;
  }
  return true;
}

bool npu_analytics_forget(npu_analytics *a, const uint64_t *ids, size_t count, int64_t time)
{
  for (size_t k = 0; k < count; k++) {
    object_state *o = find_object(a, ids[k]);
    if (!o)
      continue;
    for (size_t z = 0; z < a->n_zones; z++)
      if (o->entered_at[z] != OUTSIDE && !leave_zone(a, o, z, time))
        return false;
    /* the last object takes its place, with its zone row */
    size_t last = a->n_objects - 1;
    memcpy(o->entered_at, a->objects[last].entered_at, a->n_zones * sizeof *o->entered_at);
    int64_t *row = o->entered_at;
    *o = a->objects[last];
    o->entered_at = row;
    a->n_objects--;
  }
  return true;
}

const npu_event *npu_analytics_events(const npu_analytics *a, size_t *count)
{
  *count = a->n_events;
  return a->events;
}

const npu_line_counts *npu_analytics_line_counts(const npu_analytics *a)
{
  return a->line_counts;
}

const npu_zone_counts *npu_analytics_zone_counts(const npu_analytics *a)
{
  return a->zone_counts;
}
