/* GstNpuMemory. Mapping works on every backend: directly where device memory
 * is host-visible, otherwise through a host staging copy that is downloaded
 * when the device copy is newer and uploaded after a CPU write. Device
 * writes are fenced with a runtime event, so CPU maps and other streams wait
 * for exactly the work that wrote the memory. */
#include "gstnpumemory.h"

GST_DEBUG_CATEGORY_STATIC(gst_npu_memory_debug);
#define GST_CAT_DEFAULT gst_npu_memory_debug

static npu_device *device_copy(npu_device *device)
{
  npu_device_retain(device);
  return device;
}

static void device_free(npu_device *device)
{
  npu_device_release(device);
}

/* So that gst-launch -v and logs can print contexts holding a device. */
static void device_to_string(const GValue *src, GValue *dest)
{
  npu_device *device = g_value_get_boxed(src);
  npu_device_properties props;
  if (device && npu_device_properties_of(device, &props) == NPU_OK)
    g_value_take_string(dest, g_strdup_printf("%u: %s (%s)", props.index, props.name,
                                              props.backend));
  else
    g_value_set_string(dest, "none");
}

G_DEFINE_BOXED_TYPE_WITH_CODE(GstNpuDevice, gst_npu_device, device_copy, device_free,
                              g_value_register_transform_func(g_define_type_id, G_TYPE_STRING,
                                                              device_to_string))

typedef struct _GstNpuMemory {
  GstMemory mem;
  npu_buffer *buffer;
  npu_event *written;   /* fence of the last device write, NULL before one */
  GMutex lock;
  gpointer staging;     /* host copy, devices without host-visible memory */
  gboolean staging_stale;
  gboolean device_stale; /* the staging copy has CPU writes not yet uploaded */
  gboolean host_visible;
} GstNpuMemory;

struct _GstNpuAllocator {
  GstAllocator parent;
  npu_device *device;
  gboolean host_visible;
};

G_DEFINE_TYPE(GstNpuAllocator, gst_npu_allocator, GST_TYPE_ALLOCATOR)

static void log_runtime_error(const char *what, npu_status status)
{
  GST_ERROR("%s failed: %s: %s", what, npu_status_name(status), npu_last_error_message());
}

/* Waits for device writes, then refreshes the staging copy if it is stale. */
static gboolean prepare_host_access(GstNpuMemory *m)
{
  npu_status status;
  if (m->written && (status = npu_event_synchronize(m->written)) != NPU_OK) {
    log_runtime_error("npu_event_synchronize", status);
    return FALSE;
  }
  if (m->host_visible)
    return TRUE;
  if (!m->staging) {
    m->staging = g_try_malloc(m->mem.maxsize);
    if (!m->staging)
      return FALSE;
    m->staging_stale = TRUE;
  }
  if (m->staging_stale) {
    status = npu_memcpy_d2h(m->staging, m->buffer, 0, m->mem.maxsize);
    if (status != NPU_OK) {
      log_runtime_error("npu_memcpy_d2h", status);
      return FALSE;
    }
    m->staging_stale = FALSE;
  }
  return TRUE;
}

static gpointer npu_memory_map(GstMemory *mem, gsize maxsize, GstMapFlags flags)
{
  GstNpuMemory *m = (GstNpuMemory *)mem;
  (void)maxsize;
  gpointer data = NULL;
  g_mutex_lock(&m->lock);
  if (prepare_host_access(m)) {
    if (m->host_visible) {
      npu_status status = npu_buffer_map(m->buffer, NPU_MAP_READ | NPU_MAP_WRITE, &data);
      if (status != NPU_OK)
        log_runtime_error("npu_buffer_map", status);
    } else {
      data = m->staging;
      if (flags & GST_MAP_WRITE)
        m->device_stale = TRUE;
    }
  }
  g_mutex_unlock(&m->lock);
  return data;
}

static void npu_memory_unmap(GstMemory *mem)
{
  GstNpuMemory *m = (GstNpuMemory *)mem;
  g_mutex_lock(&m->lock);
  if (m->host_visible)
    npu_buffer_unmap(m->buffer);
  g_mutex_unlock(&m->lock);
}

static GstMemory *npu_memory_copy(GstMemory *mem, gssize offset, gssize size)
{
  GstNpuMemory *src = (GstNpuMemory *)mem;
  GstNpuAllocator *allocator = GST_NPU_ALLOCATOR(mem->allocator);
  if (size < 0)
    size = (gssize)mem->size - offset;
  npu_buffer *buffer;
  if (npu_buffer_alloc(allocator->device, (size_t)size, &buffer) != NPU_OK)
    return NULL;
  if (!gst_npu_memory_sync_for_device(mem, NULL) ||
      npu_memcpy_d2d(buffer, 0, src->buffer, mem->offset + (size_t)offset, (size_t)size) !=
          NPU_OK) {
    npu_buffer_release(buffer);
    return NULL;
  }
  return gst_npu_memory_wrap(mem->allocator, buffer, (gsize)size);
}

