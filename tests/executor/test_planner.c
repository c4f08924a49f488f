/* The memory planner: valid plans (checked by the validator) for chains,
 * branches, in-place reuse and random lifetimes, and the arena it saves
 * against one buffer per tensor. */
#include <string.h>

#include "../runtime/npu_test.h"
#include "planner.h"

#define NO NPU_PLAN_NO_SOURCE

static npu_memory_plan plan_ok(const npu_plan_tensor *t, size_t n, size_t alignment)
{
  npu_memory_plan plan;
  NPU_ASSERT_OK(npu_plan_memory(t, n, alignment, &plan));
  NPU_ASSERT_OK(npu_plan_validate(t, n, alignment, &plan));
  return plan;
}

static void test_chain_needs_two_buffers(void)
{
  /* a -> b -> c -> d, each read only by the next step: two slots suffice. */
  npu_plan_tensor t[] = {
      {1000, 0, 1, NO}, {1000, 1, 2, NO}, {1000, 2, 3, NO}, {1000, 3, 4, NO}};
  npu_memory_plan plan = plan_ok(t, 4, 64);
  g_assert_cmpuint(plan.arena_size, ==, 2 * 1024);
  g_assert_cmpuint(plan.naive_size, ==, 4000);
  g_assert_cmpuint(plan.offsets[0], ==, plan.offsets[2]);
  npu_memory_plan_clear(&plan);
}

static void test_branches_stay_apart(void)
{
  /* A residual block: x is read again at step 3 while y and z come and go. */
  npu_plan_tensor t[] = {
      {4096, 0, 3, NO}, /* x */
      {4096, 1, 2, NO}, /* y */
      {4096, 2, 3, NO}, /* z */
      {4096, 3, 4, NO}, /* x + z */
  };
  npu_memory_plan plan = plan_ok(t, 4, 64);
  g_assert_cmpuint(plan.arena_size, ==, 3 * 4096);
  g_assert_cmpuint(plan.offsets[0], !=, plan.offsets[1]);
  g_assert_cmpuint(plan.offsets[0], !=, plan.offsets[2]);
  npu_memory_plan_clear(&plan);
}

static void test_in_place_reuse(void)
{
  /* conv -> relu (in place) -> add (in place): one slot for the chain. */
  npu_plan_tensor t[] = {{5000, 0, 1, NO}, {5000, 1, 2, 0}, {5000, 2, 3, 1}};
  npu_memory_plan plan = plan_ok(t, 3, 64);
  g_assert_cmpuint(plan.offsets[0], ==, plan.offsets[1]);
  g_assert_cmpuint(plan.offsets[1], ==, plan.offsets[2]);
  g_assert_cmpuint(plan.arena_size, ==, 5056);
  npu_memory_plan_clear(&plan);
  /* A source still alive after the step cannot be reused. */
  npu_plan_tensor bad[] = {{100, 0, 5, NO}, {100, 1, 2, 0}};
  NPU_ASSERT_STATUS(npu_plan_memory(bad, 2, 64, &plan), NPU_ERROR_INVALID_ARGUMENT);
  npu_plan_tensor twice[] = {{100, 0, 1, NO}, {100, 1, 2, 0}, {100, 1, 2, 0}};
  NPU_ASSERT_STATUS(npu_plan_memory(twice, 3, 64, &plan), NPU_ERROR_INVALID_ARGUMENT);
}

/* Views (a Reshape's output while its input lives on) share their
 * source's memory; a write over a source whose view is still read is
 * refused. */
