/* A model's large initializers, droppable from memory (weight_store.h).
 * They share one anonymous mapping, each from a page boundary: dropping is
 * madvise(MADV_DONTNEED) on its pages (they read as zeros until read back),
 * reading back a pread() from the file into the same address, so that every
 * pointer to the data (the graph's, the packed weights' record of where
 * they came from) stays valid. Anonymous memory rather than a mapping of
 * the file, because the file puts the data at any offset and kernels need
 * it aligned. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npu_internal.h"
#include "weight_store.h"

typedef struct stored_initializer {
  size_t offset;      /* in the mapping: a page boundary */
  size_t size;
  size_t file_offset;
  bool droppable;     /* one constant reads it, as the file has it */
  bool unused;        /* no constant reads it: dropped for good */
  bool resident;
  /* A plan found every reader packed it: later plans create those readers'
   * kernels without reading it back. Only such are dropped: other readers
   * (fused addends, constants folded or uploaded) read it unannounced. */
  bool packed;
  unsigned pins;      /* live plans that read it while they run */
} stored_initializer;

struct npu_weight_store {
  uint8_t *mapping;
  size_t mapping_bytes;
  stored_initializer *initializers;
  size_t count;
  int fd;             /* -1: loaded from memory */
  struct stat loaded; /* the file when it was loaded: a changed one is not read again */
  int32_t *of_tensor; /* per graph tensor: its initializer, or -1 */
  size_t tensor_count;
  pthread_mutex_t lock;
  unsigned planners;  /* plans being made */
};

static size_t page_size(void)
{
  return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t pages_of(size_t bytes)
{
  size_t page = page_size();
  return (bytes + page - 1) / page * page;
}

npu_status npu_weight_store_create(const size_t *sizes, const size_t *file_offsets, size_t count,
                                   int fd, npu_weight_store **out)
{
  npu_weight_store *store = calloc(1, sizeof *store);
  if (!store) {
    if (fd >= 0)
      close(fd);
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory loading the weights");
  }
  store->fd = fd;
  pthread_mutex_init(&store->lock, NULL);
  npu_status status = NPU_OK;
  if (fd >= 0 && fstat(fd, &store->loaded) != 0)
    status = npu_set_error(NPU_ERROR_IO, "cannot inspect the model file: %s", strerror(errno));
  store->initializers = calloc(count + 1, sizeof *store->initializers);
  if (!store->initializers && status == NPU_OK)
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory loading the weights");
  size_t total = 0;
  for (size_t i = 0; i < count && status == NPU_OK; i++) {
    stored_initializer *s = &store->initializers[i];
    *s = (stored_initializer){total, sizes[i], file_offsets ? file_offsets[i] : 0, false, false,
                              true, false, 0};
    if (!npu_add_size(total, pages_of(sizes[i]), &total))
      status = npu_set_error(NPU_ERROR_INVALID_MODEL, "the initializers' sizes pass SIZE_MAX");
  }
  store->count = count;
  if (status == NPU_OK && total) {
    void *mapping = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED)
      status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory for %zu bytes of weights",
                             total);
    else
      store->mapping = mapping, store->mapping_bytes = total;
  }
  if (status != NPU_OK) {
    npu_weight_store_destroy(store);
    return status;
  }
  *out = store;
  return NPU_OK;
}

void npu_weight_store_destroy(npu_weight_store *store)
{
  if (!store)
    return;
  if (store->mapping)
    munmap(store->mapping, store->mapping_bytes);
  if (store->fd >= 0)
    close(store->fd);
  pthread_mutex_destroy(&store->lock);
  free(store->initializers);
  free(store->of_tensor);
  free(store);
}

void *npu_weight_store_data(npu_weight_store *store, size_t i)
{
  return store->mapping + store->initializers[i].offset;
}

bool npu_weight_store_holds(const npu_weight_store *store, const void *data)
{
  const uint8_t *p = data;
  return store && store->mapping && p >= store->mapping &&
         p < store->mapping + store->mapping_bytes;
}

/* The initializer whose memory starts at `data`, or -1 (they are in offset order). */
static int32_t initializer_at(const npu_weight_store *store, const void *data)
{
  if (!npu_weight_store_holds(store, data))
    return -1;
  size_t offset = (size_t)((const uint8_t *)data - store->mapping), low = 0, high = store->count;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    if (store->initializers[mid].offset < offset)
      low = mid + 1;
    else
      high = mid;
  }
  return low < store->count && store->initializers[low].offset == offset ? (int32_t)low : -1;
}

static void drop(npu_weight_store *store, stored_initializer *s)
{
  if (!s->resident)
    return;
  madvise(store->mapping + s->offset, pages_of(s->size), MADV_DONTNEED);
  s->resident = false;
}

npu_status npu_weight_store_bind(npu_weight_store *store, const npu_graph *graph)
{
  if (!store)
    return NPU_OK;
  store->of_tensor = malloc((graph->tensor_count + 1) * sizeof *store->of_tensor);
  if (!store->of_tensor)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory loading the weights");
  store->tensor_count = graph->tensor_count;
  /* per initializer: 0 unread, 1 read by one constant as the file has it, more: kept */
  unsigned *readers = calloc(store->count + 1, sizeof *readers);
  if (!readers)
    return npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "out of memory loading the weights");
  bool view_inside = false; /* a constant reads part of one: none is dropped */
  for (size_t t = 0; t < graph->tensor_count; t++) {
    const npu_graph_tensor *gt = &graph->tensors[t];
    int32_t i = gt->constant ? initializer_at(store, gt->data) : -1;
    store->of_tensor[t] = i;
    if (i >= 0)
      readers[i] += gt->rewritten || gt->data_size != store->initializers[i].size ? 2 : 1;
    else if (gt->constant && npu_weight_store_holds(store, gt->data))
      view_inside = true;
  }
  for (size_t i = 0; i < store->count; i++) {
    stored_initializer *s = &store->initializers[i];
    s->droppable = store->fd >= 0 && readers[i] == 1 && !view_inside;
    s->unused = readers[i] == 0 && !view_inside;
    if (s->unused)
      drop(store, s);
  }
  free(readers);
  return NPU_OK;
}

