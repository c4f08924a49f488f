#include "mot_scene.h"

#include <glib.h>
#include <math.h>

#define WIDTH 1920
#define HEIGHT 1080
#define HIDDEN_FRACTION 0.6f   /* hidden more than this: no truth, no detection */
#define PARTLY_HIDDEN 0.3f     /* hidden more than this: a low score */
#define MISS_RATE 0.05
#define FALSE_POSITIVES_PER_FRAME 0.3
#define JITTER 0.03            /* of the box's size, standard deviation */

typedef struct {
  int first_frame;
  npu_point start, velocity;
  float w, h;
  int stop_at, stop_frames; /* stands still for stop_frames from stop_at */
  int hidden_at, hidden_frames; /* behind scenery */
} object;

static float normal(GRand *rand)
{
  /* Box-Muller */
  double u = g_rand_double_range(rand, 1e-12, 1), v = g_rand_double(rand);
  return (float)(sqrt(-2 * log(u)) * cos(2 * G_PI * v));
}

static npu_box box_at(const object *o, int frame)
{
  int t = frame - o->first_frame;
  if (t > o->stop_at)
    t = t > o->stop_at + o->stop_frames ? t - o->stop_frames : o->stop_at;
  float cx = o->start.x + o->velocity.x * t, cy = o->start.y + o->velocity.y * t;
  return (npu_box){cx - o->w / 2, cy - o->h / 2, o->w, o->h};
}

static float overlap_area(const npu_box *a, const npu_box *b)
{
  float w = fminf(a->x + a->w, b->x + b->w) - fmaxf(a->x, b->x);
  float h = fminf(a->y + a->h, b->y + b->h) - fmaxf(a->y, b->y);
  return w > 0 && h > 0 ? w * h : 0;
}

/* Crossing paths: head-on in five horizontal lanes (a mover each way) and
 * three vertical columns across them, so that objects meet at large angles
 * and hide each other for a few frames as they pass. Past 16 objects the
 * pattern repeats (same-way movers then share a lane and overtake). */
static void crossing_object(GRand *rand, int index, int frames, object *o)
{
  o->w = (float)g_rand_double_range(rand, 40, 80);
  o->h = o->w * 2;
  float speed = (float)g_rand_double_range(rand, 3, 8);
  int slot = index % 16, way = slot % 2 ? -1 : 1;
  if (slot < 10) {
    float y = 220 + (slot / 2) * 170.0f;
    o->start = (npu_point){way > 0 ? -o->w / 2 : WIDTH + o->w / 2, y};
    o->velocity = (npu_point){way * speed, 0};
  } else {
    float x = 500 + ((slot - 10) / 2) * 450.0f;
    o->start = (npu_point){x, way > 0 ? -o->h / 2 : HEIGHT + o->h / 2};
    o->velocity = (npu_point){0, way * speed};
  }
  o->first_frame = g_rand_int_range(rand, 0, frames / 2);
}

/* One-way lanes: an object per lane slot, all of a lane at one speed, the
 * lanes further apart than any object is tall. */
static void lane_object(GRand *rand, int index, int objects, int frames, object *o)
{
  int lanes = objects < 10 ? objects : 10, per_lane = (objects + lanes - 1) / lanes;
  int lane = index % lanes, slot = index / lanes;
  float lane_height = (float)HEIGHT / lanes;
  o->h = lane_height * 0.6f;
  o->w = o->h / 2;
  bool rightwards = lane % 2 == 0;
  /* same speed in a lane: its objects keep their spacing */
  float speed = 2 + lane % 3;
  float spacing = (WIDTH + o->w) / per_lane;
  o->start = (npu_point){rightwards ? slot * spacing : WIDTH - slot * spacing,
                         lane_height * (lane + 0.5f)};
  o->velocity = (npu_point){rightwards ? speed : -speed, 0};
  o->first_frame = 0;
  (void)rand;
  (void)frames;
}

static bool on_screen(const npu_box *b)
{
  /* more than half inside the frame */
  npu_box frame = {0, 0, WIDTH, HEIGHT};
  return overlap_area(b, &frame) > 0.5f * b->w * b->h;
}

