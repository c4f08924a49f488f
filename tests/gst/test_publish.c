/* gst-check tests of npupublish: every frame's JSON reaches a real
 * mosquitto broker under its stream's topic; the broker stopped mid-stream
 * blocks nothing, a full queue drops its oldest messages (counted), and
 * after the broker restarts on the same port the element reconnects and the
 * kept and later messages arrive; file mode appends JSON lines; bad
 * settings are refused at start with a message; a broker down at start is
 * waited for. The MQTT tests are left out
 * (with a message) when the mosquitto broker is not installed. */
#include <arpa/inet.h>
#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <json-glib/json-glib.h>
#include <mosquitto.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stream_harness.h"

#define TOPIC_TEMPLATE "test/{stream}/results"
#define TOPIC_OF_STREAM_0 "test/0/results"
#define MAX_QUEUE 5

/* ---- the broker ---- */

typedef struct {
  gchar *binary;
  gchar *dir;
  gint port;
  GPid pid;
} Broker;

static gchar *find_broker(void)
{
  gchar *binary = g_find_program_in_path("mosquitto");
  if (!binary && g_file_test("/usr/sbin/mosquitto", G_FILE_TEST_IS_EXECUTABLE))
    binary = g_strdup("/usr/sbin/mosquitto");
  return binary;
}

