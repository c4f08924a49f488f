/**
 * SECTION:element-npupublish
 *
 * Publishes each frame's results (the JSON object npumetaconvert writes: pts,
 * stream, regions of interest with their params, nputrack's and
 * npuanalytics' frame results) as one message to an MQTT broker, or appends
 * it as a line to a file when location is set.
 *
 * The streaming thread never waits on the network: it puts the message in a
 * queue of at most max-queue messages (the oldest is dropped when it is
 * full, and counted) and goes on. A thread of the element hands queued
 * messages to libmosquitto while the client is connected; libmosquitto's
 * own thread does the network and reconnects after a lost connection, with
 * a delay growing from 1 s to 30 s between tries. The read-only stats
 * property tells messages sent (written to the socket at qos 0,
 * acknowledged at qos 1; lines written in file mode), dropped, reconnects,
 * whether the client is connected now, and queued.
 *
 * Request pads sink_%u/src_%u in pairs; frames pass through untouched. The
 * topic's "{stream}" is the frame's stream: its npuinfer pad index when it
 * has one, else the index of the pad it came in on.
 *
 * |[
 * gst-launch-1.0 filesrc location=in.mp4 ! decodebin ! videoconvert ! \
 *   npuinfer model=yolov8n.onnx ! npudecode method=yolo labels=coco.txt ! \
 *   nputrack ! npupublish host=localhost topic=cameras/{stream}/results ! fakesink
 * ]|
 */
#include "gstnpupublish.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <mosquitto.h>
#include <stdio.h>
#include <string.h>

#include "gstnpuframejson.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_publish_debug);
#define GST_CAT_DEFAULT gst_npu_publish_debug

#define STREAM_PLACEHOLDER "{stream}"
/* libmosquitto's reconnection delays (seconds), growing between tries */
#define RECONNECT_DELAY_MIN 1
#define RECONNECT_DELAY_MAX 30

typedef struct {
  gchar *host;
  gint port;
  gchar *topic;
  gint qos;
  gchar *client_id;
  gchar *username;
  gchar *password;
  gchar *tls_ca_file;
  gchar *tls_cert_file;
  gchar *tls_key_file;
  gint keep_alive;
  guint max_queue;
  gchar *location;
} PublishSettings;

typedef struct {
  gchar *topic;
  gchar *payload;
} PublishMessage;

struct _GstNpuPublish {
  GstNpuStreamFilter parent;
  GMutex lock; /* settings */
  PublishSettings settings;
  PublishSettings active; /* taken at start */

  FILE *file; /* file mode */

  struct mosquitto *client; /* MQTT mode */
  GThread *sender;
  /* A leaf lock, never held while calling libmosquitto (whose callbacks
   * take it): the queue, the connection state, the counts. */
  GMutex queue_lock;
  GCond queue_changed;
  GQueue queue; /* PublishMessage */
  gboolean connected;
  gboolean stopping;
  /* libmosquitto's thread retries only connections that once began: a
   * first one refused at start is retried by the sender thread */
  gboolean first_connection_pending;
  gint64 next_connection_try; /* monotonic time */
  gint64 connection_retry_delay; /* microseconds */
  guint64 sent;
  guint64 dropped;
  guint connections;
};

G_DEFINE_TYPE(GstNpuPublish, gst_npu_publish, GST_TYPE_NPU_STREAM_FILTER)
GST_ELEMENT_REGISTER_DEFINE(npupublish, "npupublish", GST_RANK_NONE, GST_TYPE_NPU_PUBLISH)

enum {
  PROP_0,
  PROP_HOST,
  PROP_PORT,
  PROP_TOPIC,
  PROP_QOS,
  PROP_CLIENT_ID,
  PROP_USERNAME,
  PROP_PASSWORD,
  PROP_TLS_CA_FILE,
  PROP_TLS_CERT_FILE,
  PROP_TLS_KEY_FILE,
  PROP_KEEP_ALIVE,
  PROP_MAX_QUEUE,
  PROP_LOCATION,
  PROP_STATS,
};

#define DEFAULT_HOST "localhost"
#define DEFAULT_PORT 1883
#define DEFAULT_TOPIC "npu/{stream}"
#define DEFAULT_KEEP_ALIVE 60
#define DEFAULT_MAX_QUEUE 1000

