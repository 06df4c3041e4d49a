// ai.onnx.ml TreeEnsembleRegressor, TreeEnsembleClassifier (ml opsets 1-3,
// what skl2onnx and onnxmltools write for scikit-learn, LightGBM and XGBoost
// models), Scaler, LinearClassifier, LinearRegressor, Normalizer, Binarizer
// and ArrayFeatureExtractor as standard ONNX ops (see onnx_ml_trees.h). The trees
// are read into a Forest and walked like TreeEnsemble's (onnx_ml_forest.h);
// the semantics follow ONNX's reference implementation.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_compose.h"
#include "engine/frontend/onnx/onnx_ml_forest.h"
#include "engine/frontend/onnx/onnx_ml_trees.h"

namespace tessera::frontend::onnx_import {

namespace {

std::vector<double> floats_of(const onnx::NodeProto& n, const std::string& name) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : std::vector<double>{};
}

std::vector<std::string> strings_of(const onnx::NodeProto& n, const std::string& name) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? std::vector<std::string>(a->strings().begin(), a->strings().end())
             : std::vector<std::string>{};
}

std::string string_of(const onnx::NodeProto& n, const std::string& name,
                      const std::string& fallback) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? a->s() : fallback;
}

// Attribute `name`'s values, from its float list or from `name`_as_tensor.
std::vector<double> values_of(const NodeRewriter& r, const onnx::NodeProto& n,
                              const std::string& name, int* elem_type = nullptr) {
    if (elem_type) *elem_type = onnx::TensorProto_DataType_FLOAT;
    if (find_attr(n, name + "_as_tensor"))
        return ml_tensor_values(r, n, name + "_as_tensor", elem_type);
    return floats_of(n, name);
}

// NONE, SOFTMAX, LOGISTIC as emit_post numbers them.
int64_t post_transform(const NodeRewriter& r, const onnx::NodeProto& n) {
    const std::string p = string_of(n, "post_transform", "NONE");
    if (p == "NONE") return 0;
    if (p == "SOFTMAX") return 1;
    if (p == "LOGISTIC") return 2;
    TS_USER_FAIL() << r.where(n) << ": post_transform " << p
                   << " is not supported (NONE, SOFTMAX and LOGISTIC are)";
}

