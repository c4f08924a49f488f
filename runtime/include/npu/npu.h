/* gst-npu runtime: umbrella header. */
#ifndef NPU_NPU_H
#define NPU_NPU_H

#include <npu/status.h>
#include <npu/device.h>
#include <npu/stream.h>
#include <npu/memory.h>
#include <npu/pool.h>
#include <npu/postprocess.h>
#include <npu/vpp.h>
#include <npu/model.h>

#endif