static void settings_copy(PublishSettings *to, const PublishSettings *from)
{
  *to = *from;
  to->host = g_strdup(from->host);
  to->topic = g_strdup(from->topic);
  to->client_id = g_strdup(from->client_id);
  to->username = g_strdup(from->username);
  to->password = g_strdup(from->password);
  to->tls_ca_file = g_strdup(from->tls_ca_file);
  to->tls_cert_file = g_strdup(from->tls_cert_file);
  to->tls_key_file = g_strdup(from->tls_key_file);
  to->location = g_strdup(from->location);
}

static void settings_clear(PublishSettings *settings)
{
  g_free(settings->host);
  g_free(settings->topic);
  g_free(settings->client_id);
  g_free(settings->username);
  g_free(settings->password);
  g_free(settings->tls_ca_file);
  g_free(settings->tls_cert_file);
  g_free(settings->tls_key_file);
  g_free(settings->location);
  memset(settings, 0, sizeof *settings);
}

static gboolean is_set(const gchar *text)
{
  return text && *text;
}

static void message_free(gpointer data)
{
  PublishMessage *message = data;
  g_free(message->topic);
  g_free(message->payload);
  g_free(message);
}

static gchar *topic_of_stream(const gchar *template, gint stream)
{
  gchar **parts = g_strsplit(template, STREAM_PLACEHOLDER, -1);
  gchar *index = g_strdup_printf("%d", stream);
  gchar *topic = g_strjoinv(index, parts);
  g_free(index);
  g_strfreev(parts);
  return topic;
}

/* Adds @message to the queue (or at its head: @retry), dropping the oldest
 * message when it is full. With queue_lock held. */
static void queue_message_locked(GstNpuPublish *self, PublishMessage *message, gboolean retry)
{
  if (g_queue_get_length(&self->queue) >= self->active.max_queue) {
    /* a message to retry is the oldest one */
    message_free(retry ? message : g_queue_pop_head(&self->queue));
    self->dropped++;
    if (retry)
      return;
  }
  if (retry)
    g_queue_push_head(&self->queue, message);
  else
    g_queue_push_tail(&self->queue, message);
  g_cond_signal(&self->queue_changed);
}

/* Tries the first connection again when its time has come. With queue_lock
 * held. */
static void retry_first_connection_locked(GstNpuPublish *self)
{
  if (g_get_monotonic_time() < self->next_connection_try)
    return;
  g_mutex_unlock(&self->queue_lock);
  int rc = mosquitto_reconnect_async(self->client);
  g_mutex_lock(&self->queue_lock);
  if (rc == MOSQ_ERR_SUCCESS) {
    self->first_connection_pending = FALSE;
    return;
  }
  GST_DEBUG_OBJECT(self, "not connected, next try in %" G_GINT64_FORMAT " s",
                   self->connection_retry_delay / G_USEC_PER_SEC);
  self->next_connection_try = g_get_monotonic_time() + self->connection_retry_delay;
  self->connection_retry_delay =
      MIN(2 * self->connection_retry_delay, RECONNECT_DELAY_MAX * G_USEC_PER_SEC);
}

/* The sender thread: hands queued messages to libmosquitto while connected. */
static gpointer send_queued_messages(gpointer data)
{
  GstNpuPublish *self = data;
  g_mutex_lock(&self->queue_lock);
  while (!self->stopping) {
    if (self->first_connection_pending) {
      retry_first_connection_locked(self);
      if (self->first_connection_pending) {
        g_cond_wait_until(&self->queue_changed, &self->queue_lock, self->next_connection_try);
        continue;
      }
    }
    if (!self->connected || g_queue_is_empty(&self->queue)) {
      g_cond_wait(&self->queue_changed, &self->queue_lock);
      continue;
    }
    PublishMessage *message = g_queue_pop_head(&self->queue);
    g_mutex_unlock(&self->queue_lock);
    int message_id = 0;
    int rc = mosquitto_publish(self->client, &message_id, message->topic,
                               (int)strlen(message->payload), message->payload, self->active.qos,
                               false);
    GST_LOG_OBJECT(self, "message %d to '%s': %s", message_id, message->topic,
                   mosquitto_strerror(rc));
    g_mutex_lock(&self->queue_lock);
    if (rc == MOSQ_ERR_NO_CONN) {
      /* lost since on_connect said otherwise: it waits for the next connection */
      self->connected = FALSE;
      queue_message_locked(self, message, TRUE);
    } else {
      if (rc != MOSQ_ERR_SUCCESS) {
        GST_WARNING_OBJECT(self, "message to '%s' not published: %s", message->topic,
                           mosquitto_strerror(rc));
        self->dropped++;
      }
      message_free(message);
    }
  }
  g_mutex_unlock(&self->queue_lock);
  return NULL;
}

