/* oneDNN primitives deferred to the end of a plan (deferred_primitives.c):
 * outside a plan a primitive is made at once; inside, each slot is filled
 * by the time the compile step returns (by helper threads, or by the
 * compile step itself) with a primitive that computes what it was
 * described to, and a slot dropped before is left alone. Primitives left
 * to the background compiler are compiled once no plan is being made, each
 * slot filled before its ready flag is set, and dropped ones are left
 * alone. */
#include <omp.h>

#include "cpu/kernels/deferred_primitives.h"
#include "cpu/kernels/dnnl_kernels.h"
#include "held_plan.h"
#include "npu_test.h"

enum { ELEMENTS = 64 };

/* y = alpha * x (eltwise linear): a primitive whose result tells which
 * description it came from. */
static dnnl_primitive_desc_t describe_scale(float alpha)
{
  dnnl_dims_t dims = {ELEMENTS};
  dnnl_memory_desc_t md;
  dnnl_eltwise_desc_t desc;
  dnnl_primitive_desc_t pd = NULL;
  g_assert_cmpint(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a), ==, dnnl_success);
  g_assert_cmpint(dnnl_eltwise_forward_desc_init(&desc, dnnl_forward_inference,
                                                 dnnl_eltwise_linear, &md, alpha, 0.0f),
                  ==, dnnl_success);
  g_assert_cmpint(dnnl_primitive_desc_create(&pd, &desc, NULL, cpu_dnnl_engine(), NULL), ==,
                  dnnl_success);
  return pd;
}

static void assert_scales(dnnl_primitive_t primitive, float alpha)
{
  float x[ELEMENTS], y[ELEMENTS];
  for (int i = 0; i < ELEMENTS; i++)
    x[i] = (float)i - 7.0f;
  dnnl_dims_t dims = {ELEMENTS};
  dnnl_memory_desc_t md_value;
  const dnnl_memory_desc_t *md = &md_value;
  g_assert_cmpint(dnnl_memory_desc_init_by_tag(&md_value, 1, dims, dnnl_f32, dnnl_a), ==,
                  dnnl_success);
  dnnl_memory_t src, dst;
  dnnl_stream_t stream;
  g_assert_cmpint(dnnl_memory_create(&src, md, cpu_dnnl_engine(), x), ==, dnnl_success);
  g_assert_cmpint(dnnl_memory_create(&dst, md, cpu_dnnl_engine(), y), ==, dnnl_success);
  g_assert_cmpint(dnnl_stream_create(&stream, cpu_dnnl_engine(), dnnl_stream_default_flags), ==,
                  dnnl_success);
  dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  g_assert_cmpint(dnnl_primitive_execute(primitive, stream, 2, args), ==, dnnl_success);
  g_assert_cmpint(dnnl_stream_wait(stream), ==, dnnl_success);
  for (int i = 0; i < ELEMENTS; i++)
    g_assert_cmpfloat(y[i], ==, alpha * x[i]);
  dnnl_stream_destroy(stream);
  dnnl_memory_destroy(src);
  dnnl_memory_destroy(dst);
}

static void test_outside_a_plan_made_at_once(void)
{
  dnnl_primitive_desc_t pd = describe_scale(2.0f);
  dnnl_primitive_t slot = NULL;
  g_assert_false(cpu_deferred_add(pd, &slot));
  g_assert_null(slot);
  NPU_ASSERT_OK(cpu_deferred_compile()); /* nothing waits: nothing to do */
  dnnl_primitive_desc_destroy(pd);
}

/* `threads` - 1 helpers compile while descriptions are added; two slots
 * are dropped on the way: with no helper they are still queued and stay
 * NULL, with helpers they may be done already (then the caller destroys
 * the primitive, as a kernel does). */