static gint free_loopback_port(void)
{
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  fail_unless(fd >= 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof address;
  fail_unless(bind(fd, (struct sockaddr *)&address, sizeof address) == 0);
  fail_unless(getsockname(fd, (struct sockaddr *)&address, &length) == 0);
  close(fd);
  return ntohs(address.sin_port);
}

static gboolean port_open(gint port)
{
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons((guint16)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  gboolean open = connect(fd, (struct sockaddr *)&address, sizeof address) == 0;
  close(fd);
  return open;
}

/* Polls @done for up to @seconds. */
static gboolean wait_until(gboolean (*done)(gpointer), gpointer data, gdouble seconds)
{
  gint64 end = g_get_monotonic_time() + (gint64)(seconds * G_USEC_PER_SEC);
  while (!done(data)) {
    if (g_get_monotonic_time() > end)
      return FALSE;
    g_usleep(10000);
  }
  return TRUE;
}

static gboolean broker_listening(gpointer data)
{
  return port_open(((Broker *)data)->port);
}

static void broker_start(Broker *broker)
{
  gchar *argv[] = {broker->binary, "-c", NULL, NULL};
  argv[2] = g_build_filename(broker->dir, "mosquitto.conf", NULL);
  GError *error = NULL;
  fail_unless(g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &broker->pid, &error),
              "%s", error ? error->message : "");
  g_free(argv[2]);
  fail_unless(wait_until(broker_listening, broker, 5), "the broker does not listen on %d",
              broker->port);
}

/* Stopped with SIGTERM: the broker saves its sessions (the subscriber's
 * included) and gets them back when it starts again. */
static void broker_stop(Broker *broker)
{
  kill(broker->pid, SIGTERM);
  waitpid(broker->pid, NULL, 0);
  g_spawn_close_pid(broker->pid);
}

static void broker_init(Broker *broker)
{
  broker->dir = g_dir_make_tmp("npupublish-XXXXXX", NULL);
  fail_unless(broker->dir != NULL);
  broker->port = free_loopback_port();
  /* the subscriber's session lives on across the restart, messages for it
   * while it is away are kept for it; run as root, the broker would
   * otherwise become user mosquitto, who cannot write in the directory */
  gchar *config = g_strdup_printf("user %s\n"
                                  "listener %d 127.0.0.1\n"
                                  "allow_anonymous true\n"
                                  "persistence true\n"
                                  "persistence_location %s/\n"
                                  "queue_qos0_messages true\n"
                                  "log_dest file %s/broker.log\n",
                                  g_get_user_name(), broker->port, broker->dir, broker->dir);
  gchar *path = g_build_filename(broker->dir, "mosquitto.conf", NULL);
  fail_unless(g_file_set_contents(path, config, -1, NULL));
  g_free(path);
  g_free(config);
  broker_start(broker);
}

static void remove_dir(const gchar *dir)
{
  GDir *entries = g_dir_open(dir, 0, NULL);
  const gchar *name;
  while (entries && (name = g_dir_read_name(entries))) {
    gchar *path = g_build_filename(dir, name, NULL);
    g_unlink(path);
    g_free(path);
  }
  if (entries)
    g_dir_close(entries);
  g_rmdir(dir);
}

static void broker_clear(Broker *broker)
{
  broker_stop(broker);
  remove_dir(broker->dir);
  g_free(broker->dir);
  g_free(broker->binary);
}

/* ---- the subscriber ---- */

typedef struct {
  struct mosquitto *client;
  GMutex lock;
  GPtrArray *topics, *payloads; /* gchar * each, as received */
  gboolean subscribed;
} Subscriber;

static void subscriber_on_connect(struct mosquitto *client, void *data, int rc)
{
  (void)data;
  if (rc == 0)
    /* qos 0: a message the broker delivered just before it stopped is not
     * delivered again after the restart */
    mosquitto_subscribe(client, NULL, "test/#", 0);
}

static void subscriber_on_subscribe(struct mosquitto *client, void *data, int mid, int count,
                                    const int *granted)
{
  (void)client, (void)mid, (void)count, (void)granted;
  Subscriber *subscriber = data;
  g_mutex_lock(&subscriber->lock);
  subscriber->subscribed = TRUE;
  g_mutex_unlock(&subscriber->lock);
}

static void subscriber_on_message(struct mosquitto *client, void *data,
                                  const struct mosquitto_message *message)
{
  (void)client;
  Subscriber *subscriber = data;
  g_mutex_lock(&subscriber->lock);
  g_ptr_array_add(subscriber->topics, g_strdup(message->topic));
  g_ptr_array_add(subscriber->payloads, g_strndup(message->payload, message->payloadlen));
  g_mutex_unlock(&subscriber->lock);
}

static gboolean subscriber_ready(gpointer data)
{
  Subscriber *subscriber = data;
  g_mutex_lock(&subscriber->lock);
  gboolean ready = subscriber->subscribed;
  g_mutex_unlock(&subscriber->lock);
  return ready;
}

static void subscriber_start(Subscriber *subscriber, gint port)
{
  g_mutex_init(&subscriber->lock);
  subscriber->topics = g_ptr_array_new_with_free_func(g_free);
  subscriber->payloads = g_ptr_array_new_with_free_func(g_free);
  /* a lasting session (clean_session false): kept by the broker over its restart */
  subscriber->client = mosquitto_new("npupublish-test-subscriber", false, subscriber);
  fail_unless(subscriber->client != NULL);
  mosquitto_connect_callback_set(subscriber->client, subscriber_on_connect);
  mosquitto_subscribe_callback_set(subscriber->client, subscriber_on_subscribe);
  mosquitto_message_callback_set(subscriber->client, subscriber_on_message);
  mosquitto_reconnect_delay_set(subscriber->client, 1, 1, false);
  fail_unless_equals_int(mosquitto_connect(subscriber->client, "127.0.0.1", port, 60),
                         MOSQ_ERR_SUCCESS);
  fail_unless_equals_int(mosquitto_loop_start(subscriber->client), MOSQ_ERR_SUCCESS);
  fail_unless(wait_until(subscriber_ready, subscriber, 5), "not subscribed");
}

static void subscriber_clear(Subscriber *subscriber)
{
  mosquitto_disconnect(subscriber->client);
  mosquitto_loop_stop(subscriber->client, false);
  mosquitto_destroy(subscriber->client);
  g_ptr_array_unref(subscriber->topics);
  g_ptr_array_unref(subscriber->payloads);
  g_mutex_clear(&subscriber->lock);
}

typedef struct {
  Subscriber *subscriber;
  guint count;
} Expected;

static gboolean received_enough(gpointer data)
{
  Expected *expected = data;
  g_mutex_lock(&expected->subscriber->lock);
  gboolean enough = expected->subscriber->payloads->len >= expected->count;
  g_mutex_unlock(&expected->subscriber->lock);
  return enough;
}

/* ---- frames and what they become ---- */

/* Frame @index: one car whose x is the index, so that each message tells
 * its frame. */
static GstBuffer *frame_with_car(guint index)
{
  GstBuffer *frame = harness_frame(index);
  harness_add_region(frame, "car", (gint)index, 20, 40, 30, 0.75);
  return frame;
}

/* Checks the JSON of @text is frame @index's (see frame_with_car). */
static void check_frame_json(const gchar *text, guint index)
{
  JsonParser *parser = json_parser_new();
  fail_unless(json_parser_load_from_data(parser, text, -1, NULL), "%s", text);
  JsonObject *frame = json_node_get_object(json_parser_get_root(parser));
  fail_unless_equals_uint64(json_object_get_int_member(frame, "pts"),
                            gst_util_uint64_scale(index, GST_SECOND, 30));
  fail_unless_equals_int(json_object_get_int_member(frame, "stream"), -1);
  JsonArray *rois = json_object_get_array_member(frame, "rois");
  fail_unless_equals_int(json_array_get_length(rois), 1);
  JsonObject *car = json_array_get_object_element(rois, 0);
  fail_unless_equals_string(json_object_get_string_member(car, "label"), "car");
  fail_unless_equals_int(json_object_get_int_member(car, "x"), index);
  fail_unless_equals_int(json_object_get_int_member(car, "w"), 40);
  JsonObject *detection = json_object_get_object_member(car, "detection");
  fail_unless(detection != NULL, "%s", text);
  fail_unless(json_object_get_double_member(detection, "confidence") == 0.75);
  g_object_unref(parser);
}

/* Checks that messages [first, first + count) are frames from @frame on. */
static void check_received(Subscriber *subscriber, guint first, guint count, guint frame)
{
  g_mutex_lock(&subscriber->lock);
  for (guint i = first; i < first + count; i++) {
    fail_unless_equals_string(g_ptr_array_index(subscriber->topics, i), TOPIC_OF_STREAM_0);
    check_frame_json(g_ptr_array_index(subscriber->payloads, i), frame + i - first);
  }
  g_mutex_unlock(&subscriber->lock);
}

/* ---- the pipeline ---- */

typedef struct {
  GstElement *pipeline, *source, *publish, *sink;
} Publisher;

static void publisher_start(Publisher *publisher, const gchar *options)
{
  gchar *description = g_strdup_printf(
      "appsrc name=src0 format=time ! npupublish name=publish %s ! appsink name=out0 sync=false",
      options);
  GError *error = NULL;
  publisher->pipeline = gst_parse_launch(description, &error);
  fail_unless(publisher->pipeline != NULL, "%s", error ? error->message : description);
  g_free(description);
  publisher->source = gst_bin_get_by_name(GST_BIN(publisher->pipeline), "src0");
  publisher->publish = gst_bin_get_by_name(GST_BIN(publisher->pipeline), "publish");
  publisher->sink = gst_bin_get_by_name(GST_BIN(publisher->pipeline), "out0");
  GstCaps *caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGB", "width",
                                      G_TYPE_INT, HARNESS_WIDTH, "height", G_TYPE_INT,
                                      HARNESS_HEIGHT, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
  g_object_set(publisher->source, "caps", caps, NULL);
  gst_caps_unref(caps);
  fail_unless(gst_element_set_state(publisher->pipeline, GST_STATE_PLAYING) !=
              GST_STATE_CHANGE_FAILURE);
}

static void publisher_clear(Publisher *publisher)
{
  gst_element_set_state(publisher->pipeline, GST_STATE_NULL);
  gst_object_unref(publisher->source);
  gst_object_unref(publisher->publish);
  gst_object_unref(publisher->sink);
  gst_object_unref(publisher->pipeline);
}

typedef struct {
  guint64 sent, dropped;
  guint reconnects, queued;
  gboolean connected;
} Stats;

static Stats stats_of(Publisher *publisher)
{
  GstStructure *structure = NULL;
  g_object_get(publisher->publish, "stats", &structure, NULL);
  fail_unless(structure != NULL);
  Stats stats;
  fail_unless(gst_structure_get(structure, "sent", G_TYPE_UINT64, &stats.sent, "dropped",
                                G_TYPE_UINT64, &stats.dropped, "reconnects", G_TYPE_UINT,
                                &stats.reconnects, "queued", G_TYPE_UINT, &stats.queued,
                                "connected", G_TYPE_BOOLEAN, &stats.connected, NULL));
  gst_structure_free(structure);
  return stats;
}

static gboolean publisher_connected(gpointer data)
{
  return stats_of(data).connected;
}

static gboolean publisher_disconnected(gpointer data)
{
  return !stats_of(data).connected;
}

static gboolean queue_empty(gpointer data)
{
  return stats_of(data).queued == 0;
}

/* Pushes frames [first, first + count): each must come out of npupublish
 * within a second (less than the shortest reconnect delay), whatever the
 * broker does. @connected: each message leaves the
 * queue before the next frame (a queue of MAX_QUEUE could overflow when
 * frames come faster than the sender thread takes them). */
static void push_frames(Publisher *publisher, guint first, guint count, gboolean connected)
{
  for (guint i = first; i < first + count; i++) {
    fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(publisher->source),
                                                   frame_with_car(i)),
                           GST_FLOW_OK);
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(publisher->sink), GST_SECOND);
    fail_unless(sample != NULL, "frame %u did not come out of npupublish", i);
    gst_sample_unref(sample);
    if (connected)
      fail_unless(wait_until(queue_empty, publisher, 5), "frame %u stays queued", i);
  }
}

