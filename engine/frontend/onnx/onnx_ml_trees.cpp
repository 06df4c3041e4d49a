// ai.onnx.ml TreeEnsemble (ml opset 5) as standard ONNX ops, and the entry
// point of the ai.onnx.ml rewrites (see onnx_ml_trees.h).
#include "engine/frontend/onnx/onnx_ml_trees.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_compose.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_index.h"
#include "engine/frontend/onnx/onnx_ml_forest.h"
#include "engine/frontend/onnx/onnx_node_rewrite.h"
#include "onnx/version_converter/convert.h"

namespace tessera::frontend::onnx_import {

namespace {

constexpr const char* kMlDomain = "ai.onnx.ml";

void expand_tree_ensemble(NodeRewriter& r, const onnx::NodeProto& n,
                          std::vector<onnx::NodeProto>& out) {
    ml_arity(r, n, 1, 1);
    Forest f;
    f.splits = ml_tensor_values(r, n, "nodes_splits", &f.split_type);
    f.weight_type = f.split_type;
    TS_USER_CHECK(f.split_type == onnx::TensorProto_DataType_FLOAT ||
                  f.split_type == onnx::TensorProto_DataType_DOUBLE)
        << r.where(n) << ": only float and double trees are supported";
    for (double m : ml_tensor_values(r, n, "nodes_modes"))
        f.modes.push_back(m >= 0 && m <= kMember ? int64_t(m) : -1);  // -1: refused below
    f.features = ml_ints(r, n, "nodes_featureids", true);
    const std::vector<int64_t> true_ids = ml_ints(r, n, "nodes_truenodeids", true);
    const std::vector<int64_t> false_ids = ml_ints(r, n, "nodes_falsenodeids", true);
    const std::vector<int64_t> true_leafs = ml_ints(r, n, "nodes_trueleafs", true);
    const std::vector<int64_t> false_leafs = ml_ints(r, n, "nodes_falseleafs", true);
    f.missing = ml_ints(r, n, "nodes_missing_value_tracks_true", false);
    const std::vector<int64_t> leaf_targets = ml_ints(r, n, "leaf_targetids", true);
    const std::vector<double> leaf_weights = ml_tensor_values(r, n, "leaf_weights");
    const std::vector<int64_t> roots = ml_ints(r, n, "tree_roots", true);
    f.targets = ml_int(n, "n_targets", 1);
    f.aggregate = ml_int(n, "aggregate_function", 1);
    const int64_t post = ml_int(n, "post_transform", 0);
    const size_t count = f.splits.size();
    f.leaves = leaf_weights.size();
    if (f.missing.empty()) f.missing.assign(count, 0);
    for (const std::vector<int64_t>* v :
         {static_cast<const std::vector<int64_t>*>(&f.features), &true_ids, &false_ids, &true_leafs,
          &false_leafs, static_cast<const std::vector<int64_t>*>(&f.missing)})
        TS_USER_CHECK(v->size() == count) << r.where(n) << ": the nodes_* tables differ in length ("
                                          << v->size() << " and " << count << ")";
    TS_USER_CHECK(f.modes.size() == count && leaf_targets.size() == f.leaves && !roots.empty() &&
                  count > 0 && f.targets >= 1 && f.targets <= (int64_t(1) << 20))
        << r.where(n) << ": inconsistent tree tables";
    for (int64_t m : f.modes)
        TS_USER_CHECK(m >= kLeq && m <= kMember) << r.where(n) << ": unknown node mode";
    // The BRANCH_MEMBER nodes' sets, in node order, each ended by a NaN.
    f.members.assign(count, {});
    if (std::find(f.modes.begin(), f.modes.end(), kMember) != f.modes.end()) {
        const std::vector<double> values = ml_tensor_values(r, n, "membership_values");
        const size_t sets = size_t(std::count(f.modes.begin(), f.modes.end(), int64_t(kMember)));
        TS_USER_CHECK(size_t(std::count_if(values.begin(), values.end(),
                                           [](double v) { return std::isnan(v); })) == sets)
            << r.where(n) << ": membership_values must hold " << sets
            << " sets, each ended by a NaN";
        size_t at = 0;
        for (size_t i = 0; i < count; ++i) {
            if (f.modes[i] != kMember) continue;
            for (; !std::isnan(values[at]); ++at) f.members[i].push_back(values[at]);
            ++at;  // the NaN ending this set
        }
    }
    TS_USER_CHECK(f.aggregate >= 0 && f.aggregate <= 3)
        << r.where(n) << ": unknown aggregate_function";
    TS_USER_CHECK(f.targets == 1 || f.aggregate <= 1)
        << r.where(n) << ": MIN or MAX over several targets is not supported";
    TS_USER_CHECK(post == 0 || post == 1 || post == 2)
        << r.where(n) << ": post_transform " << post
        << " is not supported (NONE, SOFTMAX and LOGISTIC are)";
    f.leaf_table.assign(f.leaves * size_t(f.targets), 0.0);
    for (size_t l = 0; l < f.leaves; ++l) {
        TS_USER_CHECK(leaf_targets[l] >= 0 && leaf_targets[l] < f.targets)
            << r.where(n) << ": leaf target " << leaf_targets[l] << " out of range";
        f.leaf_table[l * size_t(f.targets) + size_t(leaf_targets[l])] = leaf_weights[l];
    }
    f.next_true.resize(count);
    f.next_false.resize(count);
    for (size_t i = 0; i < count; ++i) {
        auto next = [&](int64_t id, int64_t leaf) {
            TS_USER_CHECK(id >= 0 && size_t(id) < (leaf ? f.leaves : count))
                << r.where(n) << ": node " << i << " points to " << (leaf ? "leaf " : "node ") << id
                << ", out of range";
            return leaf ? -1 - id : id;
        };
        f.next_true[i] = next(true_ids[i], true_leafs[i]);
        f.next_false[i] = next(false_ids[i], false_leafs[i]);
        TS_USER_CHECK(f.features[i] >= 0) << r.where(n) << ": negative feature id";
    }
    for (int64_t root : roots) {
        TS_USER_CHECK(root >= 0 && size_t(root) < count)
            << r.where(n) << ": tree root " << root << " out of range";
        // A tree that is one leaf, as ONNX's reference reads it: the root's
        // two branches the same leaf, the root index that leaf.
        const bool leaf = true_leafs[size_t(root)] && false_leafs[size_t(root)] &&
                          true_ids[size_t(root)] == false_ids[size_t(root)];
        TS_USER_CHECK(!leaf || size_t(root) < f.leaves)
            << r.where(n) << ": leaf " << root << " out of range";
        f.starts.push_back(leaf ? -1 - root : root);
    }
    emit_ml_post(r, n, emit_forest(r, n, n.input(0), f, out), post, n.output(0), out);
}

}  // namespace

void expand_ml_ops(onnx::ModelProto& model, const std::string& origin) {
    if (!uses_domain(model.graph(), kMlDomain)) return;
    auto default_opset = [&] {
        int64_t v = 0;
        for (const auto& op : model.opset_import())
            if (op.domain().empty() || op.domain() == "ai.onnx") v = op.version();
        return v;
    };
    int64_t opset = default_opset();
    if (opset == 0) {
        // Only ai.onnx.ml imported (ONNX's own TreeEnsemble tests): the
        // standard ops of the rewrite come in opset 17's forms.
        auto* op = model.add_opset_import();
        op->set_domain("");
        op->set_version(17);
        opset = 17;
    }
    NodeRewriter r(origin, "", model.graph());
    // The first ai.onnx.ml op Tessera does not rewrite stops the import here,
    // before any conversion (ZipMap: a sequence of maps is not a tensor).
    static const std::set<std::string> kRewritten = {"TreeEnsemble",
                                                     "TreeEnsembleRegressor",
                                                     "TreeEnsembleClassifier",
                                                     "Scaler",
                                                     "LinearClassifier",
                                                     "LinearRegressor",
                                                     "Normalizer",
                                                     "Binarizer",
                                                     "ArrayFeatureExtractor"};
    std::function<void(const onnx::GraphProto&)> check = [&](const onnx::GraphProto& g) {
        for (const auto& node : g.node()) {
            TS_USER_CHECK(node.domain() != kMlDomain || kRewritten.count(node.op_type()))
                << r.where(node) << ": unsupported op ai.onnx.ml." << node.op_type();
            for (const auto& a : node.attribute()) {
                if (a.has_g()) check(a.g());
                for (const auto& sub : a.graphs()) check(sub);
            }
        }
    };
    check(model.graph());
    // The walk needs GatherElements (opset 11): older models (skl2onnx and
    // onnxmltools wrote opset 9) are converted first.
    if (opset > 0 && opset < 11 &&
        (uses_op(model.graph(), "TreeEnsembleRegressor") ||
         uses_op(model.graph(), "TreeEnsembleClassifier"))) {
        try {
            model = onnx::version_conversion::ConvertVersion(model, 11);
        } catch (const std::exception& e) {
            TS_USER_FAIL() << origin << ": converting the model from opset " << opset
                           << " to 11 for its tree ensembles failed: " << e.what();
        }
        model.mutable_graph()->clear_value_info();  // the converter leaves entries without types
        opset = default_opset();
    }
    r = NodeRewriter(origin, "", model.graph());
    r.opset = opset;
    r.cast_like = opset >= 15;
    rewrite_nodes(r, *model.mutable_graph(),
                  [](NodeRewriter& rw, const Graphs& graphs, onnx::NodeProto& n,
                     std::vector<onnx::NodeProto>& out) {
                      if (n.domain() != kMlDomain) return false;
                      if (n.op_type() != "TreeEnsemble")
                          return expand_classic_ml_op(rw, graphs, n, out);
                      expand_tree_ensemble(rw, n, out);
                      return true;
                  });
    // ONNX 1.12 knows ai.onnx.ml up to opset 3: drop the import no node needs now.
    if (!uses_domain(model.graph(), kMlDomain)) {
        auto* ops = model.mutable_opset_import();
        for (int i = ops->size() - 1; i >= 0; --i)
            if (ops->Get(i).domain() == kMlDomain) ops->DeleteSubrange(i, 1);
    }
}

}  // namespace tessera::frontend::onnx_import
