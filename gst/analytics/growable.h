/* Scratch arrays that grow on demand and are kept between calls, so that
 * steady-state updates allocate nothing. */
#ifndef NPU_ANALYTICS_GROWABLE_H
#define NPU_ANALYTICS_GROWABLE_H

#include <stdbool.h>
#include <stdlib.h>

/* Room for @count items of @size in *buffer (capacity in items, at least
 * doubled when it grows); false when memory runs out (the buffer kept). */
static inline bool npu_reserve(void **buffer, size_t *capacity, size_t count, size_t size)
{
  if (count <= *capacity)
    return true;
  size_t grown_count = count < 2 * *capacity ? 2 * *capacity : count;
  void *grown = realloc(*buffer, grown_count * size);
  if (!grown)
    return false;
  *buffer = grown;
  *capacity = grown_count;
  return true;
}

#endif
