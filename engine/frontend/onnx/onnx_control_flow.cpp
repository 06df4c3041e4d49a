// ONNX If, Loop, Scan and SequenceMap, imported the static-shape way: If with
// a constant condition imports the taken branch (otherwise both, joined by
// `where`); Loop with a constant trip count and Scan are unrolled; SequenceMap
// imports its body once per element.
#include <algorithm>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

const onnx::GraphProto& graph_attr(const NodeCtx& ctx, const std::string& key) {
    for (const auto& a : ctx.graphs.attribute())
        if (a.name() == key && a.has_g()) return a.g();
    TS_USER_FAIL() << ctx.where() << ": missing graph attribute '" << key << "'";
}

std::string name_of(NodeCtx& ctx, int v) { return ctx.imp.g.values[size_t(v)].name; }

// A constant with a generated name; returns the name.
std::string define_internal_constant(NodeCtx& ctx, ConstTensor c) {
    return ctx.imp.define_helper_constant(ctx.name, std::move(c));
}

ConstTensor scalar_bool(bool b) {
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes = {uint8_t(b ? 1 : 0)};
    return {graph::TensorType{graph::DType::Bool, {}}, data};
}

// The value of a constant boolean scalar named `nm`; UserError naming `what` otherwise.
bool constant_bool(NodeCtx& ctx, const std::string& nm, const std::string& what) {
    auto it = ctx.imp.constants.find(nm);
    TS_USER_CHECK(it != ctx.imp.constants.end())
        << ctx.where() << ": " << what << " ('" << nm
        << "') must be a constant: Tessera compiles static graphs (freeze it, or give it as an "
           "initializer)";
    const ConstTensor& c = it->second;
    TS_USER_CHECK(c.type.num_elements() == 1) << ctx.where() << ": " << what << " must be a scalar";
    switch (c.type.dtype) {
        case graph::DType::Bool:
        case graph::DType::UInt8:
        case graph::DType::Int8: return c.data->bytes[0] != 0;
        case graph::DType::Int32: return *c.data->as<int32_t>() != 0;
        case graph::DType::Int64: return *c.data->as<int64_t>() != 0;
        case graph::DType::Float32: return *c.data->as<float>() != 0;
        case graph::DType::Float64: return *c.data->as<double>() != 0;
    }
    return false;
}

// Stacks tensors along a new axis `axis` (inserted), in order.
int stack(NodeCtx& ctx, const std::vector<std::string>& elems, int64_t axis, int onnx_output) {
    std::vector<int> inputs;
    for (const auto& e : elems) {
        int v = ctx.imp.value(e, ctx.where());
        std::vector<int64_t> sh = ctx.type_of(v).shape;
        int64_t a = axis < 0 ? axis + int64_t(sh.size()) + 1 : axis;
        TS_USER_CHECK(a >= 0 && a <= int64_t(sh.size()))
            << ctx.where() << ": axis " << axis << " is out of range";
        sh.insert(sh.begin() + a, 1);
        inputs.push_back(ctx.emit_internal("reshape", {v}, {{"newshape", sh}}));
    }
    int64_t rank = int64_t(ctx.type_of(inputs[0]).shape.size());
    int64_t a = axis < 0 ? axis + rank : axis;
    if (onnx_output < 0) return ctx.emit_internal("concatenate", inputs, {{"axis", a}});
    return ctx.emit_outputs({onnx_output}, "concatenate", inputs, {{"axis", a}})[0];
}

// Slice t of tensor `nm` along `axis`, with the axis removed.
std::string take_slice(NodeCtx& ctx, const std::string& nm, int64_t axis, int64_t t) {
    int v = ctx.imp.value(nm, ctx.where());
    const std::vector<int64_t> shape = ctx.type_of(v).shape;
    std::vector<int64_t> b(shape.size(), 0), e = shape, st(shape.size(), 1);
    b[size_t(axis)] = t;
    e[size_t(axis)] = t + 1;
    int s = ctx.emit_internal("strided_slice", {v}, {{"begin", b}, {"end", e}, {"strides", st}});
    std::vector<int64_t> squeezed = shape;
    squeezed.erase(squeezed.begin() + axis);
    return name_of(ctx, ctx.emit_internal("reshape", {s}, {{"newshape", squeezed}}));
}

// Defines ONNX output i of the node as `from` (skips an omitted output).
void bind_output(NodeCtx& ctx, int i, const std::string& from) {
    if (i >= ctx.node.output_size() || ctx.node.output(i).empty()) return;
    alias_name(ctx.imp, ctx.node.output(i), from, ctx.where());
}

