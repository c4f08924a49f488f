/* What the model fuzz target does with one input, shared by the libFuzzer
 * entry point and the standalone replay driver that the test suite runs on
 * the corpus and on the structural mutants. */
#ifndef NPU_FUZZ_MODEL_HARNESS_H
#define NPU_FUZZ_MODEL_HARNESS_H

#include <stddef.h>
#include <stdint.h>

/* Caps the CPU device (memory, threads) through its environment: call once
 * before the first model. */
void model_harness_init(void);

/* Loads `data` as an ONNX model (external data from `base_dir`, may be
 * NULL), plans it with every dynamic axis at 1 and runs it once on inputs
 * of at most a few KiB; a model with dynamic axes is re-planned at 2 and
 * back at 1 and run each time. A refusal is fine; returns whether the
 * first run ran. */
int model_harness_run(const uint8_t *data, size_t size, const char *base_dir);
/* The same with the model loaded from its file (whose weights a plan may
 * drop from memory and read again). */
int model_harness_run_file(const char *path);
/* How many re-plans (batch 2, then back at 1) ran so far. */
unsigned model_harness_replans_ran(void);

#endif
