// ai.onnx.ml TreeEnsemble as standard ONNX ops (see onnx_ml_trees.h).
#include "engine/frontend/onnx/onnx_ml_trees.h"

#include <algorithm>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_compose.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_index.h"
#include "engine/frontend/onnx/onnx_node_rewrite.h"

namespace tessera::frontend::onnx_import {

namespace {

constexpr const char* kMlDomain = "ai.onnx.ml";
enum Mode : int64_t { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember };

std::vector<int64_t> ints_of(const NodeRewriter& r, const onnx::NodeProto& n,
                             const std::string& name, bool required) {
    const onnx::AttributeProto* a = find_attr(n, name);
    TS_USER_CHECK(a || !required) << r.where(n) << ": needs attribute '" << name << "'";
    return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

int64_t int_of(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? a->i() : fallback;
}

// The values of tensor attribute `name` and its element type.
std::vector<double> tensor_of(const NodeRewriter& r, const onnx::NodeProto& n,
                              const std::string& name, int* elem_type = nullptr) {
    const onnx::AttributeProto* a = find_attr(n, name);
    TS_USER_CHECK(a && a->has_t()) << r.where(n) << ": needs tensor attribute '" << name << "'";
    if (elem_type) *elem_type = a->t().data_type();
    return constant_values(decode_tensor(a->t(), r.where(n) + ": attribute '" + name + "'"));
}

onnx::TensorProto tensor(int elem_type, const std::vector<int64_t>& shape,
                         const std::vector<double>& v) {
    onnx::TensorProto t;
    t.set_data_type(elem_type);
    for (int64_t d : shape) t.add_dims(d);
    for (double x : v) {
        switch (elem_type) {
            case onnx::TensorProto_DataType_INT64:
                t.add_int64_data(int64_t(x));
                break;
            case onnx::TensorProto_DataType_BOOL:
                t.add_int32_data(x != 0 ? 1 : 0);
                break;
            case onnx::TensorProto_DataType_DOUBLE:
                t.add_double_data(x);
                break;
            default:
                t.add_float_data(float(x));
        }
    }
    return t;
}

// Levels from each root to its deepest leaf (a tree that is only a leaf: 0).
int64_t deepest(const NodeRewriter& r, const onnx::NodeProto& n, const std::vector<int64_t>& roots,
                const std::vector<int64_t>& next_true, const std::vector<int64_t>& next_false) {
    const size_t count = next_true.size();
    std::vector<int64_t> depth(count, -1);
    std::vector<char> open(count, 0);
    int64_t worst = 0;
    for (int64_t root : roots) {
        if (root < 0) continue;
        std::vector<int64_t> stack = {root};
        while (!stack.empty()) {
            const int64_t i = stack.back();
            if (depth[size_t(i)] >= 0) {
                stack.pop_back();
                continue;
            }
            open[size_t(i)] = 1;
            bool ready = true;
            for (int64_t c : {next_true[size_t(i)], next_false[size_t(i)]})
                if (c >= 0 && depth[size_t(c)] < 0) {
                    TS_USER_CHECK(!open[size_t(c)])
                        << r.where(n) << ": the trees have a cycle through node " << c;
                    stack.push_back(c);
                    ready = false;
                }
            if (!ready) continue;
            int64_t d = 0;
            for (int64_t c : {next_true[size_t(i)], next_false[size_t(i)]})
                d = std::max(d, c >= 0 ? depth[size_t(c)] : 0);
            depth[size_t(i)] = d + 1;
            open[size_t(i)] = 0;
            stack.pop_back();
        }
        worst = std::max(worst, depth[size_t(root)]);
    }
    return worst;
}

void expand_tree_ensemble(NodeRewriter& r, const onnx::NodeProto& n,
                          std::vector<onnx::NodeProto>& out) {
    TS_USER_CHECK(n.input_size() == 1 && n.output_size() == 1)
        << r.where(n) << ": takes one input and gives one output";
    int value_type = 0;
    const std::vector<double> splits = tensor_of(r, n, "nodes_splits", &value_type);
    TS_USER_CHECK(value_type == onnx::TensorProto_DataType_FLOAT ||
                  value_type == onnx::TensorProto_DataType_DOUBLE)
        << r.where(n) << ": only float and double trees are supported";
    const std::vector<double> modes = tensor_of(r, n, "nodes_modes");
    const std::vector<int64_t> features = ints_of(r, n, "nodes_featureids", true);
    const std::vector<int64_t> true_ids = ints_of(r, n, "nodes_truenodeids", true);
    const std::vector<int64_t> false_ids = ints_of(r, n, "nodes_falsenodeids", true);
    const std::vector<int64_t> true_leafs = ints_of(r, n, "nodes_trueleafs", true);
    const std::vector<int64_t> false_leafs = ints_of(r, n, "nodes_falseleafs", true);
    std::vector<int64_t> missing = ints_of(r, n, "nodes_missing_value_tracks_true", false);
    const std::vector<int64_t> leaf_targets = ints_of(r, n, "leaf_targetids", true);
    const std::vector<double> leaf_weights = tensor_of(r, n, "leaf_weights");
    const std::vector<int64_t> roots = ints_of(r, n, "tree_roots", true);
    const int64_t targets = int_of(n, "n_targets", 1);
    const int64_t aggregate = int_of(n, "aggregate_function", 1);
    const int64_t post = int_of(n, "post_transform", 0);
    const size_t count = splits.size(), leaves = leaf_weights.size();
    if (missing.empty()) missing.assign(count, 0);
    for (const std::vector<int64_t>* v :
         {&features, &true_ids, &false_ids, &true_leafs, &false_leafs,
          static_cast<const std::vector<int64_t>*>(&missing)})
        TS_USER_CHECK(v->size() == count) << r.where(n) << ": the nodes_* tables differ in length ("
                                          << v->size() << " and " << count << ")";
    TS_USER_CHECK(modes.size() == count && leaf_targets.size() == leaves && !roots.empty() &&
                  count > 0 && targets >= 1)
        << r.where(n) << ": inconsistent tree tables";
    for (double m : modes)
        TS_USER_CHECK(m >= kLeq && m < kMember) << r.where(n) << ": node mode " << m
                                                << " is not supported (BRANCH_MEMBER sets are not)";
    TS_USER_CHECK(aggregate >= 0 && aggregate <= 3) << r.where(n) << ": unknown aggregate_function";
    TS_USER_CHECK(targets == 1 || aggregate <= 1)
        << r.where(n) << ": MIN or MAX over several targets is not supported";
    TS_USER_CHECK(post == 0 || post == 1 || post == 2)
        << r.where(n) << ": post_transform " << post
        << " is not supported (NONE, SOFTMAX and LOGISTIC are)";
    for (int64_t t : leaf_targets)
        TS_USER_CHECK(t >= 0 && t < targets)
            << r.where(n) << ": leaf target " << t << " out of range";
    // A node's next state: a node index, or -1 - leaf for a leaf.
    std::vector<int64_t> next_true(count), next_false(count);
    for (size_t i = 0; i < count; ++i) {
        auto next = [&](int64_t id, int64_t leaf) {
            TS_USER_CHECK(id >= 0 && size_t(id) < (leaf ? leaves : count))
                << r.where(n) << ": node " << i << " points to " << (leaf ? "leaf " : "node ") << id
                << ", out of range";
            return leaf ? -1 - id : id;
        };
        next_true[i] = next(true_ids[i], true_leafs[i]);
        next_false[i] = next(false_ids[i], false_leafs[i]);
        TS_USER_CHECK(features[i] >= 0) << r.where(n) << ": negative feature id";
    }
    std::vector<double> start;
    std::vector<int64_t> walk_roots;
    for (int64_t root : roots) {
        TS_USER_CHECK(root >= 0 && size_t(root) < count)
            << r.where(n) << ": tree root " << root << " out of range";
        // A tree that is one leaf, as ONNX's reference reads it: the root's
        // two branches the same leaf, the root index that leaf.
        const bool leaf = true_leafs[size_t(root)] && false_leafs[size_t(root)] &&
                          true_ids[size_t(root)] == false_ids[size_t(root)];
        TS_USER_CHECK(!leaf || size_t(root) < leaves)
            << r.where(n) << ": leaf " << root << " out of range";
        start.push_back(double(leaf ? -1 - root : root));
        walk_roots.push_back(leaf ? -1 : root);
    }
    const int64_t trees = int64_t(roots.size());
    const int64_t levels = deepest(r, n, walk_roots, next_true, next_false);

    auto constant = [&](int type, std::vector<int64_t> shape, const std::vector<double>& v) {
        return r.constant(n, tensor(type, shape, v), out);
    };
    auto as_doubles = [](const std::vector<int64_t>& v) {
        return std::vector<double>(v.begin(), v.end());
    };
    const int I64 = onnx::TensorProto_DataType_INT64;
    const std::string x = n.input(0);
    const std::string feat = constant(I64, {int64_t(count)}, as_doubles(features));
    const std::string split = constant(value_type, {int64_t(count)}, splits);
    const std::string on_true = constant(I64, {int64_t(count)}, as_doubles(next_true));
    const std::string on_false = constant(I64, {int64_t(count)}, as_doubles(next_false));
    const bool mixed =
        std::any_of(modes.begin(), modes.end(), [&](double m) { return m != modes[0]; });
    const std::string mode = mixed ? constant(I64, {int64_t(count)}, modes) : "";
    const bool tracks =
        std::any_of(missing.begin(), missing.end(), [](int64_t m) { return m != 0; });
    const std::string track =
        tracks ? constant(onnx::TensorProto_DataType_BOOL, {int64_t(count)}, as_doubles(missing))
               : "";
    // The state [rows, trees], every row starting at the roots.
    const std::string rows =
        r.emit(n, "Gather", {r.emit(n, "Shape", {x}, out), r.ints(n, {0}, out)}, out);
    const std::string shape =
        r.emit(n, "Concat", {rows, r.ints(n, {trees}, out)}, out, "", {int_attr("axis", 0)});
    std::string state = r.emit(n, "Expand", {constant(I64, {1, trees}, start), shape}, out);
    const std::string zero = r.ints(n, {0}, out, true);
    static const char* kCompare[] = {"LessOrEqual", "Less",  "GreaterOrEqual",
                                     "Greater",     "Equal", "Equal"};
    for (int64_t level = 0; level < levels; ++level) {
        const std::string at = r.emit(n, "Max", {state, zero}, out);
        const std::string xv =
            r.emit(n, "GatherElements", {x, r.emit(n, "Gather", {feat, at}, out)}, out, "",
                   {int_attr("axis", 1)});
        const std::string th = r.emit(n, "Gather", {split, at}, out);
        auto compare = [&](int64_t m) {
            std::string c = r.emit(n, kCompare[m], {xv, th}, out);
            return m == kNeq ? r.emit(n, "Not", {c}, out) : c;
        };
        std::string cond = compare(int64_t(modes[0]));
        if (mixed) {
            const std::string md = r.emit(n, "Gather", {mode, at}, out);
            for (int64_t m = kLeq; m < kMember; ++m) {
                if (m == int64_t(modes[0]) ||
                    std::find(modes.begin(), modes.end(), double(m)) == modes.end())
                    continue;
                const std::string is_m = r.emit(n, "Equal", {md, r.ints(n, {m}, out, true)}, out);
                cond = r.emit(n, "Where", {is_m, compare(m), cond}, out);
            }
        }
        if (tracks)
            cond = r.emit(n, "Or",
                          {cond, r.emit(n, "And",
                                        {r.emit(n, "IsNaN", {xv}, out),
                                         r.emit(n, "Gather", {track, at}, out)},
                                        out)},
                          out);
        const std::string next = r.emit(n, "Where",
                                        {cond, r.emit(n, "Gather", {on_true, at}, out),
                                         r.emit(n, "Gather", {on_false, at}, out)},
                                        out);
        state = r.emit(n, "Where", {r.emit(n, "Less", {state, zero}, out), state, next}, out);
    }
    // Leaves: -1 - state. Their weights per target [leaves, targets].
    const std::string leaf = r.emit(n, "Sub", {r.ints(n, {-1}, out, true), state}, out);
    std::vector<double> table(leaves * size_t(targets), 0.0);
    for (size_t l = 0; l < leaves; ++l)
        table[l * size_t(targets) + size_t(leaf_targets[l])] = leaf_weights[l];
    const std::string values =
        r.emit(n, "Gather", {constant(value_type, {int64_t(leaves), targets}, table), leaf}, out);
    static const char* kReduce[] = {"ReduceSum", "ReduceSum", "ReduceMin", "ReduceMax"};
    std::string y = r.reduce(n, kReduce[aggregate], values, {1}, false, out);
    if (aggregate == 0) y = r.emit(n, "Div", {y, constant(value_type, {}, {double(trees)})}, out);
    const std::string result = n.output(0);
    if (post == 0)
        r.emit(n, "Identity", {y}, out, result);
    else
        r.emit(n, post == 1 ? "Softmax" : "Sigmoid", {y}, out, result,
               post == 1 ? std::vector<onnx::AttributeProto>{int_attr("axis", -1)}
                         : std::vector<onnx::AttributeProto>{});
}

}  // namespace

void expand_ml_tree_ensembles(onnx::ModelProto& model, const std::string& origin) {
    if (!uses_op(model.graph(), "TreeEnsemble")) return;
    int64_t opset = 0;
    for (const auto& op : model.opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") opset = op.version();
    NodeRewriter r(origin, "", model.graph());
    r.opset = opset;
    rewrite_nodes(
        r, *model.mutable_graph(),
        [](NodeRewriter& rw, const Graphs&, onnx::NodeProto& n, std::vector<onnx::NodeProto>& out) {
            if (n.op_type() != "TreeEnsemble" || n.domain() != kMlDomain) return false;
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
