/* Line crossings and polygon zones over tracked objects: counts per line
 * and direction, zone entries, exits, occupancy and dwell time. An object
 * is where its box's bottom centre is (its feet on the ground plane).
 * Plain C11, no GStreamer. */
#ifndef NPU_ANALYTICS_ZONES_H
#define NPU_ANALYTICS_ZONES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geometry.h"

/* A counting line from a to b. Forward: from the side where
 * cross(b - a, p - a) > 0 to the other; for a line drawn from top to
 * bottom of the image, left to right. */
typedef struct {
  npu_point a, b;
} npu_line;

typedef struct {
  const npu_point *points; /* a simple polygon's corners, in order */
  size_t count;
} npu_zone;

typedef enum {
  NPU_EVENT_CROSS_FORWARD,
  NPU_EVENT_CROSS_BACKWARD,
  NPU_EVENT_ENTER,
  NPU_EVENT_LEAVE,
} npu_event_kind;

typedef struct {
  npu_event_kind kind;
  size_t index;       /* the line's or the zone's */
  uint64_t object_id;
  int64_t dwell;      /* leave: time inside (the update times' unit); -1 unknown */
} npu_event;

typedef struct {
  uint64_t forward, backward;
} npu_line_counts;

typedef struct {
  uint64_t entered, left;
  size_t occupancy;
} npu_zone_counts;

typedef struct {
  uint64_t id;
  npu_box box;
} npu_tracked_object;

typedef struct npu_analytics npu_analytics;

/* Copies the lines and zones. NULL when memory runs out or a zone has
 * fewer than 3 corners. */
npu_analytics *npu_analytics_new(const npu_line *lines, size_t n_lines, const npu_zone *zones,
                                 size_t n_zones);
void npu_analytics_free(npu_analytics *analytics);

/* One frame's objects at @time (any unit, -1 unknown). The events it
 * caused are then in npu_analytics_events. False when memory runs out. */
bool npu_analytics_update(npu_analytics *analytics, const npu_tracked_object *objects,
                          size_t count, int64_t time);
/* Objects that are gone (ended tracks): they leave the zones they were in
 * (events added to the last update's). */
bool npu_analytics_forget(npu_analytics *analytics, const uint64_t *ids, size_t count,
                          int64_t time);

const npu_event *npu_analytics_events(const npu_analytics *analytics, size_t *count);
const npu_line_counts *npu_analytics_line_counts(const npu_analytics *analytics);
const npu_zone_counts *npu_analytics_zone_counts(const npu_analytics *analytics);

bool npu_point_in_polygon(npu_point p, const npu_point *polygon, size_t count);

#endif