// The trees of a classic tree op, with `targets` scores per leaf from the
// `prefix`_treeids / _nodeids / _ids / _weights lists.
Forest classic_forest(const NodeRewriter& r, const onnx::NodeProto& n, const std::string& prefix,
                      int64_t targets, int64_t aggregate) {
    Forest f;
    f.aggregate = aggregate;
    f.split_type = onnx::TensorProto_DataType_DOUBLE;  // float thresholds compare exactly as double
    f.weight_type = onnx::TensorProto_DataType_FLOAT;
    f.nan_takes_track = true;
    f.targets = targets;
    const std::vector<int64_t> tree_ids = ml_ints(r, n, "nodes_treeids", true);
    const std::vector<int64_t> node_ids = ml_ints(r, n, "nodes_nodeids", true);
    const std::vector<int64_t> features = ml_ints(r, n, "nodes_featureids", true);
    const std::vector<int64_t> true_ids = ml_ints(r, n, "nodes_truenodeids", true);
    const std::vector<int64_t> false_ids = ml_ints(r, n, "nodes_falsenodeids", true);
    std::vector<int64_t> missing = ml_ints(r, n, "nodes_missing_value_tracks_true", false);
    const std::vector<std::string> modes = strings_of(n, "nodes_modes");
    const std::vector<double> values = values_of(r, n, "nodes_values");
    const size_t count = tree_ids.size();
    if (missing.empty()) missing.assign(count, 0);
    TS_USER_CHECK(count > 0 && node_ids.size() == count && features.size() == count &&
                  true_ids.size() == count && false_ids.size() == count &&
                  missing.size() == count && modes.size() == count && values.size() == count)
        << r.where(n) << ": the nodes_* attributes differ in length or are empty";
    static const std::map<std::string, int64_t> kModes = {
        {"BRANCH_LEQ", kLeq}, {"BRANCH_LT", kLt}, {"BRANCH_GTE", kGte},
        {"BRANCH_GT", kGt},   {"BRANCH_EQ", kEq}, {"BRANCH_NEQ", kNeq}};
    // Each (tree, node) as an internal node index or, -1 - l, a leaf.
    std::map<std::pair<int64_t, int64_t>, int64_t> index;
    std::vector<int64_t> roots;  // per tree, in order of first appearance
    std::set<int64_t> trees_seen;
    for (size_t p = 0; p < count; ++p) {
        const bool leaf = modes[p] == "LEAF";
        TS_USER_CHECK(leaf || kModes.count(modes[p]))
            << r.where(n) << ": node mode " << modes[p] << " is not supported";
        const int64_t at = leaf ? -1 - int64_t(f.leaves++) : int64_t(f.splits.size());
        TS_USER_CHECK(index.emplace(std::make_pair(tree_ids[p], node_ids[p]), at).second)
            << r.where(n) << ": tree " << tree_ids[p] << " has two nodes " << node_ids[p];
        if (trees_seen.insert(tree_ids[p]).second) roots.push_back(at);
        if (leaf) continue;
        f.splits.push_back(values[p]);
        f.modes.push_back(kModes.at(modes[p]));
        TS_USER_CHECK(features[p] >= 0) << r.where(n) << ": negative feature id";
        f.features.push_back(features[p]);
        f.missing.push_back(missing[p]);
    }
    auto find = [&](int64_t tree, int64_t node) {
        auto it = index.find({tree, node});
        TS_USER_CHECK(it != index.end())
            << r.where(n) << ": tree " << tree << " has no node " << node;
        return it->second;
    };
    for (size_t p = 0; p < count; ++p) {
        if (modes[p] == "LEAF") continue;
        f.next_true.push_back(find(tree_ids[p], true_ids[p]));
        f.next_false.push_back(find(tree_ids[p], false_ids[p]));
    }
    f.starts = roots;
    // Every leaf's scores: the weights naming it summed, or under MIN / MAX
    // their least / greatest (a leaf without one: the float limit, which is
    // where ONNX's reference starts).
    const std::vector<int64_t> w_trees = ml_ints(r, n, prefix + "_treeids", true);
    const std::vector<int64_t> w_nodes = ml_ints(r, n, prefix + "_nodeids", true);
    const std::vector<int64_t> w_ids = ml_ints(r, n, prefix + "_ids", true);
    const std::vector<double> weights = values_of(r, n, prefix + "_weights");
    TS_USER_CHECK(w_nodes.size() == w_trees.size() && w_ids.size() == w_trees.size() &&
                  weights.size() == w_trees.size())
        << r.where(n) << ": the " << prefix << "_* attributes differ in length";
    const double none = aggregate == 2   ? double(std::numeric_limits<float>::max())
                        : aggregate == 3 ? double(std::numeric_limits<float>::lowest())
                                         : 0.0;
    f.leaf_table.assign(f.leaves * size_t(targets), none);
    for (size_t k = 0; k < w_trees.size(); ++k) {
        const int64_t at = find(w_trees[k], w_nodes[k]);
        TS_USER_CHECK(w_ids[k] >= 0 && w_ids[k] < targets)
            << r.where(n) << ": " << prefix << " id " << w_ids[k] << " out of range";
        if (at >= 0) continue;
        double& cell = f.leaf_table[size_t(-1 - at) * size_t(targets) + size_t(w_ids[k])];
        const double w = double(float(weights[k]));
        cell = aggregate == 2 ? std::min(cell, w) : aggregate == 3 ? std::max(cell, w) : cell + w;
    }
    std::vector<double> base = values_of(r, n, "base_values");
    if (base.size() == 1 && targets > 1) base.assign(size_t(targets), base[0]);
    TS_USER_CHECK(base.empty() || int64_t(base.size()) == targets)
        << r.where(n) << ": " << base.size() << " base values for " << targets << " scores";
    f.base = base;
    return f;
}

