/* Devices: the global index over all backends, one shared object per open
 * device, properties, statistics, and the device's set of streams. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"

#define MAX_OPEN_DEVICES 64

struct npu_device {
  atomic_uint refcount;
  uint32_t index;
  const npu_hal_backend *backend;
  npu_hal_device *hal;
  npu_device_caps caps; /* fixed for the device's life: read once at open */

  atomic_uint_fast64_t allocations, frees, bytes_allocated, bytes_allocated_peak, imports;
  atomic_uint_fast64_t bytes_copied[3]; /* by npu_copy_kind */
  atomic_uint_fast64_t copies;

  pthread_mutex_t streams_lock;
  npu_hal_stream **streams;
  size_t stream_count, stream_capacity;
};

static pthread_mutex_t open_devices_lock = PTHREAD_MUTEX_INITIALIZER;
static npu_device *open_devices[MAX_OPEN_DEVICES];

/* Maps a global device index to (backend, index within the backend). */
static npu_status locate_device(uint32_t index, const npu_hal_backend **backend,
                                uint32_t *local_index)
{
  uint32_t first = 0;
  for (uint32_t b = 0; b < npu_hal_backend_count(); b++) {
    const npu_hal_backend *candidate = npu_hal_backend_get(b);
    uint32_t count = candidate->device_count();
    if (index < first + count) {
      *backend = candidate;
      *local_index = index - first;
      return NPU_OK;
    }
    first += count;
  }
  return npu_set_error(NPU_ERROR_NOT_FOUND, "no device %u: %u device(s) present", index, first);
}

NPU_API npu_status npu_backend_count(uint32_t *count)
{
  if (!count)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_backend_count: count is NULL");
  *count = npu_hal_backend_count();
  return NPU_OK;
}

NPU_API npu_status npu_backend_name(uint32_t index, const char **name)
{
  if (!name)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_backend_name: name is NULL");
  const npu_hal_backend *backend = npu_hal_backend_get(index);
  if (!backend)
    return npu_set_error(NPU_ERROR_NOT_FOUND, "no backend %u: %u backend(s) compiled in", index,
                         npu_hal_backend_count());
  *name = backend->name;
  return NPU_OK;
}

NPU_API npu_status npu_device_count(uint32_t *count)
{
  if (!count)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_device_count: count is NULL");
  uint32_t total = 0;
  for (uint32_t b = 0; b < npu_hal_backend_count(); b++)
    total += npu_hal_backend_get(b)->device_count();
  *count = total;
  return NPU_OK;
}

NPU_API npu_status npu_device_open(uint32_t index, npu_device **out)
{
  if (!out)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_device_open: device is NULL");
  if (index >= MAX_OPEN_DEVICES)
    return npu_set_error(NPU_ERROR_NOT_FOUND, "no device %u", index);
  const npu_hal_backend *backend = NULL;
  uint32_t local_index = 0;
  npu_status status = locate_device(index, &backend, &local_index);
  if (status != NPU_OK)
    return status;

  pthread_mutex_lock(&open_devices_lock);
  npu_device *device = open_devices[index];
  if (device) {
    atomic_fetch_add(&device->refcount, 1);
    goto done;
  }
  device = calloc(1, sizeof *device);
  if (!device) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory opening device %u",
                           index);
    goto done;
  }
  status = backend->device_open(local_index, &device->hal);
  if (status != NPU_OK) {
    free(device);
    device = NULL;
    goto done;
  }
  atomic_init(&device->refcount, 1);
  device->index = index;
  device->backend = backend;
  npu_device_properties props = {0};
  backend->device_properties(device->hal, &props);
  device->caps = props.caps;
  pthread_mutex_init(&device->streams_lock, NULL);
  open_devices[index] = device;
  npu_handle_register(device, NPU_HANDLE_DEVICE);
done:
  pthread_mutex_unlock(&open_devices_lock);
  if (status == NPU_OK)
    *out = device;
  return status;
}

static uint32_t env_index(const char *name, bool *present)
{
  const char *text = getenv(name);
  *present = text && *text;
  return *present ? (uint32_t)strtoul(text, NULL, 10) : 0;
}

NPU_API npu_status npu_device_open_by_backend(const char *backend_name, uint32_t device_index,
                                              npu_device **out)
{
  if (!backend_name || !out)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_device_open_by_backend: backend or device is NULL");
  uint32_t first = 0;
  for (uint32_t b = 0; b < npu_hal_backend_count(); b++) {
    const npu_hal_backend *backend = npu_hal_backend_get(b);
    uint32_t count = backend->device_count();
    if (strcmp(backend->name, backend_name) == 0) {
      if (device_index >= count)
        return npu_set_error(NPU_ERROR_NOT_FOUND, "backend '%s' has %u device(s), no device %u",
                             backend_name, count, device_index);
      return npu_device_open(first + device_index, out);
    }
    first += count;
  }
  return npu_set_error(NPU_ERROR_NOT_FOUND, "no backend named '%s' is compiled in",
                       backend_name);
}

NPU_API npu_status npu_device_open_default(npu_device **out)
{
  bool has_index;
  uint32_t index = env_index("NPU_DEVICE", &has_index);
  const char *backend = getenv("NPU_BACKEND");
  if (backend && *backend)
    return npu_device_open_by_backend(backend, index, out);
  return npu_device_open(index, out);
}