static void compile_scales(unsigned threads)
{
  enum { COUNT = 24, DROPPED_A = 5, DROPPED_B = COUNT - 1 };
  dnnl_primitive_t slots[COUNT] = {NULL};
  int caller_threads = omp_get_max_threads();
  cpu_deferred_begin(threads);
  for (int i = 0; i < COUNT; i++) {
    dnnl_primitive_desc_t pd = describe_scale((float)(i + 1));
    g_assert_true(cpu_deferred_add(pd, &slots[i]));
    dnnl_primitive_desc_destroy(pd); /* as a kernel does with its own: a copy waits */
    if (i == DROPPED_A)
      cpu_deferred_drop(&slots[DROPPED_A]);
  }
  cpu_deferred_drop(&slots[DROPPED_B]);
  if (threads == 1)
    g_assert_true(slots[DROPPED_A] == NULL && slots[DROPPED_B] == NULL);
  NPU_ASSERT_OK(cpu_deferred_compile());
  g_assert_cmpint(omp_get_max_threads(), ==, caller_threads); /* the caller's setting kept */
  for (int i = 0; i < COUNT; i++) {
    bool dropped = i == DROPPED_A || i == DROPPED_B;
    if (!dropped || slots[i])
      assert_scales(slots[i], (float)(i + 1));
    if (slots[i])
      dnnl_primitive_destroy(slots[i]);
  }
  /* Deferring ended with the compile step. */
  dnnl_primitive_desc_t pd = describe_scale(3.0f);
  dnnl_primitive_t slot = NULL;
  g_assert_false(cpu_deferred_add(pd, &slot));
  dnnl_primitive_desc_destroy(pd);
}

static void test_compiled_at_the_end(void)
{
  compile_scales(1);
}

static void test_compiled_by_helpers(void)
{
  compile_scales(4);
}

/* Queued while a plan is being made: nothing is compiled until it ends
 * (the slots stay NULL, the flags false); a dropped one never is; then
 * waiting compiles the rest, each slot computing its description. Twice:
 * the queue starts again once done. */
static void test_compiled_in_the_background(void)
{
  enum { COUNT = 6, DROPPED = 2 };
  for (int round = 0; round < 2; round++) {
    dnnl_primitive_t slots[COUNT] = {NULL};
    atomic_bool ready[COUNT];
    held_plan plan;
    hold_background(&plan);
    for (int i = 0; i < COUNT; i++) {
      atomic_init(&ready[i], false);
      dnnl_primitive_desc_t pd = describe_scale((float)(i + 2));
      g_assert_true(cpu_deferred_add_background(pd, &slots[i], &ready[i]));
      dnnl_primitive_desc_destroy(pd);
    }
    g_usleep(20000); /* time for the background thread, were it not held */
    for (int i = 0; i < COUNT; i++)
      g_assert_true(slots[i] == NULL && !atomic_load(&ready[i]));
    cpu_deferred_drop(&slots[DROPPED]);
    release_background(&plan);
    cpu_deferred_wait_background();
    for (int i = 0; i < COUNT; i++) {
      g_assert_true(atomic_load(&ready[i]) == (i != DROPPED));
      if (i == DROPPED) {
        g_assert_null(slots[i]);
        continue;
      }
      assert_scales(slots[i], (float)(i + 2));
      dnnl_primitive_destroy(slots[i]);
    }
  }
}

/* Dropped at once, whatever the background thread is doing with it then:
 * queued (forgotten) or compiling (waited for; its primitive handed over). */
static void test_dropped_while_compiling_in_the_background(void)
{
  enum { COUNT = 16 };
  dnnl_primitive_t slots[COUNT] = {NULL};
  atomic_bool ready[COUNT];
  for (int i = 0; i < COUNT; i++) {
    atomic_init(&ready[i], false);
    dnnl_primitive_desc_t pd = describe_scale((float)(i + 2));
    g_assert_true(cpu_deferred_add_background(pd, &slots[i], &ready[i]));
    dnnl_primitive_desc_destroy(pd);
  }
  for (int i = COUNT - 1; i >= 0; i--) {
    cpu_deferred_drop(&slots[i]);
    if (slots[i]) {
      g_assert_true(atomic_load(&ready[i]));
      assert_scales(slots[i], (float)(i + 2));
      dnnl_primitive_destroy(slots[i]);
    }
  }
  cpu_deferred_wait_background();
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_assert_nonnull(cpu_dnnl_engine());
  g_test_add_func("/cpu/deferred-primitives/outside-a-plan-made-at-once",
                  test_outside_a_plan_made_at_once);
  g_test_add_func("/cpu/deferred-primitives/compiled-at-the-end", test_compiled_at_the_end);
  g_test_add_func("/cpu/deferred-primitives/compiled-by-helpers", test_compiled_by_helpers);
  g_test_add_func("/cpu/deferred-primitives/compiled-in-the-background",
                  test_compiled_in_the_background);
  g_test_add_func("/cpu/deferred-primitives/dropped-while-compiling-in-the-background",
                  test_dropped_while_compiling_in_the_background);
  return g_test_run();
}