/* libmosquitto's callbacks, called on its network thread */
static void on_connect(struct mosquitto *client, void *data, int rc)
{
  (void)client;
  GstNpuPublish *self = data;
  if (rc != 0) {
    GST_WARNING_OBJECT(self, "the broker refused the connection: %s", mosquitto_connack_string(rc));
    return;
  }
  g_mutex_lock(&self->queue_lock);
  self->connected = TRUE;
  self->connections++;
  g_cond_signal(&self->queue_changed);
  g_mutex_unlock(&self->queue_lock);
  GST_INFO_OBJECT(self, "connected to %s:%d", self->active.host, self->active.port);
}

static void on_disconnect(struct mosquitto *client, void *data, int rc)
{
  (void)client;
  GstNpuPublish *self = data;
  g_mutex_lock(&self->queue_lock);
  self->connected = FALSE;
  g_mutex_unlock(&self->queue_lock);
  if (rc != 0)
    GST_WARNING_OBJECT(self, "connection to %s:%d lost (%s), reconnecting", self->active.host,
                       self->active.port, mosquitto_strerror(rc));
}

static void on_publish(struct mosquitto *client, void *data, int message_id)
{
  (void)client;
  GstNpuPublish *self = data;
  GST_LOG_OBJECT(self, "message %d sent", message_id);
  g_mutex_lock(&self->queue_lock);
  self->sent++;
  g_mutex_unlock(&self->queue_lock);
}

static GstFlowReturn gst_npu_publish_process(GstNpuStreamFilter *filter, gpointer state,
                                             gint stream, GstBuffer *frame)
{
  (void)stream;
  GstNpuPublish *self = GST_NPU_PUBLISH(filter);
  const gchar *topic = state;
  gchar *json = gst_npu_frame_to_json(frame);
  if (self->file) {
    gboolean written = fprintf(self->file, "%s\n", json) > 0 && fflush(self->file) == 0;
    g_free(json);
    if (!written) {
      GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("Cannot write to '%s'", self->active.location),
                        ("%s", g_strerror(errno)));
      return GST_FLOW_ERROR;
    }
    g_mutex_lock(&self->queue_lock);
    self->sent++;
    g_mutex_unlock(&self->queue_lock);
    return GST_FLOW_OK;
  }
  PublishMessage *message = g_new(PublishMessage, 1);
  message->topic = g_strdup(topic);
  message->payload = json;
  g_mutex_lock(&self->queue_lock);
  queue_message_locked(self, message, FALSE);
  g_mutex_unlock(&self->queue_lock);
  return GST_FLOW_OK;
}

/* A stream's state: its topic. */
static gpointer gst_npu_publish_stream_new(GstNpuStreamFilter *filter, gint stream)
{
  GstNpuPublish *self = GST_NPU_PUBLISH(filter);
  return topic_of_stream(self->active.topic, stream);
}

static gboolean check_readable(GstNpuPublish *self, const gchar *what, const gchar *path)
{
  if (!path || g_access(path, R_OK) == 0)
    return TRUE;
  GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Cannot read the %s '%s'", what, path),
                    ("%s", g_strerror(errno)));
  return FALSE;
}

static gboolean check_mqtt_settings(GstNpuPublish *self)
{
  const PublishSettings *s = &self->active;
  if (s->qos != 0 && s->qos != 1) {
    GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("qos %d is not supported: 0 or 1", s->qos),
                      (NULL));
    return FALSE;
  }
  gchar *sample_topic = is_set(s->topic) ? topic_of_stream(s->topic, 0) : NULL;
  gboolean topic_valid = sample_topic && mosquitto_pub_topic_check(sample_topic) == MOSQ_ERR_SUCCESS;
  g_free(sample_topic);
  if (!topic_valid) {
    GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                      ("Invalid topic '%s': not empty, without wildcards (+, #)",
                       s->topic ? s->topic : ""),
                      (NULL));
    return FALSE;
  }
  if (!is_set(s->host)) {
    GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("No host to publish to"), (NULL));
    return FALSE;
  }
  if (is_set(s->tls_cert_file) != is_set(s->tls_key_file) ||
      (is_set(s->tls_cert_file) && !is_set(s->tls_ca_file))) {
    GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                      ("tls-cert-file and tls-key-file go together, with tls-ca-file"), (NULL));
    return FALSE;
  }
  return check_readable(self, "TLS CA file", s->tls_ca_file) &&
         check_readable(self, "TLS certificate file", s->tls_cert_file) &&
         check_readable(self, "TLS key file", s->tls_key_file);
}

