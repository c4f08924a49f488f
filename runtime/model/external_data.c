/* External data files of initializers (see external_data.h). */
#include "external_data.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npu_checked.h"
#include "npu_hal.h"

static bool has_parent_component(const char *location)
{
  for (const char *c = location; c; c = strchr(c, '/')) {
    c += *c == '/';
    if (strncmp(c, "..", 2) == 0 && (c[2] == '/' || c[2] == '\0'))
      return true;
  }
  return false;
}

/* `path` equal to directory `root` or below it (both resolved). */
static bool is_inside(const char *path, const char *root)
{
  size_t length = strlen(root);
  if (length == 1) /* "/" */
    return true;
  return strncmp(path, root, length) == 0 && path[length] == '/';
}

/* Resolves `location` under `base_dir` into `resolved` (PATH_MAX bytes),
 * inside it. */
static npu_status resolve(const char *base_dir, const char *tensor, const char *location,
                          char *resolved)
{
  if (location[0] == '/' || has_parent_component(location))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': external data path '%s' "
                         "leaves the model's directory", tensor, location);
  char root[PATH_MAX], joined[PATH_MAX];
  if (!realpath(base_dir, root))
    return npu_set_error(NPU_ERROR_IO, "initializer '%s': cannot resolve the model's directory "
                         "'%s': %s", tensor, base_dir, strerror(errno));
  if ((size_t)snprintf(joined, sizeof joined, "%s/%s", root, location) >= sizeof joined)
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': external data path '%s' is "
                         "too long", tensor, location);
  if (!realpath(joined, resolved))
    return npu_set_error(NPU_ERROR_IO, "initializer '%s': cannot open external data '%s': %s",
                         tensor, joined, strerror(errno));
  if (!is_inside(resolved, root))
    return npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': external data '%s' "
                         "resolves through a symlink to '%s', outside the model's directory "
                         "'%s'", tensor, location, resolved, root);
  return NPU_OK;
}

npu_status npu_external_data_read(const char *base_dir, const char *tensor, const char *location,
                                  int64_t offset, size_t size, void **bytes)
{
  *bytes = NULL;
  char path[PATH_MAX];
  npu_status status = resolve(base_dir, tensor, location, path);
  if (status != NPU_OK)
    return status;
  /* O_NOFOLLOW: the resolved path must not have turned into a symlink since. */
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return npu_set_error(NPU_ERROR_IO, "initializer '%s': cannot open external data '%s': %s",
                         tensor, path, strerror(errno));
  struct stat st;
  int64_t end;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': external data '%s' is not "
                           "a regular file", tensor, path);
  } else if (offset < 0 || size > INT64_MAX || !npu_add_i64(offset, (int64_t)size, &end) ||
             end > (int64_t)st.st_size) {
    status = npu_set_error(NPU_ERROR_INVALID_MODEL, "initializer '%s': external data '%s' is "
                           "shorter than offset %lld + %zu bytes", tensor, path,
                           (long long)offset, size);
  } else if (!(*bytes = malloc(size ? size : 1))) {
    status = npu_set_error(NPU_ERROR_OUT_OF_MEMORY, "initializer '%s': out of memory", tensor);
  } else {
    for (size_t done = 0; done < size && status == NPU_OK;) {
      ssize_t got = pread(fd, (char *)*bytes + done, size - done, (off_t)(offset + (int64_t)done));
      if (got > 0)
        done += (size_t)got;
      else if (got == 0 || errno != EINTR)
        status = npu_set_error(NPU_ERROR_IO, "initializer '%s': reading external data '%s': %s",
                               tensor, path, got < 0 ? strerror(errno) : "unexpected end");
    }
  }
  close(fd);
  if (status != NPU_OK) {
    free(*bytes);
    *bytes = NULL;
  }
  return status;
}