bool is_used(const Graphs& graphs, const std::string& name) {
    if (name.empty()) return false;
    for (const onnx::GraphProto* g : graphs) {
        for (const auto& o : g->output())
            if (o.name() == name) return true;
        for (const auto& node : g->node())
            for (const std::string& in : node.input())
                if (in == name) return true;
    }
    return false;
}

// A classifier's int64 labels (from `attr`), and how many classes its
// labels name; string labels only when its label output is not used.
struct ClassLabels {
    std::vector<int64_t> ints;
    int64_t classes = 0;
};

ClassLabels class_labels(const NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                         const std::string& attr) {
    ml_arity(r, n, 1, 2);
    ClassLabels c;
    c.ints = ml_ints(r, n, attr, false);
    const std::vector<std::string> names = strings_of(n, "classlabels_strings");
    c.classes = int64_t(c.ints.empty() ? names.size() : c.ints.size());
    TS_USER_CHECK(c.classes >= 2) << r.where(n) << ": needs two or more class labels";
    TS_USER_CHECK(!c.ints.empty() || !is_used(graphs, n.output(0)))
        << r.where(n) << ": string class labels are not supported (tensors of strings)";
    return c;
}

// Output 1: post(scores); output 0: the label of each row's best score.
void emit_scores_and_labels(NodeRewriter& r, const onnx::NodeProto& n, const std::string& scores,
                            int64_t post, const ClassLabels& c, std::vector<onnx::NodeProto>& out) {
    const std::string z = n.output(1).empty() ? r.fresh("scores") : n.output(1);
    emit_ml_post(r, n, scores, post, z, out);
    if (c.ints.empty()) return;
    const std::string best =
        r.emit(n, "ArgMax", {z}, out, "", {int_attr("axis", 1), int_attr("keepdims", 0)});
    r.emit(n, "Gather",
           {r.constant(n,
                       ml_tensor(onnx::TensorProto_DataType_INT64, {c.classes},
                                 std::vector<double>(c.ints.begin(), c.ints.end())),
                       out),
            best},
           out, n.output(0).empty() ? r.fresh("label") : n.output(0));
}

void expand_regressor(NodeRewriter& r, const onnx::NodeProto& n,
                      std::vector<onnx::NodeProto>& out) {
    ml_arity(r, n, 1, 1);
    const int64_t targets = ml_target_count(r, n, "n_targets");
    static const std::map<std::string, int64_t> kAggregates = {
        {"AVERAGE", 0}, {"SUM", 1}, {"MIN", 2}, {"MAX", 3}};
    const std::string aggregate = string_of(n, "aggregate_function", "SUM");
    TS_USER_CHECK(kAggregates.count(aggregate))
        << r.where(n) << ": unknown aggregate_function " << aggregate;
    Forest f = classic_forest(r, n, "target", targets, kAggregates.at(aggregate));
    const int64_t post = post_transform(r, n);
    emit_ml_post(r, n, emit_forest(r, n, n.input(0), f, out), post, n.output(0), out);
}

void expand_classifier(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                       std::vector<onnx::NodeProto>& out) {
    const ClassLabels c = class_labels(r, graphs, n, "classlabels_int64s");
    Forest f = classic_forest(r, n, "class", c.classes, 1);
    const int64_t post = post_transform(r, n);
    std::string scores = emit_forest(r, n, n.input(0), f, out);
    // Binary: every weight for one class. As ONNX's reference reads it, the
    // first column is that score s, and the scores become [1 - s, s] (no
    // transform) or [-s, s] (before the transform).
    const std::vector<int64_t> ids = ml_ints(r, n, "class_ids", true);
    if (std::set<int64_t>(ids.begin(), ids.end()).size() == 1) {
        TS_USER_CHECK(c.classes == 2)
            << r.where(n) << ": one class scored among " << c.classes << " is not supported";
        const std::string s =
            r.emit(n, "Gather", {scores, r.ints(n, {0}, out)}, out, "", {int_attr("axis", 1)});
        const std::string other =
            post == 0 ? r.emit(n, "Sub",
                               {r.constant(n, ml_tensor(f.weight_type, {}, {1.0}), out), s}, out)
                      : r.emit(n, "Neg", {s}, out);
        scores = r.emit(n, "Concat", {other, s}, out, "", {int_attr("axis", 1)});
    }
    emit_scores_and_labels(r, n, scores, post, c, out);
}

