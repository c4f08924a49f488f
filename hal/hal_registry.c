/* The backends compiled into libnpu. The CPU backend is always present and
 * first, so it is the default device; new backends add one line here.
 * Backends built outside libnpu (a test backend, a vendor's plug-in linked
 * into the application) are added with npu_hal_backend_add() before the
 * first device is opened. */
#include <stdatomic.h>

#include "cpu/cpu_internal.h"
#include "npu_hal.h"
#ifdef NPU_HAVE_VULKAN
#include "vulkan/vk_internal.h"
#endif

static const npu_hal_backend *const built_in[] = {
    &npu_cpu_backend,
#ifdef NPU_HAVE_VULKAN
    &npu_vulkan_backend,
#endif
};

#define BUILT_IN (sizeof built_in / sizeof built_in[0])
#define MAX_ADDED 8

static const npu_hal_backend *_Atomic added[MAX_ADDED];
static atomic_uint added_count;

uint32_t npu_hal_backend_count(void)
{
  return (uint32_t)BUILT_IN + atomic_load(&added_count);
}

const npu_hal_backend *npu_hal_backend_get(uint32_t index)
{
  if (index < BUILT_IN)
    return built_in[index];
  index -= (uint32_t)BUILT_IN;
  return index < atomic_load(&added_count) ? atomic_load(&added[index]) : NULL;
}

npu_status npu_hal_backend_add(const npu_hal_backend *backend)
{
  unsigned slot = atomic_load(&added_count);
  if (slot >= MAX_ADDED)
    return npu_set_error(NPU_ERROR_NOT_SUPPORTED, "no room for backend '%s': %d backends "
                         "may be added", backend->name, MAX_ADDED);
  atomic_store(&added[slot], backend);
  atomic_store(&added_count, slot + 1);
  return NPU_OK;
}