GST_START_TEST(test_mqtt_reconnect)
{
  Broker broker = {.binary = find_broker()};
  broker_init(&broker);
  Subscriber subscriber = {0};
  subscriber_start(&subscriber, broker.port);
  Publisher publisher;
  gchar *options = g_strdup_printf("host=127.0.0.1 port=%d topic=" TOPIC_TEMPLATE
                                   " qos=1 max-queue=%d client-id=npupublish-test",
                                   broker.port, MAX_QUEUE);
  publisher_start(&publisher, options);
  g_free(options);
  fail_unless(wait_until(publisher_connected, &publisher, 5), "npupublish did not connect");

  /* connected: every frame arrives */
  push_frames(&publisher, 0, 10, TRUE);
  fail_unless(wait_until(received_enough, &(Expected){&subscriber, 10}, 5));
  check_received(&subscriber, 0, 10, 0);

  /* the broker gone: frames go on, the queue keeps the newest MAX_QUEUE */
  broker_stop(&broker);
  fail_unless(wait_until(publisher_disconnected, &publisher, 5));
  push_frames(&publisher, 10, 20, FALSE);
  Stats stats = stats_of(&publisher);
  fail_unless_equals_uint64(stats.dropped, 20 - MAX_QUEUE);
  fail_unless_equals_int(stats.queued, MAX_QUEUE);

  /* back on the same port: the queued frames and the next ones arrive */
  broker_start(&broker);
  fail_unless(wait_until(publisher_connected, &publisher, 10), "npupublish did not reconnect");
  fail_unless(wait_until(queue_empty, &publisher, 5), "the queue stays full");
  push_frames(&publisher, 30, 10, TRUE);
  if (!wait_until(received_enough, &(Expected){&subscriber, 10 + MAX_QUEUE + 10}, 10)) {
    for (guint i = 0; i < subscriber.payloads->len; i++)
      g_printerr("%s\n", (gchar *)subscriber.payloads->pdata[i]);
    fail("%u messages, %" G_GUINT64_FORMAT " sent", subscriber.payloads->len,
         stats_of(&publisher).sent);
  }
  check_received(&subscriber, 10, MAX_QUEUE, 30 - MAX_QUEUE);
  check_received(&subscriber, 10 + MAX_QUEUE, 10, 30);
  g_usleep(G_USEC_PER_SEC / 10); /* nothing more (no duplicate) comes */
  fail_unless_equals_int(subscriber.payloads->len, 10 + MAX_QUEUE + 10);

  stats = stats_of(&publisher);
  fail_unless_equals_uint64(stats.sent, 10 + MAX_QUEUE + 10);
  fail_unless_equals_uint64(stats.dropped, 20 - MAX_QUEUE);
  fail_unless_equals_int(stats.reconnects, 1);
  fail_unless_equals_int(stats.queued, 0);

  publisher_clear(&publisher);
  subscriber_clear(&subscriber);
  broker_clear(&broker);
}
GST_END_TEST;

