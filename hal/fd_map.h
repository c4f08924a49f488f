/* An fd's byte range mapped for reading and writing: how a backend that
 * reaches host memory imports a memfd or dma-buf without copying (the CPU
 * backend uses the mapping as it is, the Vulkan one imports it as a host
 * pointer). */
#ifndef NPU_FD_MAP_H
#define NPU_FD_MAP_H

#include <stddef.h>

#include <npu/npu.h>

typedef struct npu_fd_map {
  int fd;              /* our own, closed by npu_fd_unmap */
  void *mapping;       /* page-aligned */
  size_t mapped_size;  /* whole pages */
  void *ptr;           /* the range's first byte */
} npu_fd_map;

/* Maps `size` bytes from `offset` of `fd`, which becomes the map's (closed
 * on failure too). NPU_ERROR_IO where it cannot be mapped for writing. */
npu_status npu_fd_map_own(int fd, size_t offset, size_t size, npu_fd_map *map);
/* The same for the caller's fd (a duplicate is kept), after checking the
 * range against what it holds: NPU_ERROR_INVALID_ARGUMENT for an fd that is
 * not memory or a range past its end. */
npu_status npu_fd_map_import(int fd, size_t offset, size_t size, npu_fd_map *map);
void npu_fd_unmap(npu_fd_map *map);

#endif
