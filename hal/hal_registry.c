/* The backends compiled into libnpu. The CPU backend is always present and
 * first, so it is the default device; new backends add one line here. */
#include "cpu/cpu_internal.h"
#include "npu_hal.h"

static const npu_hal_backend *const backends[] = {
    &npu_cpu_backend,
};

uint32_t npu_hal_backend_count(void)
{
  return sizeof backends / sizeof backends[0];
}

const npu_hal_backend *npu_hal_backend_get(uint32_t index)
{
  return index < npu_hal_backend_count() ? backends[index] : NULL;
}