static gboolean all_sent(gpointer data)
{
  Stats stats = stats_of(data);
  return stats.queued == 0 && stats.sent == 3;
}

/* A broker down at start is waited for: the frames queued meanwhile go out
 * once it is up (acknowledged, qos 1). */
GST_START_TEST(test_mqtt_broker_late)
{
  Broker broker = {.binary = find_broker()};
  broker_init(&broker);
  broker_stop(&broker);
  Publisher publisher;
  gchar *options = g_strdup_printf("host=127.0.0.1 port=%d qos=1", broker.port);
  publisher_start(&publisher, options);
  g_free(options);
  push_frames(&publisher, 0, 3, FALSE);
  fail_unless_equals_int(stats_of(&publisher).queued, 3);
  broker_start(&broker);
  fail_unless(wait_until(all_sent, &publisher, 10), "%" G_GUINT64_FORMAT " sent",
              stats_of(&publisher).sent);
  Stats stats = stats_of(&publisher);
  fail_unless(stats.connected);
  fail_unless_equals_int(stats.reconnects, 0);
  publisher_clear(&publisher);
  broker_clear(&broker);
}
GST_END_TEST;

#define FILE_PIPELINE(options)                                                                 \
  "npupublish name=p " options " appsrc name=src0 ! p.sink_0 p.src_0 ! appsink name=out0"

