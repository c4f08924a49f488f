/* Reading an initializer's external data file, contained in the model's
 * directory: lexically and after resolving every symlink. */
#ifndef NPU_EXTERNAL_DATA_H
#define NPU_EXTERNAL_DATA_H

#include <stddef.h>
#include <stdint.h>

#include <npu/status.h>

/* Reads `size` bytes at `offset` of `location` (relative to `base_dir`)
 * into `*bytes`, malloc'd once the file is known to hold them. Refused, with a message naming initializer `tensor`: an
 * absolute location or one with a ".." component, a file that is or lies
 * behind a symlink resolving outside `base_dir`, anything but a regular
 * file, and a file shorter than offset + size. */
npu_status npu_external_data_read(const char *base_dir, const char *tensor, const char *location,
                                  int64_t offset, size_t size, void **bytes);

#endif
