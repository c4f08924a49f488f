/* CPU backend: the host is the device. Device memory is memfd-backed so that
 * every buffer can be exported as an fd and mapped by another element or
 * process, and any mappable fd (memfd, dma-buf) is imported by mapping it;
 * streams are worker threads (cpu_stream.c); all compute runs on one
 * engine thread and its team, sized by the thread budget (cpu_engine.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_internal.h"
#include "fd_map.h"
#include "cpu_stream.h"
#include "cpu_engine.h"
#include "cpu/kernels/cpu_kernels.h"
#include "cpu/vpp/cpu_vpp.h"

struct npu_hal_device {
  uint32_t thread_budget;
  bool opaque_memory;           /* NPU_CPU_DEVICE_MEMORY=opaque: act like a discrete device */
  uint32_t row_alignment;       /* bytes; NPU_CPU_ROW_ALIGNMENT overrides the default */
  uint64_t memory_limit;        /* bytes the device may hand out */
  atomic_uint_fast64_t bytes_in_use;
  cpu_engine *engine;
  char name[64];
};

struct npu_hal_buffer {
  void *ptr;          /* the buffer's first byte */
  size_t size;        /* bytes asked for */
  void *mapping;      /* our page-aligned mapping of `fd`; NULL for imported host memory */
  size_t mapped_size;
  int fd;             /* memfd, or our duplicate of an imported fd; -1 for host memory */
  size_t fd_offset;   /* where the buffer's bytes start in `fd` */
  bool reserved;      /* counted in the device's bytes_in_use (our own allocations) */
};

static size_t page_size(void)
{
  long size = sysconf(_SC_PAGESIZE);
  return size > 0 ? (size_t)size : 4096;
}

/* The environment variable `name` as "123", "64k", "512M" or "2G" (bytes;
 * *value 0 when unset or empty). Anything else (signs, spaces, other
 * suffixes, trailing text, more than 64 bits) is refused, naming it. */
static npu_status env_bytes(const char *name, uint64_t *value)
{
  const char *text = getenv(name);
  *value = 0;
  if (!text || !*text)
    return NPU_OK;
  const char *digits_end = text;
  while (*digits_end >= '0' && *digits_end <= '9')
    digits_end++;
  int shift = 0;
  switch (*digits_end) {
  case 'k': case 'K': shift = 10; break;
  case 'm': case 'M': shift = 20; break;
  case 'g': case 'G': shift = 30; break;
  default: break;
  }
  const char *end = shift ? digits_end + 1 : digits_end;
  errno = 0;
  unsigned long long number = strtoull(text, NULL, 10);
  if (digits_end == text || *end != '\0' || errno == ERANGE || number > UINT64_MAX >> shift)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "%s='%s' is not a byte count: give digits with an optional k, M or G "
                         "suffix (e.g. 512M), at most 2^64 - 1 bytes", name, text);
  *value = (uint64_t)number << shift;
  return NPU_OK;
}

/* The CPU reads rows wherever they are; 4 bytes is what GStreamer's default
 * video layouts already give every plane, so by default no frame changes. */
#define CPU_DEFAULT_ROW_ALIGNMENT 4
#define CPU_MAX_ROW_ALIGNMENT 4096

/* NPU_CPU_ROW_ALIGNMENT: the row alignment the device asks of image planes,
 * so that tests can make pools lay frames out with strides of their own. A
 * power of two from 1 to 4096 bytes (k suffix allowed); anything else is
 * refused, naming it. */
static npu_status env_row_alignment(uint32_t *alignment)
{
  uint64_t value;
  npu_status status = env_bytes("NPU_CPU_ROW_ALIGNMENT", &value);
  *alignment = CPU_DEFAULT_ROW_ALIGNMENT;
  if (status != NPU_OK)
    return status;
  const char *text = getenv("NPU_CPU_ROW_ALIGNMENT");
  if (!text || !*text)
    return NPU_OK;
  if (value == 0 || value > CPU_MAX_ROW_ALIGNMENT || (value & (value - 1)) != 0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "NPU_CPU_ROW_ALIGNMENT='%s' is not a row alignment: give a power of two "
                         "from 1 to %d bytes", text, CPU_MAX_ROW_ALIGNMENT);
  *alignment = (uint32_t)value;
  return NPU_OK;
}