void convert_if(NodeCtx& ctx) {
    const onnx::GraphProto& then_g = graph_attr(ctx, "then_branch");
    const onnx::GraphProto& else_g = graph_attr(ctx, "else_branch");
    TS_USER_CHECK(ctx.has_input(0)) << ctx.where() << ": missing condition";
    const std::string cond = ctx.node.input(0);
    if (ctx.constant_input(0)) {
        bool c = constant_bool(ctx, cond, "the condition");
        std::vector<std::string> outs = import_subgraph(ctx.imp, c ? then_g : else_g, {}, ctx.where());
        TS_USER_CHECK(int(outs.size()) >= ctx.node.output_size())
            << ctx.where() << ": the branch has " << outs.size() << " outputs, the node "
            << ctx.node.output_size();
        for (int i = 0; i < ctx.node.output_size(); ++i) bind_output(ctx, i, outs[size_t(i)]);
        return;
    }
    // A runtime condition: both branches run and `where` picks; this needs
    // tensor outputs of one type.
    std::vector<std::string> a = import_subgraph(ctx.imp, then_g, {}, ctx.where());
    std::vector<std::string> b = import_subgraph(ctx.imp, else_g, {}, ctx.where());
    int c = ctx.input(0);
    TS_USER_CHECK(ctx.type_of(c).dtype == graph::DType::Bool && ctx.type_of(c).num_elements() == 1)
        << ctx.where() << ": the condition must be a boolean scalar";
    TS_USER_CHECK(int(a.size()) >= ctx.node.output_size() && int(b.size()) >= ctx.node.output_size())
        << ctx.where() << ": the branches have " << a.size() << " and " << b.size()
        << " outputs, the node " << ctx.node.output_size();
    for (int i = 0; i < ctx.node.output_size(); ++i) {
        if (ctx.node.output(i).empty()) continue;
        const std::string& x = a.at(size_t(i));
        const std::string& y = b.at(size_t(i));
        bool tensors = (ctx.imp.values.count(x) || ctx.imp.constants.count(x)) &&
                       (ctx.imp.values.count(y) || ctx.imp.constants.count(y));
        TS_USER_CHECK(tensors) << ctx.where() << ": output " << i
                               << " is not a tensor, so the condition must be a constant";
        int vx = ctx.imp.value(x, ctx.where()), vy = ctx.imp.value(y, ctx.where());
        TS_USER_CHECK(ctx.type_of(vx) == ctx.type_of(vy))
            << ctx.where() << ": the branches give output " << i << " as "
            << ctx.type_of(vx).str() << " and " << ctx.type_of(vy).str()
            << "; with a runtime condition they must agree (or make the condition a constant)";
        int cr = ctx.emit_internal("reshape", {c}, {{"newshape", std::vector<int64_t>{}}});
        ctx.emit_outputs({i}, "where", {cr, vx, vy});
    }
}

void convert_loop(NodeCtx& ctx) {
    const onnx::GraphProto& body = graph_attr(ctx, "body");
    int64_t trips = kMaxUnroll + 1;
    bool bounded = false;
    if (ctx.has_input(0)) {
        TS_USER_CHECK(ctx.constant_input(0))
            << ctx.where() << ": the trip count ('" << ctx.node.input(0)
            << "') must be a constant: Tessera unrolls loops at import (freeze it, or give it "
               "as an initializer)";
        const std::vector<int64_t> given = ctx.constant_ints(0);
        TS_USER_CHECK(given.size() == 1) << ctx.where() << ": the trip count ('" << ctx.node.input(0)
                                         << "') must hold one value, it holds " << given.size();
        trips = given[0];
        bounded = true;
    }
    bool cond = true;
    if (ctx.has_input(1)) cond = constant_bool(ctx, ctx.node.input(1), "the loop condition");
    TS_USER_CHECK(trips <= kMaxUnroll || !bounded)
        << ctx.where() << ": trip count " << trips << " is above the unroll limit of " << kMaxUnroll;
    const int n_carried = ctx.node.input_size() - 2;
    TS_USER_CHECK(n_carried >= 0 && body.input_size() == n_carried + 2)
        << ctx.where() << ": the body takes " << body.input_size() << " inputs for "
        << n_carried << " loop-carried values";
    const int n_scan = body.output_size() - 1 - n_carried;
    TS_USER_CHECK(n_scan >= 0) << ctx.where() << ": the body has too few outputs";
    std::vector<std::string> state;
    for (int i = 2; i < ctx.node.input_size(); ++i) {
        TS_USER_CHECK(ctx.has_input(i) && is_defined(ctx.imp, ctx.node.input(i)))
            << ctx.where() << ": loop-carried input " << i << " is missing";
        state.push_back(ctx.node.input(i));
    }
    std::vector<std::vector<std::string>> scans(static_cast<size_t>(n_scan));
    int64_t it = 0;
    for (; it < trips && cond; ++it) {
        TS_USER_CHECK(it < kMaxUnroll)
            << ctx.where() << ": the loop does not stop within " << kMaxUnroll
            << " iterations at import (its condition must become a constant false)";
        std::vector<std::string> ins = {define_internal_constant(ctx, make_int64_tensor({}, {it})),
                                        define_internal_constant(ctx, scalar_bool(cond))};
        ins.insert(ins.end(), state.begin(), state.end());
        std::vector<std::string> outs = import_subgraph(ctx.imp, body, ins, ctx.where());
        cond = constant_bool(ctx, outs[0], "the body's condition output");
        for (int i = 0; i < n_carried; ++i) state[size_t(i)] = outs[size_t(1 + i)];
        for (int k = 0; k < n_scan; ++k) scans[size_t(k)].push_back(outs[size_t(1 + n_carried + k)]);
    }
    for (int i = 0; i < n_carried; ++i) bind_output(ctx, i, state[size_t(i)]);
    for (int k = 0; k < n_scan; ++k) {
        int o = n_carried + k;
        if (o >= ctx.node.output_size() || ctx.node.output(o).empty()) continue;
        TS_USER_CHECK(it > 0) << ctx.where() << ": scan output " << k
                              << " of a loop that runs no iteration has no static shape";
        stack(ctx, scans[size_t(k)], 0, o);
    }
}

