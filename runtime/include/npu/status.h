/* gst-npu runtime: status codes and error reporting.
 *
 * Every runtime call returns an npu_status. On failure the calling thread's
 * last-error message says what went wrong in words; it stays valid until the
 * next failing call on the same thread. */
#ifndef NPU_STATUS_H
#define NPU_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(NPU_BUILDING_LIBRARY)
#define NPU_API __attribute__((visibility("default")))
#else
#define NPU_API
#endif

typedef enum npu_status {
  NPU_OK = 0,
  NPU_ERROR_INVALID_ARGUMENT,   /* NULL pointer, zero size, out-of-range value */
  NPU_ERROR_INVALID_HANDLE,     /* unknown, destroyed or wrong-type handle */
  NPU_ERROR_OUT_OF_MEMORY,      /* host or device memory exhausted */
  NPU_ERROR_NOT_SUPPORTED,      /* the backend or build lacks the capability */
  NPU_ERROR_NOT_FOUND,          /* no such device, backend, file, name */
  NPU_ERROR_NOT_READY,          /* query: work still pending (not a failure) */
  NPU_ERROR_DEVICE_MISMATCH,    /* objects belong to different devices */
  NPU_ERROR_IO,                 /* file or OS call failed */
  NPU_ERROR_INVALID_MODEL,      /* model file malformed or unsupported */
  NPU_ERROR_INTERNAL,           /* a bug: please report */
} npu_status;

/* Short constant name of a status, e.g. "NPU_ERROR_INVALID_HANDLE". */
NPU_API const char *npu_status_name(npu_status status);

/* Readable detail of the calling thread's most recent failure ("" if none). */
NPU_API const char *npu_last_error_message(void);

/* Clears the calling thread's last-error message. */
NPU_API void npu_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