static uint64_t meminfo_kib(const char *key)
{
  FILE *file = fopen("/proc/meminfo", "r");
  if (!file)
    return 0;
  char line[256];
  unsigned long long kib = 0;
  size_t key_len = strlen(key);
  while (fgets(line, sizeof line, file)) {
    if (strncmp(line, key, key_len) == 0 && line[key_len] == ':') {
      sscanf(line + key_len + 1, "%llu", &kib);
      break;
    }
  }
  fclose(file);
  return kib;
}

static void read_cpu_model(char *name, size_t size)
{
  snprintf(name, size, "CPU");
  FILE *file = fopen("/proc/cpuinfo", "r");
  if (!file)
    return;
  char line[256];
  while (fgets(line, sizeof line, file)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      colon += 2;
      colon[strcspn(colon, "\n")] = '\0';
      snprintf(name, size, "CPU (%s)", colon);
      break;
    }
  }
  fclose(file);
}

static uint32_t cpu_device_count(void)
{
  return 1;
}

static npu_status cpu_device_open(uint32_t index, npu_hal_device **out)
{
  if (index != 0)
    return npu_set_error(NPU_ERROR_NOT_FOUND, "the CPU backend has one device (index 0), not %u",
                         index);
  npu_hal_device *device = calloc(1, sizeof *device);
  if (!device)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory opening the CPU device");
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t budget, limit;
  npu_status status = env_bytes("NPU_NUM_THREADS", &budget);
  if (status == NPU_OK && budget > UINT32_MAX)
    status = npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "NPU_NUM_THREADS=%llu is too many threads",
                           (unsigned long long)budget);
  if (status == NPU_OK)
    status = env_bytes("NPU_CPU_MEMORY_LIMIT", &limit);
  if (status == NPU_OK)
    status = env_row_alignment(&device->row_alignment);
  if (status != NPU_OK) {
    free(device);
    return status;
  }
  device->thread_budget = budget ? (uint32_t)budget : (cores > 0 ? (uint32_t)cores : 1);
  uint64_t physical = meminfo_kib("MemTotal") * 1024;
  device->memory_limit = limit && (limit < physical || !physical) ? limit : physical;
  read_cpu_model(device->name, sizeof device->name);
  /* Lets users and tests exercise the paths a device without host-visible
   * memory takes (staging copies) on any machine. */
  const char *memory_mode = getenv("NPU_CPU_DEVICE_MEMORY");
  device->opaque_memory = memory_mode && strcmp(memory_mode, "opaque") == 0;
  device->engine = cpu_engine_create(device->thread_budget);
  if (!device->engine) {
    free(device);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "cannot start the CPU compute engine");
  }
  *out = device;
  return NPU_OK;
}

static void cpu_device_close(npu_hal_device *device)
{
  cpu_engine_destroy(device->engine);
  free(device);
}

static void cpu_device_properties(npu_hal_device *device, npu_device_properties *props)
{
  snprintf(props->name, sizeof props->name, "%s", device->name);
  snprintf(props->backend, sizeof props->backend, "cpu");
  props->memory_total = device->memory_limit;
  uint64_t in_use = atomic_load(&device->bytes_in_use);
  uint64_t free_bytes = in_use < device->memory_limit ? device->memory_limit - in_use : 0;
  uint64_t available = meminfo_kib("MemAvailable") * 1024;
  props->memory_free = available && available < free_bytes ? available : free_bytes;
  props->compute_units = device->thread_budget;
  props->row_alignment = device->row_alignment;
  props->caps = (npu_device_caps){
      .host_visible_memory = !device->opaque_memory,
      .host_import = !device->opaque_memory,
      .fd_export = true,
      .dmabuf_export = false,
      .fd_import = true,
      .async_copy = true,
      .cross_stream_events = true,
      .max_streams = 0,
      .bf16_compute = cpu_dnnl_bf16_products(),
  };
}

static bool reserve_device_bytes(npu_hal_device *device, size_t size)
{
  uint64_t in_use = atomic_load(&device->bytes_in_use);
  do {
    if (size > device->memory_limit - in_use || in_use > device->memory_limit)
      return false;
  } while (!atomic_compare_exchange_weak(&device->bytes_in_use, &in_use, in_use + size));
  return true;
}

/* Maps the `size` bytes at `offset` in `fd` (taken over: closed by
 * cpu_buffer_free) into a new buffer descriptor; closes `fd` on failure. */
