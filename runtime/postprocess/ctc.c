/* Greedy CTC decoding for text recognisers (CRNN, SVTR / PP-OCR rec). */
#include <string.h>

#include "npu_hal.h"

NPU_API npu_status npu_ctc_greedy_decode(const float *scores, size_t steps, size_t classes,
                                         uint32_t blank, const char *const *dictionary,
                                         size_t dictionary_size, char *text,
                                         size_t text_capacity, float *confidence)
{
  if (!scores || !dictionary || !text || text_capacity == 0 || !confidence || blank >= classes)
    return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                         "npu_ctc_greedy_decode: NULL argument or blank %u not below %zu "
                         "classes", blank, classes);
  size_t length = 0;
  double score_sum = 0.0;
  size_t kept = 0;
  size_t previous = blank;
  text[0] = '\0';
  for (size_t t = 0; t < steps; t++) {
    const float *row = scores + t * classes;
    size_t best = 0;
    for (size_t c = 1; c < classes; c++)
      if (row[c] > row[best])
        best = c;
    bool emits = best != blank && best != previous;
    previous = best;
    if (!emits)
      continue;
    size_t entry = blank == 0 ? best - 1 : best;
    if (entry >= dictionary_size)
      return npu_set_error(NPU_ERROR_INVALID_ARGUMENT,
                           "npu_ctc_greedy_decode: class %zu at step %zu has no dictionary "
                           "entry (%zu entries)", best, t, dictionary_size);
    size_t piece = strlen(dictionary[entry]);
    if (length + piece < text_capacity) {
      memcpy(text + length, dictionary[entry], piece + 1);
      length += piece;
    }
    score_sum += row[best];
    kept++;
  }
  *confidence = kept ? (float)(score_sum / (double)kept) : 0.0f;
  return NPU_OK;
}
