// ai.onnx.ml TreeEnsemble (opset 5: LightGBM and newer skl2onnx exports) as
// standard ONNX ops, rewritten before ONNX 1.12 (which knows ai.onnx.ml up to
// opset 3) checks the model.
#pragma once

#include <string>

#include "onnx/onnx_pb.h"

namespace tessera::frontend::onnx_import {

/// Replaces every TreeEnsemble node of `model` by its evaluation in standard
/// ops: all trees walked side by side, one level per step (each tree's state
/// a node index, or a leaf once reached; Gather of the node tables,
/// GatherElements of the features, a comparison and Where), as many steps
/// as the deepest tree, then the leaves' weights gathered and aggregated per
/// target. UserError naming the node for what it does not support
/// (BRANCH_MEMBER, post transforms other than NONE / LOGISTIC / SOFTMAX,
/// MIN / MAX over several targets, inconsistent tables, cycles).
void expand_ml_tree_ensembles(onnx::ModelProto& model, const std::string& origin);

}  // namespace tessera::frontend::onnx_import
