/* The CPU kernels' packed-weights registry: the same values in the same
 * layout are packed once and shared until the last user lets go; other
 * values or another layout get their own packing; a failed packing is an
 * error and leaves nothing behind. */
#include <string.h>

#include "cpu/kernels/packed_weights.h"
#include "npu_test.h"

typedef struct packer {
  const float *values;
  size_t count;
  int calls;
  bool fail;
} packer;

/* A stand-in for a layout change: the values reversed. */
static bool reverse_values(void *ctx, void *packed)
{
  packer *p = ctx;
  p->calls++;
  float *out = packed;
  for (size_t i = 0; i < p->count; i++)
    out[i] = p->values[p->count - 1 - i];
  return !p->fail;
}

static bool ints_equal(const void *a, const void *b)
{
  return *(const int *)a == *(const int *)b;
}

/* Held from no lasting address: found by hashing the values each time. */
static cpu_packed_weights *acquire(packer *p, int layout)
{
  cpu_packed_weights *w = NULL;
  cpu_weights_id id = cpu_packed_weights_identify(p->values, p->count * sizeof(float));
  NPU_ASSERT_OK(cpu_packed_weights_acquire(&id, NULL, &layout, sizeof layout, ints_equal,
                                           p->count * sizeof(float), reverse_values, p, &w));
  return w;
}

static void test_shared_by_values_and_layout(void)
{
  float values[] = {1, 2, 3, 4, 5};
  float same_values[] = {1, 2, 3, 4, 5}; /* elsewhere in memory: shared all the same */
  float other_values[] = {1, 2, 3, 4, 6};
  packer a = {values, 5, 0, false}, b = {same_values, 5, 0, false}, c = {other_values, 5, 0, false};
  cpu_packed_weights *first = acquire(&a, 7);
  cpu_packed_weights *second = acquire(&b, 7);
  g_assert_true(first == second);
  g_assert_cmpint(a.calls + b.calls, ==, 1);
  const float *packed = cpu_packed_weights_data(first);
  g_assert_cmpfloat(packed[0], ==, 5);
  g_assert_cmpfloat(packed[4], ==, 1);
  g_assert_cmpuint((uintptr_t)packed % 64, ==, 0);

  cpu_packed_weights *other_layout = acquire(&a, 8);
  cpu_packed_weights *other = acquire(&c, 7);
  g_assert_true(other_layout != first && other != first && other != other_layout);
  g_assert_cmpint(a.calls, ==, 2);
  g_assert_cmpint(c.calls, ==, 1);

  /* Still there while one user is left; packed again once all are gone. */
  cpu_packed_weights_release(first, NULL);
  g_assert_true(acquire(&a, 7) == second);
  g_assert_cmpint(a.calls, ==, 2);
  cpu_packed_weights_release(second, NULL);
  cpu_packed_weights_release(second, NULL);
  cpu_packed_weights *again = acquire(&a, 7);
  g_assert_cmpint(a.calls, ==, 3);
  g_assert_cmpfloat(((const float *)cpu_packed_weights_data(again))[0], ==, 5);
  cpu_packed_weights_release(again, NULL);
  cpu_packed_weights_release(other_layout, NULL);
  cpu_packed_weights_release(other, NULL);
  cpu_packed_weights_release(NULL, NULL);
}

/* Two sign bits flipped cancel out in a weak word hash: they must not here. */
static void test_sign_flips_are_other_values(void)
{
  float values[8] = {0.5f, 0.25f, -1, 2, 3, 4, 5, 6};
  float flipped[8] = {0.5f, -0.25f, -1, -2, 3, 4, 5, 6};
  packer a = {values, 8, 0, false}, b = {flipped, 8, 0, false};
  cpu_packed_weights *first = acquire(&a, 1), *second = acquire(&b, 1);
  g_assert_true(first != second);
  g_assert_cmpint(b.calls, ==, 1);
  cpu_packed_weights_release(first, NULL);
  cpu_packed_weights_release(second, NULL);
}

static void test_failed_packing(void)
{
  float values[] = {9, 8, 7};
  packer failing = {values, 3, 0, true}, working = {values, 3, 0, false};
  int layout = 1;
  cpu_packed_weights *w = NULL;
  cpu_weights_id id = cpu_packed_weights_identify(values, sizeof values);
  NPU_ASSERT_STATUS(cpu_packed_weights_acquire(&id, values, &layout, sizeof layout, ints_equal,
                                               sizeof values, reverse_values, &failing, &w),
                    NPU_ERROR_NOT_SUPPORTED);
  /* Nothing kept from the failure: the next one packs. */
  w = acquire(&working, 1);
  g_assert_cmpint(working.calls, ==, 1);
  cpu_packed_weights_release(w, NULL);
}

/* Values held at a lasting address are known by it while a packing holds
 * them (the test changes them in place, which a plan never does, to see
 * that they are not read again), and hashed again once it is released. */
static void test_lasting_address_read_once(void)
{
  float values[] = {1, 2, 3, 4};
  packer a = {values, 4, 0, false};
  int layout = 3;
  cpu_weights_id first = cpu_packed_weights_identify(values, sizeof values);
  cpu_packed_weights *w = NULL;
  NPU_ASSERT_OK(cpu_packed_weights_acquire(&first, values, &layout, sizeof layout, ints_equal,
                                           sizeof values, reverse_values, &a, &w));
  values[0] = 9;
  cpu_weights_id remembered = cpu_packed_weights_identify(values, sizeof values);
  g_assert_true(remembered.low == first.low && remembered.high == first.high);
  cpu_weights_id other_size = cpu_packed_weights_identify(values, 2 * sizeof(float));
  g_assert_cmpuint(other_size.bytes, ==, 2 * sizeof(float));
  g_assert_false(other_size.low == first.low && other_size.high == first.high);
  cpu_packed_weights_release(w, values);
  cpu_weights_id rehashed = cpu_packed_weights_identify(values, sizeof values);
  g_assert_false(rehashed.low == first.low && rehashed.high == first.high);
  size_t packings, bytes;
  cpu_packed_weights_totals(&packings, &bytes);
  g_assert_cmpuint(packings, ==, 0);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cpu/packed-weights/shared-by-values-and-layout",
                  test_shared_by_values_and_layout);
  g_test_add_func("/cpu/packed-weights/sign-flips-are-other-values",
                  test_sign_flips_are_other_values);
  g_test_add_func("/cpu/packed-weights/failed-packing", test_failed_packing);
  g_test_add_func("/cpu/packed-weights/lasting-address-read-once",
                  test_lasting_address_read_once);
  return g_test_run();
}
