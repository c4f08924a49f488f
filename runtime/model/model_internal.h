/* What the executor needs of a loaded model. */
#ifndef NPU_MODEL_INTERNAL_H
#define NPU_MODEL_INTERNAL_H

#include "graph.h"

const npu_graph *npu_model_graph(npu_model *model);

#endif
