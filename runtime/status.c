/* Status names and the per-thread last-error message. */
#include <stdarg.h>
#include <stdio.h>

#include "npu_hal.h"

static _Thread_local char last_error[512];

NPU_API const char *npu_status_name(npu_status status)
{
  switch (status) {
  case NPU_OK: return "NPU_OK";
  case NPU_ERROR_INVALID_ARGUMENT: return "NPU_ERROR_INVALID_ARGUMENT";
  case NPU_ERROR_INVALID_HANDLE: return "NPU_ERROR_INVALID_HANDLE";
  case NPU_ERROR_OUT_OF_MEMORY: return "NPU_ERROR_OUT_OF_MEMORY";
  case NPU_ERROR_NOT_SUPPORTED: return "NPU_ERROR_NOT_SUPPORTED";
  case NPU_ERROR_NOT_FOUND: return "NPU_ERROR_NOT_FOUND";
  case NPU_ERROR_NOT_READY: return "NPU_ERROR_NOT_READY";
  case NPU_ERROR_DEVICE_MISMATCH: return "NPU_ERROR_DEVICE_MISMATCH";
  case NPU_ERROR_IO: return "NPU_ERROR_IO";
  case NPU_ERROR_INVALID_MODEL: return "NPU_ERROR_INVALID_MODEL";
  case NPU_ERROR_INTERNAL: return "NPU_ERROR_INTERNAL";
  }
  return "NPU_ERROR_UNKNOWN";
}

NPU_API const char *npu_last_error_message(void)
{
  return last_error;
}

NPU_API void npu_clear_error(void)
{
  last_error[0] = '\0';
}

npu_status npu_set_error(npu_status status, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  vsnprintf(last_error, sizeof last_error, format, args);
  va_end(args);
  return status;
}