// x cast to float, times the coefficients [rows of `per_row`] transposed,
// plus the intercepts: [N, rows].
std::string linear_scores(NodeRewriter& r, const onnx::NodeProto& n, int64_t per_row,
                          std::vector<onnx::NodeProto>& out) {
    const int F32 = onnx::TensorProto_DataType_FLOAT;
    const std::vector<double> coef = floats_of(n, "coefficients");
    const std::vector<double> intercepts = floats_of(n, "intercepts");
    TS_USER_CHECK(!coef.empty() && per_row > 0 && coef.size() % size_t(per_row) == 0)
        << r.where(n) << ": " << coef.size() << " coefficients are not rows of " << per_row;
    const int64_t rows = int64_t(coef.size()) / per_row;
    TS_USER_CHECK(intercepts.empty() || int64_t(intercepts.size()) == rows)
        << r.where(n) << ": " << intercepts.size() << " intercepts for " << rows << " rows";
    std::vector<double> by_column(coef.size());  // [per_row, rows]
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < per_row; ++j)
            by_column[size_t(j * rows + i)] = coef[size_t(i * per_row + j)];
    std::string y = r.emit(n, "MatMul",
                           {r.emit(n, "Cast", {n.input(0)}, out, "", {int_attr("to", F32)}),
                            r.constant(n, ml_tensor(F32, {per_row, rows}, by_column), out)},
                           out);
    if (!intercepts.empty())
        y = r.emit(n, "Add", {y, r.constant(n, ml_tensor(F32, {rows}, intercepts), out)}, out);
    return y;
}

// The features per row: the input's last dim, which the model must declare.
int64_t feature_count(const Graphs& graphs, const onnx::NodeProto& n) {
    for (const onnx::GraphProto* g : graphs)
        for (const auto* list : {&g->input(), &g->value_info()})
            for (const auto& vi : *list)
                if (vi.name() == n.input(0) && vi.type().tensor_type().has_shape()) {
                    const auto& shape = vi.type().tensor_type().shape();
                    if (shape.dim_size() == 2 && shape.dim(1).has_dim_value())
                        return shape.dim(1).dim_value();
                }
    return -1;
}

void expand_linear_classifier(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                              std::vector<onnx::NodeProto>& out) {
    const ClassLabels c = class_labels(r, graphs, n, "classlabels_ints");
    const size_t coefs = floats_of(n, "coefficients").size();
    const size_t rows = std::max<size_t>(floats_of(n, "intercepts").size(), 1);
    const int64_t features = feature_count(graphs, n);
    const int64_t per_row = features > 0 ? features : int64_t(coefs / rows);
    std::string scores = linear_scores(r, n, per_row, out);
    // One row of coefficients for two classes: the scores are [-s, s].
    if (int64_t(coefs) == per_row && c.classes == 2)
        scores = r.emit(n, "Concat", {r.emit(n, "Neg", {scores}, out), scores}, out, "",
                        {int_attr("axis", 1)});
    emit_scores_and_labels(r, n, scores, post_transform(r, n), c, out);
}

void expand_linear_regressor(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                             std::vector<onnx::NodeProto>& out) {
    ml_arity(r, n, 1, 1);
    const int64_t targets = ml_target_count(r, n, "targets");
    const int64_t per_row = int64_t(floats_of(n, "coefficients").size()) / targets;
    const int64_t features = feature_count(graphs, n);
    TS_USER_CHECK(features < 0 || features == per_row)
        << r.where(n) << ": coefficients for " << per_row << " features, the input has "
        << features;
    emit_ml_post(r, n, linear_scores(r, n, per_row, out), post_transform(r, n), n.output(0), out);
}