static void test_views(void)
{
  npu_plan_tensor t[] = {
      {4096, 0, 5, NO},       /* x */
      {4096, 1, 4, 0, true},  /* a view of x */
      {4096, 2, 6, 0, true},  /* another, read after x */
      {4096, 1, 2, NO},       /* y, alive with them */
  };
  npu_memory_plan plan = plan_ok(t, 4, 64);
  g_assert_cmpuint(plan.offsets[1], ==, plan.offsets[0]);
  g_assert_cmpuint(plan.offsets[2], ==, plan.offsets[0]);
  g_assert_cmpuint(plan.offsets[3], !=, plan.offsets[0]);
  g_assert_cmpuint(plan.arena_size, ==, 2 * 4096);
  npu_memory_plan_clear(&plan);
  npu_plan_tensor written_over[] = {
      {4096, 0, 5, NO},        /* x, read until step 5 */
      {4096, 1, 3, 0, true},   /* a view of x, read last at step 3 */
      {4096, 3, 4, 1, false},  /* written over the view at step 3 */
  };
  g_assert_cmpint(npu_plan_memory(written_over, 3, 64, &plan), ==, NPU_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(npu_last_error_message(), "still reads"));
  /* A source has any number of views or one tensor written over it, never both. */
  npu_plan_tensor viewed_then_written[] = {
      {4096, 0, 1, NO}, {4096, 1, 2, 0, true}, {4096, 1, 3, 0, false}};
  npu_plan_tensor written_then_viewed[] = {
      {4096, 0, 1, NO}, {4096, 1, 3, 0, false}, {4096, 1, 2, 0, true}};
  npu_plan_tensor *claimed[] = {viewed_then_written, written_then_viewed};
  for (size_t i = 0; i < 2; i++) {
    g_assert_cmpint(npu_plan_memory(claimed[i], 3, 64, &plan), ==, NPU_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull(strstr(npu_last_error_message(), "tensors 1 and 2 both claim tensor 0"));
  }
}

static void test_random_lifetimes(void)
{
  enum { N = 1500 };
  npu_plan_tensor *t = g_new(npu_plan_tensor, N);
  GRand *rand = g_rand_new_with_seed(11);
  for (int round = 0; round < 5; round++) {
    for (int i = 0; i < N; i++) {
      uint32_t first = (uint32_t)g_rand_int_range(rand, 0, 600);
      t[i] = (npu_plan_tensor){(size_t)g_rand_int_range(rand, 0, 1 << 20), first,
                               first + (uint32_t)g_rand_int_range(rand, 0, 40), NO};
    }
    npu_memory_plan plan = plan_ok(t, N, 64);
    g_assert_cmpuint(plan.arena_size, <, plan.naive_size / 5);
    npu_memory_plan_clear(&plan);
  }
  g_rand_free(rand);
  g_free(t);
}

static void test_validator_catches_overlap(void)
{
  npu_plan_tensor t[] = {{100, 0, 2, NO}, {100, 1, 3, NO}};
  size_t offsets[] = {0, 64};
  npu_memory_plan forged = {offsets, 256, 200};
  NPU_ASSERT_STATUS(npu_plan_validate(t, 2, 64, &forged), NPU_ERROR_INTERNAL);
  offsets[1] = 100; /* apart, but misaligned */
  NPU_ASSERT_STATUS(npu_plan_validate(t, 2, 64, &forged), NPU_ERROR_INTERNAL);
  offsets[1] = 128;
  NPU_ASSERT_OK(npu_plan_validate(t, 2, 64, &forged));
}

/* Sizes whose alignment or sum passes SIZE_MAX are refused, not wrapped
 * into a small arena. */
static void test_sizes_that_overflow(void)
{
  npu_memory_plan plan;
  npu_plan_tensor huge[] = {{SIZE_MAX - 10, 0, 1, NO}};
  NPU_ASSERT_STATUS(npu_plan_memory(huge, 1, 64, &plan), NPU_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull(strstr(npu_last_error_message(), "SIZE_MAX"));
  npu_plan_tensor halves[] = {{SIZE_MAX / 2, 0, 1, NO}, {SIZE_MAX / 2, 0, 1, NO},
                              {SIZE_MAX / 2, 1, 2, NO}};
  NPU_ASSERT_STATUS(npu_plan_memory(halves, 3, 64, &plan), NPU_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull(strstr(npu_last_error_message(), "SIZE_MAX"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/planner/chain-needs-two-buffers", test_chain_needs_two_buffers);
  g_test_add_func("/planner/branches-stay-apart", test_branches_stay_apart);
  g_test_add_func("/planner/in-place-reuse", test_in_place_reuse);
  g_test_add_func("/planner/views", test_views);
  g_test_add_func("/planner/random-lifetimes", test_random_lifetimes);
  g_test_add_func("/planner/validator-catches-overlap", test_validator_catches_overlap);
  g_test_add_func("/planner/sizes-that-overflow", test_sizes_that_overflow);
  return g_test_run();
}