static npu_status map_fd_buffer(int fd, size_t offset, size_t size, bool own_fd,
                                npu_hal_buffer **out)
{
  npu_hal_buffer *buffer = calloc(1, sizeof *buffer);
  if (!buffer) {
    if (own_fd)
      close(fd);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory for a buffer descriptor");
  }
  npu_fd_map map;
  npu_status status = own_fd ? npu_fd_map_own(fd, offset, size, &map)
                             : npu_fd_map_import(fd, offset, size, &map);
  if (status != NPU_OK) {
    free(buffer);
    return status;
  }
  *buffer = (npu_hal_buffer){.ptr = map.ptr, .size = size, .mapping = map.mapping,
                             .mapped_size = map.mapped_size, .fd = map.fd, .fd_offset = offset};
  *out = buffer;
  return NPU_OK;
}

static npu_status cpu_buffer_alloc(npu_hal_device *device, size_t size, npu_hal_buffer **out)
{
  size_t page = page_size();
  size_t rounded = (size + page - 1) / page * page;
  if (!reserve_device_bytes(device, rounded))
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY,
                         "CPU device out of memory: %zu bytes asked, %llu of %llu in use",
                         size, (unsigned long long)atomic_load(&device->bytes_in_use),
                         (unsigned long long)device->memory_limit);
  npu_status status;
  int fd = memfd_create("npu-buffer", MFD_CLOEXEC);
  if (fd < 0) {
    status = npu_set_error(NPU_ERROR_IO, "memfd_create failed: %s", strerror(errno));
  } else if (ftruncate(fd, (off_t)rounded) != 0) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "cannot size a %zu-byte device buffer: %s",
                           size, strerror(errno));
    close(fd);
  } else {
    status = map_fd_buffer(fd, 0, size, true, out);
  }
  if (status != NPU_OK) {
    atomic_fetch_sub(&device->bytes_in_use, rounded);
    return status;
  }
  (*out)->reserved = true;
  return NPU_OK;
}

static void cpu_buffer_free(npu_hal_device *device, npu_hal_buffer *buffer)
{
  if (buffer->mapping) {
    munmap(buffer->mapping, buffer->mapped_size);
    close(buffer->fd);
  }
  if (buffer->reserved)
    atomic_fetch_sub(&device->bytes_in_use, buffer->mapped_size);
  free(buffer);
}

void *npu_cpu_buffer_ptr(npu_hal_buffer *buffer)
{
  return buffer->ptr;
}

void *npu_cpu_mem_ref_ptr(npu_hal_mem_ref ref)
{
  char *base = ref.buffer ? ref.buffer->ptr : ref.host;
  return base + ref.offset;
}

static npu_status cpu_buffer_import_host(npu_hal_device *device, void *host_ptr, size_t size,
                                         npu_hal_buffer **out)
{
  (void)device;
  npu_hal_buffer *buffer = calloc(1, sizeof *buffer);
  if (!buffer)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory importing a buffer");
  *buffer = (npu_hal_buffer){.ptr = host_ptr, .size = size, .fd = -1};
  *out = buffer;
  return NPU_OK;
}

static npu_status cpu_buffer_export_fd(npu_hal_buffer *buffer, int *fd, size_t *offset)
{
  if (buffer->fd < 0)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED,
                         "imported host memory has no file descriptor to export");
  *fd = fcntl(buffer->fd, F_DUPFD_CLOEXEC, 0);
  if (*fd < 0)
    return npu_set_error(NPU_ERROR_IO, "cannot duplicate the buffer's fd: %s", strerror(errno));
  *offset = buffer->fd_offset;
  return NPU_OK;
}

/* Any fd whose memory can be mapped (memfd, dma-buf, shm) is imported by
 * mapping it: the device reads and writes those very pages. */
static npu_status cpu_buffer_import_fd(npu_hal_device *device, int fd, size_t offset, size_t size,
                                       npu_hal_buffer **out)
{
  (void)device;
  return map_fd_buffer(fd, offset, size, false, out);
}

static npu_status cpu_host_alloc(npu_hal_device *device, size_t size, void **host_ptr)
{
  (void)device;
  if (posix_memalign(host_ptr, NPU_BUFFER_ALIGNMENT, size) != 0)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of host memory (%zu bytes)", size);
  return NPU_OK;
}

static void cpu_host_free(npu_hal_device *device, void *host_ptr)
{
  (void)device;
  free(host_ptr);
}

