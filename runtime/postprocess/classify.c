/* Classification: top-k of a score vector, optionally as softmax probabilities. */
#include <math.h>

#include "npu_hal.h"

NPU_API npu_status npu_topk(const float *scores, size_t n, bool softmax, uint32_t k,
                            uint32_t *indices, float *values)
{
  if (!scores || !indices || !values || n == 0 || k == 0 || k > n)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_topk: NULL array, empty scores, or k (%u) not in 1..%zu", k, n);
  uint32_t found = 0;
  /* Insertion into a sorted window of k: cheap for the small k used here. */
  for (size_t i = 0; i < n; i++) {
    float score = scores[i];
    if (found == k && !(score > values[k - 1]))
      continue;
    uint32_t pos = found < k ? found++ : k - 1;
    while (pos > 0 && values[pos - 1] < score) {
      values[pos] = values[pos - 1];
      indices[pos] = indices[pos - 1];
      pos--;
    }
    values[pos] = score;
    indices[pos] = (uint32_t)i;
  }
  if (softmax) {
    float max = values[0];
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
      sum += exp((double)scores[i] - max);
    for (uint32_t j = 0; j < k; j++)
      values[j] = (float)(exp((double)values[j] - max) / sum);
  }
  return NPU_OK;
}
