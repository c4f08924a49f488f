/* Packed weights shared between kernels: the contexts of one model (one per
 * batch size in npuinfer, one per stream in npu-run) pack each weight
 * tensor once instead of once each. */
#ifndef NPU_CPU_PACKED_WEIGHTS_H
#define NPU_CPU_PACKED_WEIGHTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu_hal.h"

typedef struct cpu_packed_weights cpu_packed_weights;

/* What tells values apart: a 128-bit hash of their bytes, and their size. */
typedef struct cpu_weights_id {
  uint64_t low, high;
  size_t bytes;
} cpu_weights_id;

/* Fills `packed` (packed_bytes, 64-byte aligned) from the source values;
 * false when it cannot (the packing is then dropped). */
typedef bool (*cpu_pack_fn)(void *ctx, void *packed);
/* Whether two layout descriptions (of layout_bytes each) are the same. */
typedef bool (*cpu_layout_equal_fn)(const void *a, const void *b);

/* The identity of the values at `source`: that of a packing alive which was
 * acquired from this very address as `lasting` (its values cannot have
 * changed since), else their hash. Re-planning a model thus reads none of
 * its weights again. */
cpu_weights_id cpu_packed_weights_identify(const void *source, size_t source_bytes);

/* The packing of the values `id` describes in `layout` (how the values are
 * read and how they are packed): found among those alive when one has the
 * same values packed the same way, else made by `pack`.
 * NPU_ERROR_NOT_SUPPORTED when pack fails. `lasting`: NULL, or the values'
 * address when they stay there unchanged until this packing is released
 * (weights a plan keeps): identify() then finds them without hashing. Release
 * with cpu_packed_weights_release, giving the same `lasting`. */
npu_status cpu_packed_weights_acquire(const cpu_weights_id *id, const void *lasting,
                                      const void *layout, size_t layout_bytes,
                                      cpu_layout_equal_fn layout_equal, size_t packed_bytes,
                                      cpu_pack_fn pack, void *pack_ctx, cpu_packed_weights **out);
/* Copies into `layouts` (room for `max`, layout_bytes each) the layouts of
 * the packings alive of these values, the newest first: another shape of
 * the same model may run on one of them instead of packing its own.
 * Returns how many there are (possibly more than max). */
size_t cpu_packed_weights_layouts(const cpu_weights_id *id, size_t layout_bytes, void *layouts,
                                  size_t max);
void *cpu_packed_weights_data(const cpu_packed_weights *weights);
/* The packings alive and their bytes, all values together (for tests and
 * reports: a re-plan that shares its weights adds none). */
void cpu_packed_weights_totals(size_t *packings, size_t *bytes);
void cpu_packed_weights_release(cpu_packed_weights *weights, const void *lasting);

#endif