static npu_status cpu_copy_or_fill(npu_hal_stream *stream, npu_hal_mem_ref dst,
                                   const void *src, int fill_value, size_t size,
                                   npu_hal_task_fn done, void *done_data)
{
  void *dst_ptr = npu_cpu_mem_ref_ptr(dst);
  if (stream)
    return cpu_stream_submit_copy(stream, dst_ptr, src, fill_value, size, done, done_data);
  if (fill_value >= 0)
    memset(dst_ptr, fill_value, size);
  else
    memmove(dst_ptr, src, size);
  if (done)
    done(done_data);
  return NPU_OK;
}

static npu_status cpu_copy(npu_hal_device *device, npu_hal_stream *stream, npu_hal_mem_ref dst,
                           npu_hal_mem_ref src, size_t size, npu_hal_task_fn done,
                           void *done_data)
{
  (void)device;
  return cpu_copy_or_fill(stream, dst, npu_cpu_mem_ref_ptr(src), -1, size, done, done_data);
}

static npu_status cpu_fill(npu_hal_device *device, npu_hal_stream *stream, npu_hal_mem_ref dst,
                           int value, size_t size, npu_hal_task_fn done, void *done_data)
{
  (void)device;
  return cpu_copy_or_fill(stream, dst, NULL, value & 0xff, size, done, done_data);
}

typedef struct pitched_copy {
  uint8_t *dst;
  const uint8_t *src;
  size_t dst_pitch, src_pitch, row_bytes, rows;
  npu_hal_task_fn done;
  void *done_data;
} pitched_copy;

static void copy_rows(void *data)
{
  pitched_copy *copy = data;
  for (size_t y = 0; y < copy->rows; y++)
    memcpy(copy->dst + y * copy->dst_pitch, copy->src + y * copy->src_pitch, copy->row_bytes);
  if (copy->done)
    copy->done(copy->done_data);
  free(copy);
}

static npu_status cpu_copy_2d(npu_hal_device *device, npu_hal_stream *stream,
                              npu_hal_mem_ref dst, size_t dst_pitch, npu_hal_mem_ref src,
                              size_t src_pitch, size_t row_bytes, size_t rows,
                              npu_hal_task_fn done, void *done_data)
{
  (void)device;
  pitched_copy *copy = malloc(sizeof *copy);
  if (!copy)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory queuing a copy");
  *copy = (pitched_copy){npu_cpu_mem_ref_ptr(dst), npu_cpu_mem_ref_ptr(src), dst_pitch, src_pitch,
                         row_bytes, rows, done, done_data};
  if (!stream) {
    copy_rows(copy);
    return NPU_OK;
  }
  npu_status status = cpu_stream_submit(stream, copy_rows, copy);
  if (status != NPU_OK)
    free(copy);
  return status;
}

uint32_t npu_cpu_thread_budget(npu_hal_device *device)
{
  return device->thread_budget;
}

void npu_cpu_run_on_engine(npu_hal_device *device, npu_cpu_job_fn fn, void *ctx)
{
  cpu_engine_call(device->engine, fn, ctx);
}

void npu_cpu_run_steps_on_engine(npu_hal_device *device, npu_cpu_step_fn step, void *ctx)
{
  cpu_engine_call_steps(device->engine, step, ctx);
}

void npu_cpu_parallel_for(npu_hal_device *device, size_t n, npu_cpu_parallel_fn fn, void *ctx)
{
  cpu_engine_parallel_for(device->engine, n, fn, ctx);
}

const npu_hal_backend npu_cpu_backend = {
    .name = "cpu",
    .device_count = cpu_device_count,
    .device_open = cpu_device_open,
    .device_close = cpu_device_close,
    .device_properties = cpu_device_properties,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .buffer_host_ptr = npu_cpu_buffer_ptr,
    .buffer_import_host = cpu_buffer_import_host,
    .buffer_export_fd = cpu_buffer_export_fd,
    .buffer_import_fd = cpu_buffer_import_fd,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_host_free,
    .copy = cpu_copy,
    .fill = cpu_fill,
    .copy_2d = cpu_copy_2d,
    .stream_create = cpu_stream_create,
    .stream_destroy = cpu_stream_destroy,
    .stream_submit = cpu_stream_submit,
    .stream_synchronize = cpu_stream_synchronize,
    .stream_idle = cpu_stream_idle,
    .stream_wait_event = cpu_stream_wait_event,
    .stream_stats = cpu_stream_stats,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .event_synchronize = cpu_event_synchronize,
    .event_done = cpu_event_done,
    .event_elapsed_ms = cpu_event_elapsed_ms,
    .vpp = &npu_cpu_vpp_ops,
    .graph = &npu_cpu_graph_ops,
};
