#include "gstnpuoverlaytrails.h"

/* One object's trail. */
typedef struct {
  GArray *points;   /* GstNpuOverlayPoint, oldest first */
  guint64 seen_on;  /* the stream's frame number it was last seen on */
} Trail;

/* One stream's trails by object id. */
typedef struct {
  GHashTable *trails; /* guint64 * -> Trail * */
  guint64 frame;      /* frames seen */
} StreamTrails;

struct _GstNpuOverlayTrails {
  GHashTable *streams; /* GINT_TO_POINTER (stream) -> StreamTrails * */
};

static void trail_free(gpointer data)
{
  Trail *trail = data;
  g_array_unref(trail->points);
  g_free(trail);
}

static void stream_trails_free(gpointer data)
{
  StreamTrails *stream = data;
  g_hash_table_unref(stream->trails);
  g_free(stream);
}

GstNpuOverlayTrails *gst_npu_overlay_trails_new(void)
{
  GstNpuOverlayTrails *trails = g_new0(GstNpuOverlayTrails, 1);
  trails->streams = g_hash_table_new_full(NULL, NULL, NULL, stream_trails_free);
  return trails;
}

void gst_npu_overlay_trails_free(GstNpuOverlayTrails *trails)
{
  if (!trails)
    return;
  g_hash_table_unref(trails->streams);
  g_free(trails);
}

void gst_npu_overlay_trails_clear(GstNpuOverlayTrails *trails)
{
  g_hash_table_remove_all(trails->streams);
}

static StreamTrails *stream_of(GstNpuOverlayTrails *trails, gint stream)
{
  StreamTrails *s = g_hash_table_lookup(trails->streams, GINT_TO_POINTER(stream));
  if (!s) {
    s = g_new0(StreamTrails, 1);
    s->trails = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, trail_free);
    g_hash_table_insert(trails->streams, GINT_TO_POINTER(stream), s);
  }
  return s;
}

void gst_npu_overlay_trails_update(GstNpuOverlayTrails *trails, gint stream,
                                   const GstNpuOverlaySighting *seen, guint n_seen,
                                   const guint64 *ended, guint n_ended, guint length)
{
  StreamTrails *s = stream_of(trails, stream);
  s->frame++;
  for (guint i = 0; i < n_seen; i++) {
    Trail *trail = g_hash_table_lookup(s->trails, &seen[i].id);
    if (!trail) {
      trail = g_new0(Trail, 1);
      trail->points = g_array_new(FALSE, FALSE, sizeof(GstNpuOverlayPoint));
      g_hash_table_insert(s->trails, g_memdup2(&seen[i].id, sizeof seen[i].id), trail);
    }
    g_array_append_val(trail->points, seen[i].at);
    trail->seen_on = s->frame;
  }
  for (guint i = 0; i < n_ended; i++)
    g_hash_table_remove(s->trails, &ended[i]);
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init(&iter, s->trails);
  while (g_hash_table_iter_next(&iter, NULL, &value)) {
    Trail *trail = value;
    if (s->frame - trail->seen_on >= length) {
      g_hash_table_iter_remove(&iter);
    } else if (trail->points->len > length) {
      g_array_remove_range(trail->points, 0, trail->points->len - length);
    }
  }
}

void gst_npu_overlay_trails_foreach(GstNpuOverlayTrails *trails, gint stream,
                                    GstNpuOverlayTrailVisit visit, gpointer data)
{
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init(&iter, stream_of(trails, stream)->trails);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    const Trail *trail = value;
    visit(*(const guint64 *)key, (const GstNpuOverlayPoint *)trail->points->data,
          trail->points->len, data);
  }
}
