/* What the executor needs of a loaded model. */
#ifndef NPU_MODEL_INTERNAL_H
#define NPU_MODEL_INTERNAL_H

#include "graph.h"
#include "weight_store.h"

const npu_graph *npu_model_graph(npu_model *model);
/* Where its large initializers' data is (NULL: it has none). */
npu_weight_store *npu_model_weight_store(npu_model *model);

#endif
