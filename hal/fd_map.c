/* Mapping fd ranges for import (fd_map.h). */
#include "fd_map.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npu_hal.h"

npu_status npu_fd_map_own(int fd, size_t offset, size_t size, npu_fd_map *map)
{
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t start = offset / page * page;
  size_t mapped_size = (offset - start + size + page - 1) / page * page;
  void *mapping = mmap(NULL, mapped_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
  if (mapping == MAP_FAILED) {
    int error = errno;
    close(fd);
    return npu_set_error(error == ENOMEM ? NPU_ERROR_OUT_OF_MEMORY : NPU_ERROR_IO,
                         "cannot map %zu bytes at offset %zu of fd %d for reading and writing: "
                         "%s", size, offset, fd, strerror(error));
  }
  *map = (npu_fd_map){fd, mapping, mapped_size, (char *)mapping + (offset - start)};
  return NPU_OK;
}

/* The bytes an fd holds: a file's (memfd, shm) size, else where it seeks to
 * at its end, the way dma-buf documents its size; -1 with errno if neither. */
static off_t fd_size(int fd)
{
  struct stat st;
  if (fstat(fd, &st) != 0)
    return -1;
  return S_ISREG(st.st_mode) ? st.st_size : lseek(fd, 0, SEEK_END);
}

npu_status npu_fd_map_import(int fd, size_t offset, size_t size, npu_fd_map *map)
{
  off_t end = fd_size(fd);
  if (end < 0)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT, "fd %d is not mappable memory: %s", fd,
                         strerror(errno));
  if (offset > (uint64_t)end || size > (uint64_t)end - offset)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "%zu bytes at offset %zu overrun fd %d, which holds %lld bytes", size,
                         offset, fd, (long long)end);
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0)
    return npu_set_error(NPU_ERROR_IO, "cannot duplicate fd %d: %s", fd, strerror(errno));
  return npu_fd_map_own(own, offset, size, map);
}

void npu_fd_unmap(npu_fd_map *map)
{
  if (map->mapping)
    munmap(map->mapping, map->mapped_size);
  if (map->fd >= 0)
    close(map->fd);
  *map = (npu_fd_map){.fd = -1};
}