// Scan (opset 9+) over `scan_in` (names), from `state`; fills the final state
// and per-output lists of iteration values (in output order).
void run_scan(NodeCtx& ctx, const onnx::GraphProto& body, std::vector<std::string>& state,
              const std::vector<std::string>& scan_in, const std::vector<int64_t>& axes,
              const std::vector<int64_t>& dirs, std::vector<std::vector<std::string>>& scan_out) {
    TS_USER_CHECK(!scan_in.empty()) << ctx.where() << ": needs at least one scan input";
    int64_t length = -1;
    std::vector<int64_t> in_axes;
    for (size_t j = 0; j < scan_in.size(); ++j) {
        const auto& shape = ctx.type_of(ctx.imp.value(scan_in[j], ctx.where())).shape;
        int64_t axis = normalize_axis(ctx, j < axes.size() ? axes[j] : 0, int64_t(shape.size()));
        in_axes.push_back(axis);
        TS_USER_CHECK(length < 0 || shape[size_t(axis)] == length)
            << ctx.where() << ": scan inputs differ in sequence length";
        length = shape[size_t(axis)];
    }
    TS_USER_CHECK(length <= kMaxUnroll)
        << ctx.where() << ": sequence length " << length << " is above the unroll limit of "
        << kMaxUnroll;
    TS_USER_CHECK(length > 0) << ctx.where()
                              << ": a zero-length scan input gives scan outputs without a static shape";
    const int n_state = int(state.size());
    const int n_out = body.output_size() - n_state;
    TS_USER_CHECK(n_out >= 0 && body.input_size() == n_state + int(scan_in.size()))
        << ctx.where() << ": the body's inputs and outputs do not match the node's";
    scan_out.assign(size_t(n_out), {});
    for (int64_t t = 0; t < length; ++t) {
        std::vector<std::string> ins = state;
        for (size_t j = 0; j < scan_in.size(); ++j) {
            bool reverse = j < dirs.size() && dirs[j] != 0;
            ins.push_back(take_slice(ctx, scan_in[j], in_axes[j], reverse ? length - 1 - t : t));
        }
        std::vector<std::string> outs = import_subgraph(ctx.imp, body, ins, ctx.where());
        for (int i = 0; i < n_state; ++i) state[size_t(i)] = outs[size_t(i)];
        for (int k = 0; k < n_out; ++k) scan_out[size_t(k)].push_back(outs[size_t(n_state + k)]);
    }
}

