/* held_plan.h */
#include "held_plan.h"

#include "cpu/kernels/deferred_primitives.h"
#include "npu_test.h"

static gpointer make_held_plan(gpointer data)
{
  held_plan *h = data;
  cpu_deferred_begin(1);
  g_mutex_lock(&h->lock);
  h->begun = true;
  g_cond_broadcast(&h->changed);
  while (!h->release)
    g_cond_wait(&h->changed, &h->lock);
  g_mutex_unlock(&h->lock);
  NPU_ASSERT_OK(cpu_deferred_compile());
  return NULL;
}

void hold_background(held_plan *h)
{
  g_mutex_init(&h->lock);
  g_cond_init(&h->changed);
  h->begun = h->release = false;
  h->thread = g_thread_new("held-plan", make_held_plan, h);
  g_mutex_lock(&h->lock);
  while (!h->begun)
    g_cond_wait(&h->changed, &h->lock);
  g_mutex_unlock(&h->lock);
}

void release_background(held_plan *h)
{
  g_mutex_lock(&h->lock);
  h->release = true;
  g_cond_broadcast(&h->changed);
  g_mutex_unlock(&h->lock);
  g_thread_join(h->thread);
  g_cond_clear(&h->changed);
  g_mutex_clear(&h->lock);
}