static GstMemory *npu_allocator_alloc(GstAllocator *allocator, gsize size,
                                      GstAllocationParams *params)
{
  GstNpuAllocator *self = GST_NPU_ALLOCATOR(allocator);
  (void)params; /* device buffers are always NPU_BUFFER_ALIGNMENT aligned */
  npu_buffer *buffer;
  npu_status status = npu_buffer_alloc(self->device, size, &buffer);
  if (status != NPU_OK) {
    log_runtime_error("npu_buffer_alloc", status);
    return NULL;
  }
  return gst_npu_memory_wrap(allocator, buffer, size);
}

static void npu_allocator_free(GstAllocator *allocator, GstMemory *mem)
{
  GstNpuMemory *m = (GstNpuMemory *)mem;
  (void)allocator;
  if (m->written)
    npu_event_destroy(m->written); /* safe while pending */
  npu_buffer_release(m->buffer);
  g_free(m->staging);
  g_mutex_clear(&m->lock);
  g_free(m);
}

static void gst_npu_allocator_finalize(GObject *object)
{
  GstNpuAllocator *self = GST_NPU_ALLOCATOR(object);
  npu_device_release(self->device);
  G_OBJECT_CLASS(gst_npu_allocator_parent_class)->finalize(object);
}

static void gst_npu_allocator_class_init(GstNpuAllocatorClass *klass)
{
  GST_ALLOCATOR_CLASS(klass)->alloc = npu_allocator_alloc;
  GST_ALLOCATOR_CLASS(klass)->free = npu_allocator_free;
  G_OBJECT_CLASS(klass)->finalize = gst_npu_allocator_finalize;
  GST_DEBUG_CATEGORY_INIT(gst_npu_memory_debug, "npumemory", 0, "NPU memory");
}

static void gst_npu_allocator_init(GstNpuAllocator *self)
{
  GstAllocator *allocator = GST_ALLOCATOR(self);
  allocator->mem_type = GST_NPU_MEMORY_TYPE_NAME;
  allocator->mem_map = npu_memory_map;
  allocator->mem_unmap = npu_memory_unmap;
  allocator->mem_copy = npu_memory_copy;
  GST_OBJECT_FLAG_SET(allocator, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

GstAllocator *gst_npu_allocator_new(npu_device *device)
{
  GstNpuAllocator *self = g_object_new(GST_TYPE_NPU_ALLOCATOR, NULL);
  gst_object_ref_sink(self);
  npu_device_retain(device);
  self->device = device;
  npu_device_properties props;
  npu_device_properties_of(device, &props);
  self->host_visible = props.caps.host_visible_memory;
  return GST_ALLOCATOR(self);
}

npu_device *gst_npu_allocator_get_device(GstAllocator *allocator)
{
  return GST_NPU_ALLOCATOR(allocator)->device;
}

GstMemory *gst_npu_memory_wrap(GstAllocator *allocator, npu_buffer *buffer, gsize size)
{
  GstNpuMemory *m = g_new0(GstNpuMemory, 1);
  gst_memory_init(GST_MEMORY_CAST(m), 0, allocator, NULL, size, NPU_BUFFER_ALIGNMENT - 1, 0,
                  size);
  m->buffer = buffer;
  m->host_visible = GST_NPU_ALLOCATOR(allocator)->host_visible;
  g_mutex_init(&m->lock);
  return GST_MEMORY_CAST(m);
}

gboolean gst_is_npu_memory(GstMemory *mem)
{
  return mem && mem->allocator && GST_IS_NPU_ALLOCATOR(mem->allocator);
}

gboolean gst_npu_buffer_is_on_device(GstBuffer *buffer, npu_device *device)
{
  guint n = gst_buffer_n_memory(buffer);
  if (n == 0)
    return FALSE;
  for (guint i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory(buffer, i);
    if (!gst_is_npu_memory(mem) || GST_NPU_ALLOCATOR(mem->allocator)->device != device)
      return FALSE;
  }
  return TRUE;
}

npu_buffer *gst_npu_memory_get_buffer(GstMemory *mem)
{
  return ((GstNpuMemory *)mem)->buffer;
}

gboolean gst_npu_memory_sync_for_device(GstMemory *mem, npu_stream *stream)
{
  GstNpuMemory *m = (GstNpuMemory *)mem;
  gboolean ok = TRUE;
  g_mutex_lock(&m->lock);
  if (m->device_stale) { /* upload what the CPU wrote into the staging copy */
    ok = npu_memcpy_h2d(m->buffer, 0, m->staging, mem->maxsize) == NPU_OK;
    m->device_stale = !ok;
  }
  if (ok && m->written)
    ok = (stream ? npu_stream_wait_event(stream, m->written)
                 : npu_event_synchronize(m->written)) == NPU_OK;
  g_mutex_unlock(&m->lock);
  return ok;
}

gboolean gst_npu_memory_mark_written(GstMemory *mem, npu_stream *stream)
{
  GstNpuMemory *m = (GstNpuMemory *)mem;
  npu_status status = NPU_OK;
  g_mutex_lock(&m->lock);
  if (!m->written) {
    npu_device *device;
    npu_stream_device(stream, &device);
    status = npu_event_create(device, NPU_EVENT_DISABLE_TIMING, &m->written);
  }
  if (status == NPU_OK)
    status = npu_event_record(m->written, stream);
  m->staging_stale = TRUE;
  g_mutex_unlock(&m->lock);
  return status == NPU_OK;
}
