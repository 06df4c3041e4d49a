// ai.onnx.ml tree ensembles and Scaler as standard ONNX ops, rewritten before
// ONNX 1.12 (which knows ai.onnx.ml up to opset 3) checks the model:
// TreeEnsemble (ml opset 5: LightGBM and newer skl2onnx exports) and
// TreeEnsembleRegressor / TreeEnsembleClassifier (ml opsets 1-3).
#pragma once

#include <string>
#include <vector>

#include "engine/frontend/onnx/onnx_node_rewrite.h"
#include "onnx/onnx_pb.h"

namespace tessera::frontend::onnx_import {

/// Replaces every tree-ensemble, Scaler, linear model and Normalizer node of `model` by its
/// evaluation in standard ops (onnx_ml_forest.h: each row's branch at every node computed at once,
/// then all trees walked side by side, one Gather per level, grouped by depth). UserError naming
/// the node for what it does not support (BRANCH_MEMBER, post transforms other than NONE / LOGISTIC
/// / SOFTMAX, MIN / MAX over several targets, string class labels that are used, inconsistent
/// tables, cycles, a default-domain opset before 11).
void expand_ml_ops(onnx::ModelProto& model, const std::string& origin);

/// Appends the rewrite of `n` when it is a TreeEnsembleRegressor,
/// TreeEnsembleClassifier, Scaler, LinearClassifier, LinearRegressor,
/// Normalizer, Binarizer or ArrayFeatureExtractor (onnx_ml_classic.cpp);
/// false otherwise.
bool expand_classic_ml_op(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                          std::vector<onnx::NodeProto>& out);

}  // namespace tessera::frontend::onnx_import
