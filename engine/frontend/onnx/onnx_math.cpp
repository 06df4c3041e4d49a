// ONNX Add/Sub/Mul/Div/Relu/MatMul/Gemm (and ONNX Runtime's FusedMatMul) ->
// elementwise and nn.* graph ops.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_math_signal.h"

namespace tessera::frontend::onnx_import {

namespace {

// Before opset 7, broadcast=1 with `axis` aligns B's dims with A's starting at
// axis. Appending trailing 1s to B turns that into numpy broadcasting.
int legacy_broadcast_operand(NodeCtx& ctx, int a, int b) {
    const std::vector<int64_t> a_shape = ctx.imp.g.values[size_t(a)].type.shape;
    const graph::Value bv = ctx.imp.g.values[size_t(b)];
    int64_t rank_a = int64_t(a_shape.size()), rank_b = int64_t(bv.type.shape.size());
    int64_t axis = ctx.attr_int("axis", rank_a - rank_b);
    if (axis < 0) axis += rank_a;
    int64_t trailing = rank_a - axis - rank_b;
    TS_USER_CHECK(axis >= 0 && trailing >= 0)
        << ctx.where() << ": legacy broadcast axis " << ctx.attr_int("axis", 0)
        << " does not fit B " << bv.type.str() << " into A of rank " << rank_a;
    if (trailing == 0) return b;
    std::vector<int64_t> shape = bv.type.shape;
    shape.insert(shape.end(), size_t(trailing), 1);
    if (bv.is_constant()) {
        graph::Value v = bv;
        v.name = bv.name + "_" + ctx.name + "_bcast";
        v.type.shape = shape;
        return ctx.imp.g.add_value(std::move(v));
    }
    graph::Value v;
    v.name = bv.name + "_" + ctx.name + "_bcast";
    v.type = {bv.type.dtype, shape};
    int out = ctx.imp.g.add_value(std::move(v));
    graph::Node n;
    n.op = "reshape";
    n.name = ctx.name + "_bcast";
    n.attrs["newshape"] = shape;
    n.inputs = {b};
    n.outputs = {out};
    ctx.imp.g.add_node(std::move(n));
    return out;
}

Converter binary(const std::string& op) {
    return [op](NodeCtx& ctx) {
        int a = ctx.input(0);
        int b = ctx.input(1);
        if (ctx.opset() < 7 && ctx.attr_int("broadcast", 0) != 0 && ctx.has_attr("axis"))
            b = legacy_broadcast_operand(ctx, a, b);
        ctx.emit(op, {a, b});
    };
}

void convert_relu(NodeCtx& ctx) { ctx.emit("nn.relu", {ctx.input(0)}); }

void convert_matmul(NodeCtx& ctx) { ctx.emit("nn.matmul", {ctx.input(0), ctx.input(1)}); }

// com.microsoft.FusedMatMul, which ONNX Runtime's optimizer writes for a
// MatMul with a transposed operand or a scaled product (attention scores):
// alpha * op(A) @ op(B), where transBatch moves an operand's first dim to
// just before its last (A stored [M, batch..., K]) and then trans swaps the
// last two dims, as ORT's kernel reads them.
void convert_fused_matmul(NodeCtx& ctx) {
    const int in_a = ctx.input(0), in_b = ctx.input(1);
    const bool vector = ctx.type_of(in_a).shape.size() < 2 || ctx.type_of(in_b).shape.size() < 2;
    auto operand = [&](int v, const std::string& side) {
        const bool batch = ctx.attr_int("transBatch" + side, 0) != 0;
        const bool trans = ctx.attr_int("trans" + side, 0) != 0;
        if (!batch && !trans) return v;
        // ORT's kernel reads a transposition next to a 1-D operand its own way.
        TS_USER_CHECK(!vector) << ctx.where() << ": trans" << (batch ? "Batch" : "") << side
                               << " with a 1-D operand is not supported";
        const int64_t rank = int64_t(ctx.type_of(v).shape.size());
        std::vector<int64_t> perm(static_cast<size_t>(rank), 0);
        std::iota(perm.begin(), perm.end(), 0);
        if (batch) std::rotate(perm.begin(), perm.begin() + 1, perm.end() - 1);
        if (trans) std::swap(perm[size_t(rank - 2)], perm[size_t(rank - 1)]);
        return ctx.emit_internal("transpose", {v}, {{"axes", perm}});
    };
    const int a = operand(in_a, "A"), b = operand(in_b, "B");
    const double alpha = ctx.attr_float("alpha", 1.0);
    if (alpha == 1.0) {
        ctx.emit("nn.matmul", {a, b});
        return;
    }
    const int product = ctx.emit_internal("nn.matmul", {a, b});
    const int scale = internal_constant(ctx, typed_tensor(ctx.type_of(product).dtype, {}, {alpha}));
    ctx.emit("multiply", {product, scale});
}

void convert_gemm(NodeCtx& ctx) {
    std::vector<int> inputs = {ctx.input(0), ctx.input(1)};
    if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
    ctx.emit("nn.gemm", inputs,
             {{"alpha", ctx.attr_float("alpha", 1.0)},
              {"beta", ctx.attr_float("beta", 1.0)},
              {"transA", ctx.attr_int("transA", 0)},
              {"transB", ctx.attr_int("transB", 0)}});
}

/// A two-operand Einsum that is a (batched) matrix product, emitted as one:
/// A's dims put in (batch, rows, reduced) order and B's in (batch, reduced,
/// columns) order by transposes where needed, reshaped to 3-D, nn.matmul, and
/// the result reshaped and transposed to the output's order (the operands
/// swapped when that copies fewer elements in transposes). Diffusers'
/// attention blocks write their products so ("bct,bcs->bts" and
/// "bts,bcs->bct"): the generic einsum, a reduction per output element,
/// took 10.3 ms for one of them at 1024 x 1024 positions. False (nothing
/// emitted) for any other form: repeated labels in a term, labels summed in
/// one operand only, no reduced label, broadcast sizes, non-float32 data.
bool einsum_as_matmul(NodeCtx& ctx, const std::vector<std::string>& terms, const std::string& rhs,
                      const std::vector<int>& inputs) {
    if (terms.size() != 2) return false;
    const graph::TensorType ta = ctx.type_of(inputs[0]), tb = ctx.type_of(inputs[1]);
    if (ta.dtype != graph::DType::Float32 || tb.dtype != graph::DType::Float32 ||
        ta.shape.size() != terms[0].size() || tb.shape.size() != terms[1].size())
        return false;
    auto distinct = [](const std::string& t) {
        return std::set<char>(t.begin(), t.end()).size() == t.size();
    };
    if (!distinct(terms[0]) || !distinct(terms[1]) || !distinct(rhs)) return false;
    std::map<char, int64_t> size;
    for (int o = 0; o < 2; ++o)
        for (size_t d = 0; d < terms[size_t(o)].size(); ++d) {
            const char c = terms[size_t(o)][d];
            const int64_t n = (o == 0 ? ta : tb).shape[d];
            if (size.count(c) && size[c] != n) return false;
            size[c] = n;
        }
    auto in = [](const std::string& t, char c) { return t.find(c) != std::string::npos; };
    std::string batch, reduced, rows, cols;
    for (char c : rhs) {
        if (!size.count(c)) return false;
        if (in(terms[0], c) && in(terms[1], c)) batch.push_back(c);
    }
    for (char c : terms[0])
        if (!in(rhs, c)) {
            if (!in(terms[1], c)) return false;  // summed in one operand only
            reduced.push_back(c);
        }
    if (reduced.empty()) return false;
    for (char c : rhs) {
        if (in(terms[0], c) && !in(terms[1], c)) rows.push_back(c);
        if (in(terms[1], c) && !in(terms[0], c)) cols.push_back(c);
    }
    for (char c : terms[1])
        if (!in(rhs, c) && !in(terms[0], c)) return false;
    auto product = [&](const std::string& labels) {
        int64_t n = 1;
        for (char c : labels) n *= size[c];
        return n;
    };
    // Elements a transpose copies: of A, B and the product, for the operands
    // in this order or swapped (B's labels as the rows); the cheaper order.
    auto moved = [&](const std::string& t1, const std::string& t2, const std::string& r,
                     const std::string& cl) {
        int64_t n = 0;
        if (batch + r + reduced != t1) n += product(t1);
        if (batch + reduced + cl != t2) n += product(t2);
        if (batch + r + cl != rhs) n += product(rhs);
        return n;
    };
    const bool swap = moved(terms[1], terms[0], cols, rows) < moved(terms[0], terms[1], rows, cols);
    const int first = swap ? inputs[1] : inputs[0], second = swap ? inputs[0] : inputs[1];
    const std::string& tf = swap ? terms[1] : terms[0];
    const std::string& ts = swap ? terms[0] : terms[1];
    if (swap) std::swap(rows, cols);
    auto arrange = [&](int v, const std::string& term, const std::string& order,
                       std::vector<int64_t> shape3) {
        std::vector<int64_t> axes;
        for (char c : order) axes.push_back(int64_t(term.find(c)));
        if (order != term) v = ctx.emit_internal("transpose", {v}, {{"axes", axes}});
        return ctx.emit_internal("reshape", {v}, {{"newshape", shape3}});
    };
    const int64_t nb = product(batch), nr = product(rows), nk = product(reduced),
                  nc = product(cols);
    int a = arrange(first, tf, batch + rows + reduced, {nb, nr, nk});
    int b = arrange(second, ts, batch + reduced + cols, {nb, nk, nc});
    int c = ctx.emit_internal("nn.matmul", {a, b});
    const std::string got = batch + rows + cols;
    std::vector<int64_t> got_shape;
    for (char l : got) got_shape.push_back(size[l]);
    std::vector<int64_t> axes;
    for (char l : rhs) axes.push_back(int64_t(got.find(l)));
    bool identity = true;
    for (size_t i = 0; i < axes.size(); ++i) identity &= axes[i] == int64_t(i);
    if (identity) {
        ctx.emit("reshape", {c}, {{"newshape", got_shape}});
    } else {
        c = ctx.emit_internal("reshape", {c}, {{"newshape", got_shape}});
        ctx.emit("transpose", {c}, {{"axes", axes}});
    }
    return true;
}

/// Einsum -> einsum with an explicit output (implicit mode: the labels seen
/// once, in alphabetical order, after the ellipsis dims). An ellipsis becomes
/// fresh labels, right-aligned across operands (size-1 broadcasting is not
/// supported).
void convert_einsum(NodeCtx& ctx) {
    std::string eq;
    for (char c : ctx.attr_str("equation")) {
        if (c != ' ') eq.push_back(c);
    }
    const size_t arrow = eq.find("->");
    const bool implicit = arrow == std::string::npos;
    std::string lhs = implicit ? eq : eq.substr(0, arrow);
    std::string rhs = implicit ? "" : eq.substr(arrow + 2);
    std::vector<std::string> terms(1);
    for (char c : lhs) {
        if (c == ',') terms.emplace_back();
        else terms.back().push_back(c);
    }
    TS_USER_CHECK(int(terms.size()) == ctx.node.input_size())
        << ctx.where() << ": equation '" << eq << "' has " << terms.size() << " operands, the node "
        << ctx.node.input_size();
    std::vector<int> inputs;
    for (int i = 0; i < ctx.node.input_size(); ++i) inputs.push_back(ctx.input(i));
    // Fresh labels for ellipsis dims: letters the equation does not use.
    std::string fresh;
    for (char c = 'A'; c <= 'Z'; ++c)
        if (eq.find(c) == std::string::npos) fresh.push_back(c);
    size_t ell_rank = 0;
    for (size_t t = 0; t < terms.size(); ++t) {
        size_t p = terms[t].find("...");
        if (p == std::string::npos) continue;
        size_t rank = ctx.type_of(inputs[t]).shape.size();
        size_t named = terms[t].size() - 3;
        TS_USER_CHECK(rank >= named && rank - named <= fresh.size())
            << ctx.where() << ": term '" << terms[t] << "' does not fit rank " << rank;
        size_t k = rank - named;
        ell_rank = std::max(ell_rank, k);
        terms[t] = terms[t].substr(0, p) + fresh.substr(fresh.size() - k) + terms[t].substr(p + 3);
    }
    std::string ell = fresh.substr(fresh.size() - ell_rank);
    if (implicit) {
        std::map<char, int> seen;
        for (const auto& t : terms)
            for (char c : t)
                if (ell.find(c) == std::string::npos) ++seen[c];
        rhs = ell;
        for (const auto& [c, k] : seen)
            if (k == 1) rhs.push_back(c);
    } else if (size_t p = rhs.find("..."); p != std::string::npos) {
        rhs = rhs.substr(0, p) + ell + rhs.substr(p + 3);
    }
    if (einsum_as_matmul(ctx, terms, rhs, inputs)) return;
    std::string full;
    for (size_t t = 0; t < terms.size(); ++t) full += (t ? "," : "") + terms[t];
    ctx.emit("einsum", inputs, {{"equation", full + "->" + rhs}});
}

}  // namespace

void add_math_converters(ConverterTable& t) {
    t["Einsum"] = convert_einsum;
    t["Add"] = binary("add");
    t["Sub"] = binary("subtract");
    t["Mul"] = binary("multiply");
    t["Div"] = binary("divide");
    t["Relu"] = convert_relu;
    t["MatMul"] = convert_matmul;
    t["Gemm"] = convert_gemm;
    t["com.microsoft.FusedMatMul"] = convert_fused_matmul;
}

}  // namespace tessera::frontend::onnx_import