NPU_API npu_status npu_device_retain(npu_device *device)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status == NPU_OK)
    atomic_fetch_add(&device->refcount, 1);
  return status;
}

NPU_API npu_status npu_device_release(npu_device *device)
{
  pthread_mutex_lock(&open_devices_lock);
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  bool last = status == NPU_OK && atomic_fetch_sub(&device->refcount, 1) == 1;
  if (last) {
    open_devices[device->index] = NULL;
    npu_handle_unregister(device, NPU_HANDLE_DEVICE, "device");
  }
  pthread_mutex_unlock(&open_devices_lock);
  if (last) {
    device->backend->device_close(device->hal);
    pthread_mutex_destroy(&device->streams_lock);
    free(device->streams);
    free(device);
  }
  return status;
}

NPU_API npu_status npu_device_properties_of(npu_device *device, npu_device_properties *props)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  if (!props)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_device_properties_of: props is NULL");
  memset(props, 0, sizeof *props);
  device->backend->device_properties(device->hal, props);
  props->index = device->index;
  /* A backend that names no alignment (or not a power of two) takes rows as they come. */
  if (props->row_alignment == 0 || (props->row_alignment & (props->row_alignment - 1)) != 0)
    props->row_alignment = 1;
  return NPU_OK;
}

NPU_API npu_status npu_device_get_properties(uint32_t index, npu_device_properties *props)
{
  if (!props)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_device_get_properties: props is NULL");
  npu_device *device;
  npu_status status = npu_device_open(index, &device);
  if (status != NPU_OK)
    return status;
  status = npu_device_properties_of(device, props);
  npu_device_release(device);
  return status;
}

NPU_API npu_status npu_device_get_stats(npu_device *device, npu_device_stats *stats)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  if (!stats)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "npu_device_get_stats: stats is NULL");
  *stats = (npu_device_stats){
      .allocations = atomic_load(&device->allocations),
      .frees = atomic_load(&device->frees),
      .bytes_allocated = atomic_load(&device->bytes_allocated),
      .bytes_allocated_peak = atomic_load(&device->bytes_allocated_peak),
      .imports = atomic_load(&device->imports),
      .bytes_h2d = atomic_load(&device->bytes_copied[NPU_COPY_H2D]),
      .bytes_d2h = atomic_load(&device->bytes_copied[NPU_COPY_D2H]),
      .bytes_d2d = atomic_load(&device->bytes_copied[NPU_COPY_D2D]),
      .copies = atomic_load(&device->copies),
  };
  return NPU_OK;
}

NPU_API npu_status npu_device_synchronize(npu_device *device)
{
  npu_status status = npu_handle_check(device, NPU_HANDLE_DEVICE, "device");
  if (status != NPU_OK)
    return status;
  pthread_mutex_lock(&device->streams_lock);
  for (size_t i = 0; i < device->stream_count && status == NPU_OK; i++)
    status = device->backend->stream_synchronize(device->streams[i]);
  pthread_mutex_unlock(&device->streams_lock);
  return status;
}

const npu_hal_backend *npu_device_backend(npu_device *device)
{
  return device->backend;
}

npu_hal_device *npu_device_hal(npu_device *device)
{
  return device->hal;
}

const npu_device_caps *npu_device_caps_of(npu_device *device)
{
  return &device->caps;
}

void npu_device_count_copy(npu_device *device, npu_copy_kind kind, size_t bytes)
{
  atomic_fetch_add(&device->bytes_copied[kind], bytes);
  atomic_fetch_add(&device->copies, 1);
}

void npu_device_count_allocation(npu_device *device, size_t bytes)
{
  atomic_fetch_add(&device->allocations, 1);
  uint64_t live = atomic_fetch_add(&device->bytes_allocated, bytes) + bytes;
  uint64_t peak = atomic_load(&device->bytes_allocated_peak);
  while (live > peak && !atomic_compare_exchange_weak(&device->bytes_allocated_peak, &peak, live))
    ;
}

void npu_device_count_free(npu_device *device, size_t bytes)
{
  atomic_fetch_add(&device->frees, 1);
  atomic_fetch_sub(&device->bytes_allocated, bytes);
}

void npu_device_count_import(npu_device *device)
{
  atomic_fetch_add(&device->imports, 1);
}

npu_status npu_device_track_stream(npu_device *device, npu_hal_stream *stream)
{
  npu_status status = NPU_OK;
  pthread_mutex_lock(&device->streams_lock);
  if (device->stream_count == device->stream_capacity) {
    size_t capacity = device->stream_capacity ? device->stream_capacity * 2 : 8;
    npu_hal_stream **grown = realloc(device->streams, capacity * sizeof *grown);
    if (!grown) {
      status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory tracking a stream");
      goto done;
    }
    device->streams = grown;
    device->stream_capacity = capacity;
  }
  device->streams[device->stream_count++] = stream;
done:
  pthread_mutex_unlock(&device->streams_lock);
  return status;
}

void npu_device_untrack_stream(npu_device *device, npu_hal_stream *stream)
{
  pthread_mutex_lock(&device->streams_lock);
  for (size_t i = 0; i < device->stream_count; i++) {
    if (device->streams[i] == stream) {
      device->streams[i] = device->streams[--device->stream_count];
      break;
    }
  }
  pthread_mutex_unlock(&device->streams_lock);
}