void convert_scan(NodeCtx& ctx) {
    const onnx::GraphProto& body = graph_attr(ctx, "body");
    const int64_t m = ctx.attr_int("num_scan_inputs", -1);
    TS_USER_CHECK(m > 0) << ctx.where() << ": missing attribute num_scan_inputs";
    const bool v8 = ctx.opset() < 9;  // Scan-8: input 0 is sequence_lens, axis 0 is the batch
    const int first = v8 ? 1 : 0;
    TS_USER_CHECK(!(v8 && ctx.has_input(0)))
        << ctx.where() << ": Scan-8 sequence_lens is not supported";
    const int n_in = ctx.node.input_size() - first;
    const int n_state = n_in - int(m);
    TS_USER_CHECK(n_state >= 0) << ctx.where() << ": fewer inputs than num_scan_inputs";
    std::vector<std::string> state, scan_in;
    for (int i = first; i < ctx.node.input_size(); ++i) {
        TS_USER_CHECK(ctx.has_input(i)) << ctx.where() << ": missing input " << i;
        (i - first < n_state ? state : scan_in).push_back(ctx.node.input(i));
    }
    const std::vector<int64_t> dirs =
        ctx.attr_ints(v8 ? "directions" : "scan_input_directions");
    if (!v8) {
        const std::vector<int64_t> out_axes = ctx.attr_ints("scan_output_axes");
        const std::vector<int64_t> out_dirs = ctx.attr_ints("scan_output_directions");
        std::vector<std::vector<std::string>> outs;
        run_scan(ctx, body, state, scan_in, ctx.attr_ints("scan_input_axes"), dirs, outs);
        for (int i = 0; i < n_state; ++i) bind_output(ctx, i, state[size_t(i)]);
        for (size_t k = 0; k < outs.size(); ++k) {
            int o = n_state + int(k);
            if (o >= ctx.node.output_size() || ctx.node.output(o).empty()) continue;
            TS_USER_CHECK(!outs[k].empty()) << ctx.where() << ": empty scan";
            if (k < out_dirs.size() && out_dirs[k] != 0) std::reverse(outs[k].begin(), outs[k].end());
            stack(ctx, outs[k], k < out_axes.size() ? out_axes[k] : 0, o);
        }
        return;
    }
    // Scan-8: one scan per batch entry, results stacked along the batch axis.
    const auto& batch_shape = ctx.type_of(ctx.imp.value(scan_in.at(0), ctx.where())).shape;
    TS_USER_CHECK(!batch_shape.empty() && batch_shape[0] > 0)
        << ctx.where() << ": Scan-8 needs a batch axis of at least one entry on its scan inputs";
    const int64_t batch = batch_shape[0];
    std::vector<std::vector<std::string>> final_state(static_cast<size_t>(n_state)), stacked;
    for (int64_t b = 0; b < batch; ++b) {
        std::vector<std::string> st, si;
        for (const auto& s : state) st.push_back(take_slice(ctx, s, 0, b));
        for (const auto& s : scan_in) si.push_back(take_slice(ctx, s, 0, b));
        std::vector<std::vector<std::string>> outs;
        run_scan(ctx, body, st, si, {}, dirs, outs);
        for (int i = 0; i < n_state; ++i) final_state[size_t(i)].push_back(st[size_t(i)]);
        if (stacked.empty()) stacked.assign(outs.size(), {});
        for (size_t k = 0; k < outs.size(); ++k)
            stacked[k].push_back(name_of(ctx, stack(ctx, outs[k], 0, -1)));
    }
    for (int i = 0; i < n_state; ++i)
        if (i < ctx.node.output_size() && !ctx.node.output(i).empty())
            stack(ctx, final_state[size_t(i)], 0, i);
    for (size_t k = 0; k < stacked.size(); ++k) {
        int o = n_state + int(k);
        if (o < ctx.node.output_size() && !ctx.node.output(o).empty()) stack(ctx, stacked[k], 0, o);
    }
}

void convert_sequence_map(NodeCtx& ctx) {
    const onnx::GraphProto& body = graph_attr(ctx, "body");
    auto& seqs = ctx.imp.sequences;
    TS_USER_CHECK(ctx.has_input(0) && seqs.count(ctx.node.input(0)))
        << ctx.where() << ": input 0 is not a sequence of static length";
    const size_t n = seqs[ctx.node.input(0)].size();
    for (int i = 1; i < ctx.node.input_size(); ++i) {
        auto it = seqs.find(ctx.node.input(i));
        TS_USER_CHECK(it == seqs.end() || it->second.size() == n)
            << ctx.where() << ": input " << i << " has " << it->second.size()
            << " elements, input 0 has " << n;
    }
    std::vector<std::vector<std::string>> results(size_t(body.output_size()));
    for (size_t e = 0; e < n; ++e) {
        std::vector<std::string> ins;
        for (int i = 0; i < ctx.node.input_size(); ++i) {
            auto it = seqs.find(ctx.node.input(i));
            ins.push_back(it != seqs.end() ? it->second[e] : ctx.node.input(i));
        }
        std::vector<std::string> outs = import_subgraph(ctx.imp, body, ins, ctx.where());
        for (size_t k = 0; k < outs.size(); ++k) results[k].push_back(outs[k]);
    }
    for (int k = 0; k < ctx.node.output_size() && k < body.output_size(); ++k) {
        const std::string& out = ctx.node.output(k);
        if (out.empty()) continue;
        TS_USER_CHECK(!is_defined(ctx.imp, out))
            << ctx.where() << ": output '" << out << "' is defined twice";
        seqs[out] = results[size_t(k)];
    }
}

}  // namespace

void add_control_flow_converters(ConverterTable& t) {
    t["If"] = convert_if;
    t["Loop"] = convert_loop;
    t["Scan"] = convert_scan;
    t["SequenceMap"] = convert_sequence_map;
}

}  // namespace tessera::frontend::onnx_import