static gboolean fail_mqtt(GstNpuPublish *self, const gchar *step, int rc)
{
  GST_ELEMENT_ERROR(self, LIBRARY, INIT, ("Cannot set up the MQTT client"),
                    ("%s: %s", step, mosquitto_strerror(rc)));
  return FALSE;
}

static gboolean start_mqtt(GstNpuPublish *self)
{
  const PublishSettings *s = &self->active;
  self->client = mosquitto_new(is_set(s->client_id) ? s->client_id : NULL, true, self);
  if (!self->client)
    return fail_mqtt(self, "mosquitto_new", MOSQ_ERR_ERRNO);
  mosquitto_connect_callback_set(self->client, on_connect);
  mosquitto_disconnect_callback_set(self->client, on_disconnect);
  mosquitto_publish_callback_set(self->client, on_publish);
  int rc = mosquitto_reconnect_delay_set(self->client, RECONNECT_DELAY_MIN, RECONNECT_DELAY_MAX,
                                         true);
  if (rc == MOSQ_ERR_SUCCESS && is_set(s->username))
    rc = mosquitto_username_pw_set(self->client, s->username, s->password);
  if (rc != MOSQ_ERR_SUCCESS)
    return fail_mqtt(self, "credentials", rc);
  if (is_set(s->tls_ca_file)) {
    rc = mosquitto_tls_set(self->client, s->tls_ca_file, NULL,
                           is_set(s->tls_cert_file) ? s->tls_cert_file : NULL,
                           is_set(s->tls_key_file) ? s->tls_key_file : NULL, NULL);
    if (rc != MOSQ_ERR_SUCCESS)
      return fail_mqtt(self, "TLS", rc);
  }
  /* a broker down now is not an error: the sender thread tries again */
  rc = mosquitto_connect_async(self->client, s->host, s->port, s->keep_alive);
  if (rc == MOSQ_ERR_INVAL)
    return fail_mqtt(self, "connection settings", rc);
  if (rc != MOSQ_ERR_SUCCESS)
    GST_WARNING_OBJECT(self, "not connected to %s:%d yet: %s", s->host, s->port,
                       rc == MOSQ_ERR_ERRNO ? g_strerror(errno) : mosquitto_strerror(rc));
  self->first_connection_pending = rc != MOSQ_ERR_SUCCESS;
  self->connection_retry_delay = RECONNECT_DELAY_MIN * G_USEC_PER_SEC;
  self->next_connection_try = g_get_monotonic_time() + self->connection_retry_delay;
  rc = mosquitto_loop_start(self->client);
  if (rc != MOSQ_ERR_SUCCESS)
    return fail_mqtt(self, "network thread", rc);
  self->stopping = FALSE;
  self->sender = g_thread_new("npupublish", send_queued_messages, self);
  return TRUE;
}

static void stop_mqtt(GstNpuPublish *self)
{
  if (self->sender) {
    g_mutex_lock(&self->queue_lock);
    self->stopping = TRUE;
    g_cond_signal(&self->queue_changed);
    g_mutex_unlock(&self->queue_lock);
    g_thread_join(self->sender);
    self->sender = NULL;
  }
  if (self->client) {
    mosquitto_disconnect(self->client);
    mosquitto_loop_stop(self->client, false);
    mosquitto_destroy(self->client);
    self->client = NULL;
  }
  guint unsent = g_queue_get_length(&self->queue);
  if (unsent)
    GST_INFO_OBJECT(self, "%u messages not published at stop", unsent);
  g_queue_clear_full(&self->queue, message_free);
}

static void gst_npu_publish_stop(GstNpuStreamFilter *filter)
{
  GstNpuPublish *self = GST_NPU_PUBLISH(filter);
  stop_mqtt(self);
  if (self->file)
    fclose(self->file);
  self->file = NULL;
  settings_clear(&self->active);
}

static gboolean gst_npu_publish_start(GstNpuStreamFilter *filter)
{
  GstNpuPublish *self = GST_NPU_PUBLISH(filter);
  g_mutex_lock(&self->lock);
  settings_copy(&self->active, &self->settings);
  g_mutex_unlock(&self->lock);
  self->sent = self->dropped = 0;
  self->connections = 0;
  self->connected = FALSE;
  if (is_set(self->active.location)) {
    self->file = g_fopen(self->active.location, "a");
    if (!self->file) {
      GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("Cannot open '%s'", self->active.location),
                        ("%s", g_strerror(errno)));
      return FALSE;
    }
    return TRUE;
  }
  if (check_mqtt_settings(self) && start_mqtt(self))
    return TRUE;
  /* GstNpuStreamFilter calls no stop after a failed start */
  gst_npu_publish_stop(filter);
  return FALSE;
}