static gchar *run_frames(const gchar *description, guint count)
{
  GPtrArray *frames[] = {g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref)};
  for (guint i = 0; i < count; i++)
    g_ptr_array_add(frames[0], frame_with_car(i));
  gchar *error = NULL;
  GPtrArray **out = harness_run(description, 1, frames, &error, NULL);
  if (out)
    fail_unless_equals_int(out[0]->len, count);
  harness_free_outputs(out, 1);
  return error;
}

GST_START_TEST(test_file_appends_json_lines)
{
  gchar *dir = g_dir_make_tmp("npupublish-XXXXXX", NULL);
  gchar *path = g_build_filename(dir, "results.jsonl", NULL);
  gchar *description = g_strdup_printf(FILE_PIPELINE("location=%s"), path);
  /* twice: the second run appends */
  for (guint run = 0; run < 2; run++) {
    gchar *error = run_frames(description, 3);
    fail_unless(error == NULL, "%s", error);
  }
  gchar *contents;
  fail_unless(g_file_get_contents(path, &contents, NULL, NULL));
  gchar **lines = g_strsplit(contents, "\n", -1);
  fail_unless_equals_int(g_strv_length(lines), 7); /* the last one empty */
  for (guint i = 0; i < 6; i++)
    check_frame_json(lines[i], i % 3);
  fail_unless_equals_string(lines[6], "");
  g_strfreev(lines);
  g_free(contents);
  g_free(description);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}
GST_END_TEST;

GST_START_TEST(test_bad_settings)
{
  const struct {
    const gchar *options, *message;
  } bad[] = {
      {"qos=2", "qos 2 is not supported"},
      {"topic=\"\"", "Invalid topic"},
      {"topic=a/#", "Invalid topic"},
      {"tls-ca-file=/nonexistent/ca.pem", "Cannot read the TLS CA file '/nonexistent/ca.pem'"},
      {"tls-ca-file=/dev/null tls-cert-file=/dev/null", "go together"},
      {"location=/nonexistent/results.jsonl", "Cannot open '/nonexistent/results.jsonl'"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    gchar *description = g_strdup_printf(
        "npupublish name=p %s appsrc name=src0 ! p.sink_0 p.src_0 ! appsink name=out0",
        bad[i].options);
    gchar *error = run_frames(description, 1);
    fail_unless(error && strstr(error, bad[i].message), "%s: %s", bad[i].options, error);
    g_free(error);
    g_free(description);
  }
}
GST_END_TEST;

static Suite *publish_suite(void)
{
  Suite *suite = suite_create("npupublish");
  TCase *tc = tcase_create("publish");
  /* check has no skipped state: the test is left out, and says so */
  gchar *broker = find_broker();
  if (broker) {
    tcase_add_test(tc, test_mqtt_reconnect);
    tcase_add_test(tc, test_mqtt_broker_late);
  } else {
    g_printerr("SKIP test_mqtt_reconnect, test_mqtt_broker_late: the mosquitto broker is not "
               "installed (Debian package mosquitto)\n");
  }
  g_free(broker);
  tcase_add_test(tc, test_file_appends_json_lines);
  tcase_add_test(tc, test_bad_settings);
  suite_add_tcase(suite, tc);
  return suite;
}

GST_CHECK_MAIN(publish);