// Each row divided by its largest magnitude (MAX), the sum of its
// magnitudes (L1) or its Euclidean norm (L2), at least 1e-30; in float.
void expand_normalizer(NodeRewriter& r, const onnx::NodeProto& n,
                       std::vector<onnx::NodeProto>& out) {
    ml_arity(r, n, 1, 1);
    const std::string norm = string_of(n, "norm", "MAX");
    TS_USER_CHECK(norm == "MAX" || norm == "L1" || norm == "L2")
        << r.where(n) << ": unknown norm " << norm;
    const int F32 = onnx::TensorProto_DataType_FLOAT;
    const std::string x = r.emit(n, "Cast", {n.input(0)}, out, "", {int_attr("to", F32)});
    std::string div;
    if (norm == "L2")
        div =
            r.emit(n, "Sqrt",
                   {r.reduce(n, "ReduceSum", r.emit(n, "Mul", {x, x}, out), {1}, true, out)}, out);
    else
        div = r.reduce(n, norm == "MAX" ? "ReduceMax" : "ReduceSum", r.emit(n, "Abs", {x}, out),
                       {1}, true, out);
    div = r.emit(n, "Max", {div, r.constant(n, ml_tensor(F32, {}, {1e-30}), out)}, out);
    r.emit(n, "Div", {x, div}, out, n.output(0));
}

// Y = (X - offset) * scale, in float.
void expand_scaler(NodeRewriter& r, const onnx::NodeProto& n, std::vector<onnx::NodeProto>& out) {
    ml_arity(r, n, 1, 1);
    const std::vector<double> offset = floats_of(n, "offset"), scale = floats_of(n, "scale");
    const int F32 = onnx::TensorProto_DataType_FLOAT;
    const std::string x = r.emit(n, "Cast", {n.input(0)}, out, "", {int_attr("to", F32)});
    const std::string shifted =
        offset.empty()
            ? x
            : r.emit(n, "Sub",
                     {x, r.constant(n, ml_tensor(F32, {int64_t(offset.size())}, offset), out)},
                     out);
    if (scale.empty()) {
        r.emit(n, "Identity", {shifted}, out, n.output(0));
        return;
    }
    r.emit(n, "Mul", {shifted, r.constant(n, ml_tensor(F32, {int64_t(scale.size())}, scale), out)},
           out, n.output(0));
}

// Y = 1 where X > threshold, else 0, in X's type.
void expand_binarizer(NodeRewriter& r, const onnx::NodeProto& n,
                      std::vector<onnx::NodeProto>& out) {
    ml_arity(r, n, 1, 1);
    const onnx::AttributeProto* a = find_attr(n, "threshold");
    const float threshold = a ? a->f() : 0.f;
    const std::string x = n.input(0);
    r.emit(n, "Where",
           {r.emit(n, "Greater", {x, r.scalar_like(n, x, threshold, out)}, out),
            r.scalar_like(n, x, 1.f, out), r.scalar_like(n, x, 0.f, out)},
           out, n.output(0));
}

// Y = X's elements at the indices along its last axis.
void expand_array_feature_extractor(NodeRewriter& r, const onnx::NodeProto& n,
                                    std::vector<onnx::NodeProto>& out) {
    ml_arity(r, n, 2, 1);
    r.emit(n, "Gather", {n.input(0), n.input(1)}, out, n.output(0), {int_attr("axis", -1)});
}

}  // namespace

bool expand_classic_ml_op(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                          std::vector<onnx::NodeProto>& out) {
    if (n.op_type() == "TreeEnsembleRegressor")
        expand_regressor(r, n, out);
    else if (n.op_type() == "TreeEnsembleClassifier")
        expand_classifier(r, graphs, n, out);
    else if (n.op_type() == "Scaler")
        expand_scaler(r, n, out);
    else if (n.op_type() == "LinearClassifier")
        expand_linear_classifier(r, graphs, n, out);
    else if (n.op_type() == "LinearRegressor")
        expand_linear_regressor(r, graphs, n, out);
    else if (n.op_type() == "Normalizer")
        expand_normalizer(r, n, out);
    else if (n.op_type() == "Binarizer")
        expand_binarizer(r, n, out);
    else if (n.op_type() == "ArrayFeatureExtractor")
        expand_array_feature_extractor(r, n, out);
    else
        return false;
    return true;
}

}  // namespace tessera::frontend::onnx_import
