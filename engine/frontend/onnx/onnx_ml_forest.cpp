// Decision-tree forests walked in standard ONNX ops (see onnx_ml_forest.h).
#include "engine/frontend/onnx/onnx_ml_forest.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_compose.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_index.h"

namespace tessera::frontend::onnx_import {

std::vector<int64_t> ml_ints(const NodeRewriter& r, const onnx::NodeProto& n,
                             const std::string& name, bool required) {
    const onnx::AttributeProto* a = find_attr(n, name);
    TS_USER_CHECK(a || !required) << r.where(n) << ": needs attribute '" << name << "'";
    return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

void ml_arity(const NodeRewriter& r, const onnx::NodeProto& n, int inputs, int outputs) {
    static const char* kCount[] = {"no", "one", "two"};
    TS_USER_CHECK(n.input_size() == inputs && n.output_size() == outputs)
        << r.where(n) << ": takes " << kCount[inputs] << (inputs == 1 ? " input" : " inputs")
        << " and gives " << kCount[outputs] << (outputs == 1 ? " output" : " outputs");
}

int64_t ml_target_count(const NodeRewriter& r, const onnx::NodeProto& n, const std::string& name) {
    const int64_t count = ml_int(n, name, 1);
    TS_USER_CHECK(count >= 1 && count <= (int64_t(1) << 20))
        << r.where(n) << ": " << name << " " << count << " is out of range";
    return count;
}

int64_t ml_int(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? a->i() : fallback;
}

std::vector<double> ml_tensor_values(const NodeRewriter& r, const onnx::NodeProto& n,
                                     const std::string& name, int* elem_type) {
    const onnx::AttributeProto* a = find_attr(n, name);
    TS_USER_CHECK(a && a->has_t()) << r.where(n) << ": needs tensor attribute '" << name << "'";
    if (elem_type) *elem_type = a->t().data_type();
    return constant_values(decode_tensor(a->t(), r.where(n) + ": attribute '" + name + "'"));
}

onnx::TensorProto ml_tensor(int elem_type, const std::vector<int64_t>& shape,
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
            case onnx::TensorProto_DataType_INT32:
                t.add_int32_data(int32_t(x));
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

namespace {

// Levels from each root to its deepest leaf (a tree that is only a leaf,
// root -1: 0).
std::vector<int64_t> depths(const NodeRewriter& r, const onnx::NodeProto& n,
                            const std::vector<int64_t>& roots,
                            const std::vector<int64_t>& next_true,
                            const std::vector<int64_t>& next_false) {
    const size_t count = next_true.size();
    std::vector<int64_t> depth(count, -1);
    std::vector<char> open(count, 0);
    std::vector<int64_t> levels;
    for (int64_t root : roots) {
        levels.push_back(0);
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
        levels.back() = depth[size_t(root)];
    }
    return levels;
}

// The trees in groups walked separately, each as many steps as its deepest
// tree: sorted by depth, cut where the steps saved outweigh a walk's own
// cost (taken as the steps of a tenth of the trees at the deepest level).
std::vector<std::vector<int64_t>> walks_by_depth(const std::vector<int64_t>& depth) {
    std::vector<int64_t> order(depth.size());
    for (size_t t = 0; t < order.size(); ++t) order[t] = int64_t(t);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return depth[size_t(a)] < depth[size_t(b)]; });
    const size_t n = order.size();
    if (n == 0) return {};
    const double walk_cost = 0.1 * double(n) * double(depth[size_t(order.back())]);
    // Walks start and end where the depth changes: at most one cut per depth.
    std::vector<size_t> at = {0};
    for (size_t j = 1; j < n; ++j)
        if (depth[size_t(order[j - 1])] != depth[size_t(order[j])]) at.push_back(j);
    at.push_back(n);
    // best[b]: the cheapest walks of the trees before at[b]; from[b]: where its last one starts.
    std::vector<double> best(at.size(), 0.0);
    std::vector<size_t> from(at.size(), 0);
    for (size_t b = 1; b < at.size(); ++b) {
        best[b] = -1;
        for (size_t a = 0; a < b; ++a) {
            const double c = best[a] + walk_cost +
                             double(at[b] - at[a]) * double(depth[size_t(order[at[b] - 1])]);
            if (best[b] < 0 || c < best[b]) {
                best[b] = c;
                from[b] = a;
            }
        }
    }
    std::vector<std::vector<int64_t>> walks;
    for (size_t b = at.size() - 1; b > 0; b = from[b])
        walks.insert(walks.begin(), std::vector<int64_t>(order.begin() + long(at[from[b]]),
                                                         order.begin() + long(at[b])));
    return walks;
}

// Where each node and leaf sits in the branch table [rows, slot rows, kSlots]:
// a slot row holds nodes of one feature (so a row's comparisons read one
// input value, broadcast against contiguous thresholds), the leaves fill
// rows of their own.
constexpr int64_t kSlots = 32;

struct Slots {
    std::vector<int64_t> of_node, of_leaf;  // flat slot of each node and leaf
    std::vector<int64_t> row_feature;       // per slot row
    int64_t rows = 0;
};

Slots place(const Forest& f) {
    Slots s;
    const int64_t count = int64_t(f.splits.size());
    std::map<int64_t, std::vector<int64_t>> by_feature;
    for (int64_t i = 0; i < count; ++i) by_feature[f.features[size_t(i)]].push_back(i);
    s.of_node.assign(size_t(count), 0);
    for (const auto& [feature, nodes] : by_feature)
        for (size_t k = 0; k < nodes.size(); ++k) {
            if (k % kSlots == 0) {
                s.row_feature.push_back(feature);
                ++s.rows;
            }
            s.of_node[size_t(nodes[k])] = (s.rows - 1) * kSlots + int64_t(k % kSlots);
        }
    for (size_t l = 0; l < f.leaves; ++l) {
        if (l % kSlots == 0) {
            s.row_feature.push_back(0);
            ++s.rows;
        }
        s.of_leaf.push_back((s.rows - 1) * kSlots + int64_t(l % kSlots));
    }
    return s;
}

// The forest's aggregated scores [rows, targets] of x [rows, features]. The
// branch table holds where every node leads for every row (each leaf leads to
// itself), so one step of all trees is one GatherElements of that table by
// the state [rows, trees]: as many steps as the deepest tree, then the
// leaves' weights gathered and aggregated.
}  // namespace

std::string emit_forest(NodeRewriter& r, const onnx::NodeProto& n, const std::string& x,
                        const Forest& forest, std::vector<onnx::NodeProto>& out) {
    // Trees that are all single leaves: one node no tree reaches keeps the
    // table's shape.
    Forest f = forest;
    TS_USER_CHECK(f.leaves > 0 && !f.starts.empty()) << r.where(n) << ": the forest has no leaves";
    if (f.splits.empty()) {
        f.splits = {0.0};
        f.modes = {kLeq};
        f.features = {0};
        f.missing = {0};
        f.next_true = f.next_false = {-1};
    }
    const int64_t count = int64_t(f.splits.size()), trees = int64_t(f.starts.size());
    TS_USER_CHECK(r.opset >= 11)
        << r.where(n) << ": tree ensembles need a default-domain opset of 11 or newer (the model "
        << "imports " << r.opset << ")";
    std::vector<int64_t> walk_roots;
    for (int64_t s : f.starts) walk_roots.push_back(s >= 0 ? s : -1);
    const std::vector<int64_t> tree_depth = depths(r, n, walk_roots, f.next_true, f.next_false);
    const Slots slots = place(f);
    const int64_t entries = slots.rows * kSlots;
    auto slot = [&](int64_t next) {
        return next >= 0 ? slots.of_node[size_t(next)] : slots.of_leaf[size_t(-1 - next)];
    };

    auto constant = [&](int type, std::vector<int64_t> shape, const std::vector<double>& v) {
        return r.constant(n, ml_tensor(type, shape, v), out);
    };
    const int I64 = onnx::TensorProto_DataType_INT64;
    std::vector<double> split(size_t(entries), 0.0), on_true(size_t(entries), 0.0),
        on_false(size_t(entries), 0.0), mode(size_t(entries), double(f.modes[0])),
        track(size_t(entries), 0.0);
    for (int64_t e = 0; e < entries; ++e) on_true[size_t(e)] = on_false[size_t(e)] = double(e);
    for (int64_t i = 0; i < count; ++i) {
        const size_t e = size_t(slots.of_node[size_t(i)]);
        split[e] = f.splits[size_t(i)];
        on_true[e] = double(slot(f.next_true[size_t(i)]));
        on_false[e] = double(slot(f.next_false[size_t(i)]));
        mode[e] = double(f.modes[size_t(i)]);
        track[e] = double(f.missing[size_t(i)] != 0);
    }
    const int index_type = entries < (int64_t(1) << 31) ? onnx::TensorProto_DataType_INT32 : I64;
    const std::vector<int64_t> table_shape = {slots.rows, kSlots};
    const std::string xs = r.emit(n, "Cast", {x}, out, "", {int_attr("to", f.split_type)});
    // Each slot row's input value [rows, slot rows, 1].
    const std::string xv = r.emit(
        n, "Reshape",
        {r.emit(n, "Gather",
                {xs,
                 constant(I64, {slots.rows},
                          std::vector<double>(slots.row_feature.begin(), slots.row_feature.end()))},
                out, "", {int_attr("axis", 1)}),
         r.ints(n, {0, slots.rows, 1}, out)},
        out);
    const std::string th = constant(f.split_type, table_shape, split);
    // Comparisons of the opset (LessOrEqual and GreaterOrEqual came in 12;
    // before, Or of the two, false for NaN like them).
    auto compare = [&](int64_t m) -> std::string {
        static const char* kOp[] = {"LessOrEqual", "Less",  "GreaterOrEqual",
                                    "Greater",     "Equal", "Equal"};
        std::string c;
        if ((m == kLeq || m == kGte) && r.opset < 12)
            c = r.emit(n, "Or",
                       {r.emit(n, m == kLeq ? "Less" : "Greater", {xv, th}, out),
                        r.emit(n, "Equal", {xv, th}, out)},
                       out);
        else
            c = r.emit(n, kOp[m], {xv, th}, out);
        return m == kNeq ? r.emit(n, "Not", {c}, out) : c;
    };
    // Every mode's comparison where a node has it (BRANCH_MEMBER: below).
    std::vector<int64_t> present;
    for (int64_t m : f.modes)
        if (m != kMember && std::find(present.begin(), present.end(), m) == present.end())
            present.push_back(m);
    std::string cond = compare(present.empty() ? kLeq : present[0]);
    if (present.size() > 1) {
        const std::string md = constant(I64, table_shape, mode);
        for (size_t k = 1; k < present.size(); ++k) {
            const std::string is_m =
                r.emit(n, "Equal", {md, r.ints(n, {present[k]}, out, true)}, out);
            cond = r.emit(n, "Where", {is_m, compare(present[k]), cond}, out);
        }
    }
    // BRANCH_MEMBER: the input equals a member of the node's set (each set
    // padded with NaN, which equals nothing, to the largest).
    if (std::find(f.modes.begin(), f.modes.end(), kMember) != f.modes.end()) {
        size_t widest = 1;
        for (const std::vector<double>& m : f.members) widest = std::max(widest, m.size());
        std::vector<double> sets(size_t(entries) * widest, std::nan(""));
        std::vector<double> is_member(size_t(entries), 0.0);
        for (int64_t i = 0; i < count; ++i) {
            if (f.modes[size_t(i)] != kMember) continue;
            const size_t e = size_t(slots.of_node[size_t(i)]);
            is_member[e] = 1.0;
            for (size_t k = 0; k < f.members[size_t(i)].size(); ++k)
                sets[e * widest + k] = f.members[size_t(i)][k];
        }
        const std::string x4 =
            r.emit(n, "Reshape", {xv, r.ints(n, {0, slots.rows, 1, 1}, out)}, out);
        const std::string eq =
            r.emit(n, "Equal",
                   {x4, constant(f.split_type, {slots.rows, kSlots, int64_t(widest)}, sets)}, out);
        const std::string any = r.reduce(
            n, "ReduceMax",
            r.emit(n, "Cast", {eq}, out, "", {int_attr("to", onnx::TensorProto_DataType_FLOAT)}),
            {3}, false, out);
        const std::string hit =
            r.emit(n, "Cast", {any}, out, "", {int_attr("to", onnx::TensorProto_DataType_BOOL)});
        cond = r.emit(
            n, "Where",
            {constant(onnx::TensorProto_DataType_BOOL, table_shape, is_member), hit, cond}, out);
    }
    const bool tracks =
        std::any_of(f.missing.begin(), f.missing.end(), [](int64_t m) { return m != 0; });
    if (tracks || f.nan_takes_track) {
        const std::string nan = r.emit(n, "IsNaN", {xv}, out);
        const std::string track_table =
            constant(onnx::TensorProto_DataType_BOOL, table_shape, track);
        cond = f.nan_takes_track
                   ? r.emit(n, "Where", {nan, track_table, cond}, out)
                   : r.emit(n, "Or", {cond, r.emit(n, "And", {nan, track_table}, out)}, out);
    }
    // next[row, slot]: where the slot leads for that row.
    const std::string next = r.emit(n, "Reshape",
                                    {r.emit(n, "Where",
                                            {cond, constant(index_type, table_shape, on_true),
                                             constant(index_type, table_shape, on_false)},
                                            out),
                                     r.ints(n, {0, entries}, out)},
                                    out);
    // The leaves' weights per target, by slot [slots, targets].
    std::vector<double> weights(size_t(entries * f.targets), 0.0);
    for (size_t l = 0; l < f.leaves; ++l)
        for (int64_t t = 0; t < f.targets; ++t)
            weights[size_t(slots.of_leaf[l] * f.targets + t)] =
                f.leaf_table[l * size_t(f.targets) + size_t(t)];
    const std::string weight_table = constant(f.weight_type, {entries, f.targets}, weights);
    const std::string rows =
        r.emit(n, "Gather", {r.emit(n, "Shape", {x}, out), r.ints(n, {0}, out)}, out);
    static const char* kReduce[] = {"ReduceSum", "ReduceSum", "ReduceMin", "ReduceMax"};
    static const char* kCombine[] = {"Add", "Add", "Min", "Max"};
    std::string y;
    for (const std::vector<int64_t>& walk : walks_by_depth(tree_depth)) {
        // The state [rows, trees of the walk], every row starting at the roots.
        std::vector<double> start;
        for (int64_t t : walk) start.push_back(double(slot(f.starts[size_t(t)])));
        const int64_t width = int64_t(walk.size());
        const std::string shape =
            r.emit(n, "Concat", {rows, r.ints(n, {width}, out)}, out, "", {int_attr("axis", 0)});
        std::string state =
            r.emit(n, "Expand", {constant(index_type, {1, width}, start), shape}, out);
        for (int64_t level = 0; level < tree_depth[size_t(walk.back())]; ++level)
            state = r.emit(n, "GatherElements", {next, state}, out, "", {int_attr("axis", 1)});
        const std::string values = r.emit(n, "Gather", {weight_table, state}, out);
        const std::string part = r.reduce(n, kReduce[f.aggregate], values, {1}, false, out);
        y = y.empty() ? part : r.emit(n, kCombine[f.aggregate], {y, part}, out);
    }
    if (f.aggregate == 0)
        y = r.emit(n, "Div", {y, constant(f.weight_type, {}, {double(trees)})}, out);
    if (!f.base.empty())
        y = r.emit(n, "Add", {y, constant(f.weight_type, {f.targets}, f.base)}, out);
    return y;
}

void emit_ml_post(NodeRewriter& r, const onnx::NodeProto& n, const std::string& scores,
                  int64_t post, const std::string& y, std::vector<onnx::NodeProto>& out) {
    if (post == 0)
        r.emit(n, "Identity", {scores}, out, y);
    else
        r.emit(n, post == 1 ? "Softmax" : "Sigmoid", {scores}, out, y,
               post == 1 ? std::vector<onnx::AttributeProto>{int_attr("axis", 1)}
                         : std::vector<onnx::AttributeProto>{});
}

}  // namespace tessera::frontend::onnx_import