static GstStructure *stats_of(GstNpuPublish *self)
{
  g_mutex_lock(&self->queue_lock);
  GstStructure *stats = gst_structure_new(
      "npupublish-stats", "sent", G_TYPE_UINT64, self->sent, "dropped", G_TYPE_UINT64,
      self->dropped, "reconnects", G_TYPE_UINT, self->connections ? self->connections - 1 : 0,
      "connected", G_TYPE_BOOLEAN, self->connected, "queued", G_TYPE_UINT,
      g_queue_get_length(&self->queue), NULL);
  g_mutex_unlock(&self->queue_lock);
  return stats;
}

static gchar **string_setting(PublishSettings *settings, guint id)
{
  switch (id) {
  case PROP_HOST:
    return &settings->host;
  case PROP_TOPIC:
    return &settings->topic;
  case PROP_CLIENT_ID:
    return &settings->client_id;
  case PROP_USERNAME:
    return &settings->username;
  case PROP_PASSWORD:
    return &settings->password;
  case PROP_TLS_CA_FILE:
    return &settings->tls_ca_file;
  case PROP_TLS_CERT_FILE:
    return &settings->tls_cert_file;
  case PROP_TLS_KEY_FILE:
    return &settings->tls_key_file;
  case PROP_LOCATION:
    return &settings->location;
  default:
    return NULL;
  }
}

static gint *int_setting(PublishSettings *settings, guint id)
{
  switch (id) {
  case PROP_PORT:
    return &settings->port;
  case PROP_QOS:
    return &settings->qos;
  case PROP_KEEP_ALIVE:
    return &settings->keep_alive;
  default:
    return NULL;
  }
}

