// A forest of decision trees (the ai.onnx.ml tree ops, either form) walked
// in standard ONNX ops: the part the rewrites of TreeEnsemble (ml opset 5)
// and of TreeEnsembleRegressor / TreeEnsembleClassifier (ml opsets 1-3)
// share (onnx_ml_trees.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/frontend/onnx/onnx_node_rewrite.h"
#include "onnx/onnx_pb.h"

namespace tessera::frontend::onnx_import {

/// Node comparisons, as TreeEnsemble numbers them.
enum TreeMode : int64_t { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember };

/// A forest in one node table: internal nodes 0..count-1, whose branches
/// lead to a node or, as -1 - l, to leaf l.
struct Forest {
    int split_type = onnx::TensorProto_DataType_FLOAT;   // the comparisons' dtype
    int weight_type = onnx::TensorProto_DataType_FLOAT;  // the scores' dtype
    std::vector<double> splits;
    std::vector<int64_t> modes, features, missing, next_true, next_false;
    /// Per node, the set a BRANCH_MEMBER node tests its input against.
    std::vector<std::vector<double>> members;
    /// A missing value (NaN) takes the true branch where `missing` says so
    /// and the false one elsewhere (ml opsets 1-3); without this it takes the
    /// true branch also where the comparison holds for NaN (ml opset 5).
    bool nan_takes_track = false;
    size_t leaves = 0;
    std::vector<double> leaf_table;  // [leaves, targets]
    std::vector<int64_t> starts;     // per tree: its root node, or -1 - l for a one-leaf tree
    int64_t targets = 1;
    int64_t aggregate = 1;     // 0 average, 1 sum, 2 min, 3 max
    std::vector<double> base;  // per target, added after the aggregate; empty: none
};

/// The forest's aggregated scores [rows, targets] (base values added) of
/// x [rows, features], in f.weight_type. UserError naming `n` for a cycle or
/// a default-domain opset older than 11.
std::string emit_forest(NodeRewriter& r, const onnx::NodeProto& n, const std::string& x,
                        const Forest& f, std::vector<onnx::NodeProto>& out);

/// y = post(scores [rows, targets]): 0 none, 1 softmax, 2 logistic.
void emit_ml_post(NodeRewriter& r, const onnx::NodeProto& n, const std::string& scores,
                  int64_t post, const std::string& y, std::vector<onnx::NodeProto>& out);

/// A TensorProto of `elem_type` (int64, int32, bool, double or float).
onnx::TensorProto ml_tensor(int elem_type, const std::vector<int64_t>& shape,
                            const std::vector<double>& v);

/// UserError naming `n` unless it has `inputs` inputs and `outputs` outputs.
void ml_arity(const NodeRewriter& r, const onnx::NodeProto& n, int inputs, int outputs);
/// Attribute `name` (a count of targets) in [1, 2^20]; UserError naming `n` otherwise.
int64_t ml_target_count(const NodeRewriter& r, const onnx::NodeProto& n, const std::string& name);

/// Attribute readers naming `n` in their errors.
std::vector<int64_t> ml_ints(const NodeRewriter& r, const onnx::NodeProto& n,
                             const std::string& name, bool required);
int64_t ml_int(const onnx::NodeProto& n, const std::string& name, int64_t fallback);
/// The values of tensor attribute `name` and its element type.
std::vector<double> ml_tensor_values(const NodeRewriter& r, const onnx::NodeProto& n,
                                     const std::string& name, int* elem_type = nullptr);

}  // namespace tessera::frontend::onnx_import