/* Whether the file is the one loaded (same size and modification time). */
static bool file_unchanged(const npu_weight_store *store)
{
  struct stat now;
  return fstat(store->fd, &now) == 0 && now.st_size == store->loaded.st_size &&
         now.st_mtim.tv_sec == store->loaded.st_mtim.tv_sec &&
         now.st_mtim.tv_nsec == store->loaded.st_mtim.tv_nsec;
}

static npu_status read_back(npu_weight_store *store, stored_initializer *s)
{
  if (!file_unchanged(store))
    return npu_set_error(NPU_ERROR_IO, "the model file changed since it was loaded: its "
                         "weights cannot be read again");
  for (size_t done = 0; done < s->size;) {
    ssize_t n = pread(store->fd, store->mapping + s->offset + done, s->size - done,
                      (off_t)(s->file_offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return npu_set_error(NPU_ERROR_IO, "cannot read the model's weights again: %s",
                           n < 0 ? strerror(errno) : "the file is shorter");
    done += (size_t)n;
  }
  s->resident = true;
  return NPU_OK;
}

void npu_weight_store_begin_planning(npu_weight_store *store)
{
  if (!store)
    return;
  pthread_mutex_lock(&store->lock);
  store->planners++;
  pthread_mutex_unlock(&store->lock);
}

/* Drops what no live plan reads. Call with the lock held, no plan being made. */
static void drop_unread(npu_weight_store *store)
{
  for (size_t i = 0; i < store->count; i++) {
    stored_initializer *s = &store->initializers[i];
    if (s->packed && s->pins == 0)
      drop(store, s);
  }
}

void npu_weight_store_end_planning(npu_weight_store *store)
{
  if (!store)
    return;
  pthread_mutex_lock(&store->lock);
  if (--store->planners == 0)
    drop_unread(store);
  pthread_mutex_unlock(&store->lock);
}

static stored_initializer *droppable_of(const npu_weight_store *store, int32_t tensor)
{
  if (!store || !store->of_tensor || tensor < 0 || (size_t)tensor >= store->tensor_count ||
      store->of_tensor[tensor] < 0)
    return NULL;
  stored_initializer *s = &store->initializers[store->of_tensor[tensor]];
  return s->droppable ? s : NULL;
}

bool npu_weight_store_droppable(const npu_weight_store *store, int32_t tensor)
{
  return droppable_of(store, tensor) != NULL;
}

npu_status npu_weight_store_read_back(npu_weight_store *store, int32_t tensor)
{
  stored_initializer *s = droppable_of(store, tensor);
  if (!s)
    return NPU_OK;
  pthread_mutex_lock(&store->lock);
  npu_status status = s->resident ? NPU_OK : read_back(store, s);
  pthread_mutex_unlock(&store->lock);
  return status;
}

bool npu_weight_store_dropped(npu_weight_store *store, int32_t tensor)
{
  stored_initializer *s = droppable_of(store, tensor);
  if (!s)
    return false;
  pthread_mutex_lock(&store->lock);
  bool dropped = !s->resident;
  pthread_mutex_unlock(&store->lock);
  return dropped;
}

bool npu_weight_store_read_while_dropped(npu_weight_store *store, int32_t tensor)
{
  stored_initializer *s = droppable_of(store, tensor);
  if (!s)
    return false;
  size_t bytes = pages_of(s->size), pages = bytes / page_size();
  unsigned char *in_core = malloc(pages ? pages : 1);
  pthread_mutex_lock(&store->lock);
  /* read back meanwhile (by a plan made at once): the reader may have seen either */
  bool read = s->resident || !in_core ||
              mincore(store->mapping + s->offset, bytes, in_core) != 0;
  for (size_t p = 0; !read && p < pages; p++)
    read = in_core[p] & 1;
  pthread_mutex_unlock(&store->lock);
  free(in_core);
  return read;
}

void npu_weight_store_drop(npu_weight_store *store, int32_t tensor)
{
  stored_initializer *s = droppable_of(store, tensor);
  if (!s)
    return;
  pthread_mutex_lock(&store->lock);
  s->packed = true;
  if (store->planners == 1 && s->pins == 0)
    drop(store, s);
  pthread_mutex_unlock(&store->lock);
}

void npu_weight_store_pin(npu_weight_store *store, const int32_t *tensors, size_t count, bool pin)
{
  if (!store)
    return;
  pthread_mutex_lock(&store->lock);
  for (size_t k = 0; k < count; k++) {
    stored_initializer *s = droppable_of(store, tensors[k]);
    if (s && pin)
      s->pins++;
    else if (s)
      s->pins--;
  }
  if (!pin && store->planners == 0)
    drop_unread(store);
  pthread_mutex_unlock(&store->lock);
}

void npu_weight_store_totals(npu_weight_store *store, size_t *resident, size_t *droppable)
{
  *resident = *droppable = 0;
  if (!store)
    return;
  pthread_mutex_lock(&store->lock);
  for (size_t i = 0; i < store->count; i++) {
    const stored_initializer *s = &store->initializers[i];
    *resident += s->resident ? s->size : 0;
    *droppable += s->droppable ? s->size : 0;
  }
  pthread_mutex_unlock(&store->lock);
}