static void gst_npu_publish_set_property(GObject *object, guint id, const GValue *value,
                                         GParamSpec *pspec)
{
  GstNpuPublish *self = GST_NPU_PUBLISH(object);
  g_mutex_lock(&self->lock);
  gchar **text = string_setting(&self->settings, id);
  gint *number = int_setting(&self->settings, id);
  if (text) {
    g_free(*text);
    *text = g_value_dup_string(value);
  } else if (number) {
    *number = g_value_get_int(value);
  } else if (id == PROP_MAX_QUEUE) {
    self->settings.max_queue = g_value_get_uint(value);
  } else {
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
  g_mutex_unlock(&self->lock);
}

static void gst_npu_publish_get_property(GObject *object, guint id, GValue *value,
                                         GParamSpec *pspec)
{
  GstNpuPublish *self = GST_NPU_PUBLISH(object);
  if (id == PROP_STATS) {
    g_value_take_boxed(value, stats_of(self));
    return;
  }
  g_mutex_lock(&self->lock);
  gchar **text = string_setting(&self->settings, id);
  gint *number = int_setting(&self->settings, id);
  if (text)
    g_value_set_string(value, *text);
  else if (number)
    g_value_set_int(value, *number);
  else if (id == PROP_MAX_QUEUE)
    g_value_set_uint(value, self->settings.max_queue);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  g_mutex_unlock(&self->lock);
}

static void gst_npu_publish_finalize(GObject *object)
{
  GstNpuPublish *self = GST_NPU_PUBLISH(object);
  settings_clear(&self->settings);
  settings_clear(&self->active);
  g_mutex_clear(&self->lock);
  g_mutex_clear(&self->queue_lock);
  g_cond_clear(&self->queue_changed);
  G_OBJECT_CLASS(gst_npu_publish_parent_class)->finalize(object);
}

#define PUBLISH_PARAM_FLAGS (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)

static void install_string(GObjectClass *object_class, guint id, const gchar *name,
                           const gchar *nick, const gchar *blurb, const gchar *default_value)
{
  g_object_class_install_property(
      object_class, id,
      g_param_spec_string(name, nick, blurb, default_value, PUBLISH_PARAM_FLAGS));
}

static void gst_npu_publish_class_init(GstNpuPublishClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstNpuStreamFilterClass *filter_class = GST_NPU_STREAM_FILTER_CLASS(klass);
  object_class->set_property = gst_npu_publish_set_property;
  object_class->get_property = gst_npu_publish_get_property;
  object_class->finalize = gst_npu_publish_finalize;
  install_string(object_class, PROP_HOST, "host", "Host", "MQTT broker host name or address",
                 DEFAULT_HOST);
  g_object_class_install_property(object_class, PROP_PORT,
      g_param_spec_int("port", "Port", "MQTT broker port", 1, 65535, DEFAULT_PORT,
                       PUBLISH_PARAM_FLAGS));
  install_string(object_class, PROP_TOPIC, "topic", "Topic",
                 "Topic of the messages; \"{stream}\" stands for the frame's stream index "
                 "(npuinfer's pad index, else the sink pad's)",
                 DEFAULT_TOPIC);
  g_object_class_install_property(object_class, PROP_QOS,
      g_param_spec_int("qos", "QoS",
                       "MQTT quality of service: 0 (at most once) or 1 (at least once; "
                       "messages unacknowledged when the connection drops are sent again); "
                       "2 is refused at start",
                       0, 2, 0, PUBLISH_PARAM_FLAGS));
  install_string(object_class, PROP_CLIENT_ID, "client-id", "Client id",
                 "MQTT client identifier (unset: a random one)", NULL);
  install_string(object_class, PROP_USERNAME, "username", "Username",
                 "User name given to the broker (unset: none)", NULL);
  install_string(object_class, PROP_PASSWORD, "password", "Password",
                 "Password given to the broker with username", NULL);
  install_string(object_class, PROP_TLS_CA_FILE, "tls-ca-file", "TLS CA file",
                 "PEM file of the certificate authorities trusted for the broker; set: the "
                 "connection uses TLS",
                 NULL);
  install_string(object_class, PROP_TLS_CERT_FILE, "tls-cert-file", "TLS certificate file",
                 "PEM client certificate (with tls-key-file and tls-ca-file) for brokers that "
                 "ask for one",
                 NULL);
  install_string(object_class, PROP_TLS_KEY_FILE, "tls-key-file", "TLS key file",
                 "PEM private key of tls-cert-file (not encrypted)", NULL);
  g_object_class_install_property(object_class, PROP_KEEP_ALIVE,
      g_param_spec_int("keep-alive", "Keep alive",
                       "Seconds between the pings that keep the connection alive when nothing "
                       "else is sent",
                       5, 65535, DEFAULT_KEEP_ALIVE, PUBLISH_PARAM_FLAGS));
  g_object_class_install_property(object_class, PROP_MAX_QUEUE,
      g_param_spec_uint("max-queue", "Max queue",
                        "Messages kept while disconnected (or not yet handed to the network); "
                        "when full the oldest is dropped and counted in stats",
                        1, G_MAXUINT, DEFAULT_MAX_QUEUE, PUBLISH_PARAM_FLAGS));
  install_string(object_class, PROP_LOCATION, "location", "Location",
                 "File the messages are appended to as JSON lines instead of MQTT (unset: MQTT)",
                 NULL);
  g_object_class_install_property(object_class, PROP_STATS,
      g_param_spec_boxed("stats", "Statistics",
                         "Since start: sent (messages the broker took, qos 0: written to the "
                         "socket; lines in file mode), dropped (queue full or refused), "
                         "reconnects, connected (now), queued (now)",
                         GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  gst_element_class_set_static_metadata(
      element_class, "NPU results publisher", "Sink/Network",
      "Publishes each frame's results as JSON to an MQTT broker (queued while disconnected, "
      "reconnecting) or appends them to a file; frames pass through",
      "gst-npu developers");
  filter_class->start = gst_npu_publish_start;
  filter_class->stop = gst_npu_publish_stop;
  filter_class->stream_new = gst_npu_publish_stream_new;
  filter_class->stream_free = g_free;
  filter_class->process = gst_npu_publish_process;
  GST_DEBUG_CATEGORY_INIT(gst_npu_publish_debug, "npupublish", 0, "NPU results publisher");
  mosquitto_lib_init();
}

static void gst_npu_publish_init(GstNpuPublish *self)
{
  g_mutex_init(&self->lock);
  g_mutex_init(&self->queue_lock);
  g_cond_init(&self->queue_changed);
  g_queue_init(&self->queue);
  self->settings.host = g_strdup(DEFAULT_HOST);
  self->settings.port = DEFAULT_PORT;
  self->settings.topic = g_strdup(DEFAULT_TOPIC);
  self->settings.keep_alive = DEFAULT_KEEP_ALIVE;
  self->settings.max_queue = DEFAULT_MAX_QUEUE;
}
