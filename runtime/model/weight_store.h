/* The memory that holds a model's large initializers (those the loader
 * lifts out of the protobuf bytes, onnx_wire.h), each at a page of its own,
 * so that the bytes of one no kernel reads any more (every reader packed
 * its own copy) can be dropped from memory, and read again from the model
 * file when a later plan needs them. Without this the weights of a model
 * such as VGG-16 sit in memory twice: the originals and the packed copies.
 * A model loaded from memory has no file to read again: nothing it reads
 * is dropped. */
#ifndef NPU_WEIGHT_STORE_H
#define NPU_WEIGHT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

typedef struct npu_weight_store npu_weight_store;

/* Room for `count` initializers of sizes[i] bytes, which lie at
 * file_offsets[i] of the file open as `fd` (the store owns fd from now on,
 * also on failure; -1: no file, file_offsets unused). */
npu_status npu_weight_store_create(const size_t *sizes, const size_t *file_offsets, size_t count,
                                   int fd, npu_weight_store **store);
void npu_weight_store_destroy(npu_weight_store *store);
/* Initializer i's memory (64-byte aligned and more). */
void *npu_weight_store_data(npu_weight_store *store, size_t i);
/* Whether `data` lies in the store's memory. */
bool npu_weight_store_holds(const npu_weight_store *store, const void *data);

/* Ties the graph's constants to the initializers they read: those whose
 * data is an initializer's bytes as the file has them (not rewritten at
 * load) may be dropped later; an initializer no tensor reads any more (a
 * float16 one converted, say) is dropped now. */
npu_status npu_weight_store_bind(npu_weight_store *store, const npu_graph *graph);

/* Planning: plans of one model may be made at once; while one is, data is
 * dropped only by the one plan being made (npu_weight_store_drop), and it
 * reads back what it needs (npu_weight_store_read_back) before reading it. */
void npu_weight_store_begin_planning(npu_weight_store *store);
void npu_weight_store_end_planning(npu_weight_store *store);
/* The tensor's data in memory again if it was dropped; fails when the file
 * cannot be read or changed since the model was loaded. */
npu_status npu_weight_store_read_back(npu_weight_store *store, int32_t tensor);
/* Whether the tensor's data is dropped now: its memory reads as zeros. */
bool npu_weight_store_dropped(npu_weight_store *store, int32_t tensor);
/* Whether the dropped tensor's memory was read since it was dropped (any of
 * its pages mapped again: the reader saw zeros), or it was read back
 * meanwhile: a kernel made from it then has to be made again. A planner may
 * so skip reading back weights that the backend does not read (it finds its
 * packing of them by their address). */
bool npu_weight_store_read_while_dropped(npu_weight_store *store, int32_t tensor);
/* Every reader of the tensor packed it in the plan being made: its data is
 * dropped now if it may be, no other plan is being made and no live plan
 * reads it; else once that is so. Data no plan said this of is never
 * dropped. */
void npu_weight_store_drop(npu_weight_store *store, int32_t tensor);
/* Whether the tensor's data may be dropped at all (tied by bind). */
bool npu_weight_store_droppable(const npu_weight_store *store, int32_t tensor);
/* A live plan reads these tensors' data while it runs (`pin`), or no longer
 * (it is destroyed): packed data that no live plan reads is dropped once no
 * plan is being made. */
void npu_weight_store_pin(npu_weight_store *store, const int32_t *tensors, size_t count,
                          bool pin);
/* Bytes of initializers in memory now, and of those that may be dropped
 * (for tests and reports). */
void npu_weight_store_totals(npu_weight_store *store, size_t *resident, size_t *droppable);

#endif
