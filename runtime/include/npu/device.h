/* gst-npu runtime: backends and devices.
 *
 * A device is opened once and shared by reference: npu_device_open() returns
 * a new reference, npu_device_release() drops it. All device calls are
 * thread-safe. Every other object (stream, event, buffer, pool) holds a
 * reference on its device. */
#ifndef NPU_DEVICE_H
#define NPU_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <npu/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npu_device npu_device;

/* What a backend's devices can do: test capabilities, not versions. */
typedef struct npu_device_caps {
  bool host_visible_memory; /* device buffers can be mapped for the CPU directly */
  bool host_import;         /* host memory can be wrapped as a device buffer without copy */
  bool fd_export;           /* device buffers can be exported as a file descriptor */
  bool dmabuf_export;       /* ... and that fd is a real dma-buf (else memfd) */
  bool fd_import;           /* a dma-buf or memfd can be wrapped as a device buffer */
  bool async_copy;          /* copies can be queued on streams */
  bool cross_stream_events; /* a stream can wait on another stream's event on the device */
  uint32_t max_streams;     /* 0 = no fixed limit */
  bool bf16_compute;        /* float32 convolutions and matrix products can run on
                               bfloat16 inputs (NPU_PRECISION_BF16; else it is ignored) */
} npu_device_caps;

typedef struct npu_device_properties {
  char name[64];            /* e.g. "CPU (AMD EPYC ...)" */
  char backend[16];         /* e.g. "cpu" */
  uint32_t index;           /* global device index */
  uint64_t memory_total;    /* bytes */
  uint64_t memory_free;     /* bytes */
  uint32_t compute_units;   /* cores/threads the backend uses */
  uint32_t row_alignment;   /* bytes (a power of two): image rows and planes start at multiples
                             * of this in the frames the device works on fastest */
  npu_device_caps caps;
} npu_device_properties;

/* Cumulative counters of a device, for proving zero copy and zero allocation. */
typedef struct npu_device_stats {
  uint64_t allocations;         /* backend buffer allocations made */
  uint64_t frees;               /* backend buffer frees */
  uint64_t bytes_allocated;     /* device bytes live */
  uint64_t bytes_allocated_peak;
  uint64_t imports;             /* host-memory imports (zero copy) */
  uint64_t bytes_h2d;           /* bytes copied host -> device */
  uint64_t bytes_d2h;           /* bytes copied device -> host */
  uint64_t bytes_d2d;           /* bytes copied device -> device */
  uint64_t copies;              /* copy operations of any direction */
} npu_device_stats;

/* Backends compiled in, e.g. "cpu". */
NPU_API npu_status npu_backend_count(uint32_t *count);
NPU_API npu_status npu_backend_name(uint32_t index, const char **name);

/* Devices of all backends, in registry order. */
NPU_API npu_status npu_device_count(uint32_t *count);
NPU_API npu_status npu_device_get_properties(uint32_t index, npu_device_properties *props);

/* Opens device `index` (a new reference; the same object for the same index). */
NPU_API npu_status npu_device_open(uint32_t index, npu_device **device);

/* Opens the device chosen by the environment: NPU_BACKEND (a backend name)
 * and NPU_DEVICE (an index within that backend, or globally when NPU_BACKEND
 * is unset). Default: the first CPU device. */
NPU_API npu_status npu_device_open_default(npu_device **device);

/* Opens the device_index-th device of the named backend. */
NPU_API npu_status npu_device_open_by_backend(const char *backend, uint32_t device_index,
                                              npu_device **device);

NPU_API npu_status npu_device_retain(npu_device *device);
NPU_API npu_status npu_device_release(npu_device *device);

NPU_API npu_status npu_device_properties_of(npu_device *device, npu_device_properties *props);
NPU_API npu_status npu_device_get_stats(npu_device *device, npu_device_stats *stats);

/* Blocks until every stream of the device is idle. */
NPU_API npu_status npu_device_synchronize(npu_device *device);

/* A DRM render or accel node of this system (libdrm discovery), for
 * reporting which kernel devices a future backend could drive. */
typedef struct npu_drm_node {
  char path[64];    /* e.g. "/dev/dri/renderD128", "/dev/accel/accel0" */
  char kind[8];     /* "render" or "accel" */
  char driver[32];  /* kernel driver name, "" if it could not be opened */
  char bus[32];     /* e.g. "pci 0000:03:00.0", "platform", "" */
  uint16_t vendor_id, device_id; /* PCI ids, 0 elsewhere */
} npu_drm_node;

/* Fills up to `capacity` nodes and sets *count to the number found (which
 * may exceed capacity). NPU_ERROR_NOT_SUPPORTED when built without libdrm. */
NPU_API npu_status npu_drm_nodes(npu_drm_node *nodes, uint32_t capacity, uint32_t *count);

#ifdef __cplusplus
}
#endif
#endif