mot_scene *mot_scene_generate(mot_scene_kind kind, int objects, int frames, uint32_t seed)
{
  GRand *rand = g_rand_new_with_seed(seed);
  object *o = g_new0(object, objects);
  for (int i = 0; i < objects; i++) {
    if (kind == MOT_SCENE_CROSSING)
      crossing_object(rand, i, frames, &o[i]);
    else
      lane_object(rand, i, objects, frames, &o[i]);
    /* a quarter stop a while; every object hides once behind scenery */
    o[i].stop_at = g_rand_int_range(rand, 20, 120);
    o[i].stop_frames = kind == MOT_SCENE_CROSSING && g_rand_int_range(rand, 0, 4) == 0
                           ? g_rand_int_range(rand, 15, 30) : 0;
    o[i].hidden_at = o[i].first_frame + g_rand_int_range(rand, 10, 150);
    o[i].hidden_frames = g_rand_int_range(rand, 2, 6);
  }
  mot_scene *scene = g_new0(mot_scene, 1);
  scene->frames = frames;
  scene->width = WIDTH;
  scene->height = HEIGHT;
  scene->objects = objects;
  scene->truth_start = g_new0(int, frames + 1);
  scene->detection_start = g_new0(int, frames + 1);
  scene->centres = g_new(npu_point, (gsize)frames * objects);
  GArray *truth = g_array_new(FALSE, FALSE, sizeof(mot_truth));
  GArray *detections = g_array_new(FALSE, FALSE, sizeof(npu_track_detection));
  npu_box *boxes = g_new(npu_box, objects);
  bool *present = g_new(bool, objects);
  for (int f = 0; f < frames; f++) {
    for (int i = 0; i < objects; i++) {
      boxes[i] = box_at(&o[i], f);
      present[i] = f >= o[i].first_frame && on_screen(&boxes[i]);
      scene->centres[(gsize)f * objects + i] =
          present[i] ? (npu_point){boxes[i].x + boxes[i].w / 2, boxes[i].y + boxes[i].h / 2}
                     : (npu_point){NAN, NAN};
    }
    for (int i = 0; i < objects; i++) {
      if (!present[i] || (f >= o[i].hidden_at && f < o[i].hidden_at + o[i].hidden_frames))
        continue;
      /* hidden by objects nearer the camera (lower bottom edge in the frame) */
      float hidden = 0, bottom = boxes[i].y + boxes[i].h;
      for (int k = 0; k < objects; k++)
        if (k != i && present[k] && boxes[k].y + boxes[k].h > bottom)
          hidden += overlap_area(&boxes[i], &boxes[k]);
      hidden /= boxes[i].w * boxes[i].h;
      if (hidden > HIDDEN_FRACTION)
        continue;
      g_array_append_val(truth, ((mot_truth){i, boxes[i]}));
      if (g_rand_double(rand) < MISS_RATE)
        continue;
      const npu_box *b = &boxes[i];
      npu_track_detection d = {
          {b->x + normal(rand) * JITTER * b->w, b->y + normal(rand) * JITTER * b->h,
           b->w * (1 + normal(rand) * JITTER), b->h * (1 + normal(rand) * JITTER)},
          hidden > PARTLY_HIDDEN ? (float)g_rand_double_range(rand, 0.15, 0.45)
                                 : (float)g_rand_double_range(rand, 0.6, 0.95),
          0};
      g_array_append_val(detections, d);
    }
    while (g_rand_double(rand) < FALSE_POSITIVES_PER_FRAME / (1 + FALSE_POSITIVES_PER_FRAME)) {
      float w = (float)g_rand_double_range(rand, 30, 90);
      npu_track_detection d = {{(float)g_rand_double_range(rand, 0, WIDTH - w),
                                (float)g_rand_double_range(rand, 0, HEIGHT - 2 * w), w, 2 * w},
                               (float)g_rand_double_range(rand, 0.1, 0.7), 0};
      g_array_append_val(detections, d);
    }
    scene->truth_start[f + 1] = (int)truth->len;
    scene->detection_start[f + 1] = (int)detections->len;
  }
  scene->truth = (mot_truth *)g_array_free(truth, FALSE);
  scene->detections = (npu_track_detection *)g_array_free(detections, FALSE);
  g_free(boxes);
  g_free(present);
  g_free(o);
  g_rand_free(rand);
  return scene;
}

void mot_scene_free(mot_scene *scene)
{
  g_free(scene->truth);
  g_free(scene->truth_start);
  g_free(scene->detections);
  g_free(scene->detection_start);
  g_free(scene->centres);
  g_free(scene);
}
