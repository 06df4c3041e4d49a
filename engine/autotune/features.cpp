// Loop-IR feature extraction for the cost model (see features.h).
#include "engine/autotune/features.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/lower_blocks.h"

namespace tessera::autotune {

namespace {

struct Loop {
    const tir::Variable* var;
    int64_t extent;
    tir::ForKind kind;
};

using Env = std::map<const tir::Variable*, int64_t>;

// Integer value of an index expression with loop variables bound (unbound = 0).
int64_t eval(const tir::Expr& e, const Env& env) {
    using tir::NodeType;
    if (auto* c = e.as<tir::IntImm>()) return c->value;
    if (auto* v = e.as<tir::Variable>()) {
        auto it = env.find(v);
        return it == env.end() ? 0 : it->second;
    }
    if (auto* c = e.as<tir::Cast>()) return eval(c->value, env);
#define TS_BIN(T, EXPR)                          \
    if (auto* op = e.as<tir::T>()) {             \
        int64_t a = eval(op->a, env), b = eval(op->b, env); \
        return EXPR;                             \
    }
    TS_BIN(Add, a + b)
    TS_BIN(Sub, a - b)
    TS_BIN(Mul, a * b)
    TS_BIN(Div, b ? a / b : 0)
    TS_BIN(Mod, b ? a % b : 0)
    TS_BIN(FloorDiv, b ? (a / b - ((a % b != 0) && ((a < 0) != (b < 0)))) : 0)
    TS_BIN(FloorMod, b ? ((a % b + b) % b) : 0)
    TS_BIN(Min, std::min(a, b))
    TS_BIN(Max, std::max(a, b))
#undef TS_BIN
    if (auto* s = e.as<tir::Select>()) return eval(s->true_value, env);
    return 0;
}

struct Access {
    tir::Buffer buffer;
    std::vector<tir::Expr> indices;
};

// Row-major flattened offset of an access.
int64_t offset(const Access& a, const Env& env) {
    std::vector<int64_t> shape;
    for (const auto& d : a.buffer->shape) {
        const int64_t* c = tir::as_const_int(d);
        shape.push_back(c ? *c : 1);
    }
    int64_t off = 0;
    for (size_t i = 0; i < a.indices.size(); ++i) {
        int64_t dim = i < shape.size() ? shape[i] : 1;
        off = off * dim + eval(a.indices[i], env);
    }
    return off;
}

struct OpCounter : tir::IRVisitor {
    double fadd = 0, fmul = 0, fother = 0, iops = 0, calls = 0;
    std::vector<Access> loads;
    using tir::IRVisitor::visit;
    void count(const tir::ExprNode* op, double& fl) {
        (op->dtype.is_float() ? fl : iops) += op->dtype.lanes;
    }
    void visit(const tir::Add* op) override { count(op, fadd), IRVisitor::visit(op); }
    void visit(const tir::Sub* op) override { count(op, fadd), IRVisitor::visit(op); }
    void visit(const tir::Mul* op) override { count(op, fmul), IRVisitor::visit(op); }
    void visit(const tir::Div* op) override { count(op, fother), IRVisitor::visit(op); }
    void visit(const tir::Min* op) override { count(op, fother), IRVisitor::visit(op); }
    void visit(const tir::Max* op) override { count(op, fother), IRVisitor::visit(op); }
    void visit(const tir::FloorDiv* op) override { iops += 1, IRVisitor::visit(op); }
    void visit(const tir::FloorMod* op) override { iops += 1, IRVisitor::visit(op); }
    void visit(const tir::Call* op) override { calls += op->dtype.lanes, IRVisitor::visit(op); }
    void visit(const tir::BufferLoad* op) override {
        loads.push_back({op->buffer, op->indices});
        IRVisitor::visit(op);
    }
};

struct Walker : tir::IRVisitor {
    std::vector<Loop> stack;
    KernelStats st;
    double best_cost = -1;
    using tir::IRVisitor::visit;

    void visit(const tir::For* op) override {
        const int64_t* c = tir::as_const_int(op->extent);
        stack.push_back({op->loop_var.get(), c ? *c : 1, op->kind});
        IRVisitor::visit(op);
        stack.pop_back();
    }
    void visit(const tir::Allocate* op) override {
        st.alloc_bytes += double(op->buffer.num_elements()) * op->buffer->dtype.bits / 8;
        st.allocs++;
        IRVisitor::visit(op);
    }
    void visit(const tir::BufferStore* op) override {
        st.stores++;
        double iters = 1;
        for (const Loop& l : stack) iters *= double(std::max<int64_t>(l.extent, 1));
        OpCounter oc;
        oc.visit_expr(op->value);
        for (const auto& i : op->indices) oc.visit_expr(i);
        st.float_add += oc.fadd * iters;
        st.float_mul += oc.fmul * iters;
        st.float_ops += (oc.fadd + oc.fmul + oc.fother) * iters;
        st.int_ops += oc.iops * iters;
        st.math_calls += oc.calls * iters;
        const double cost = iters * (1 + oc.fadd + oc.fmul + oc.fother + oc.calls);
        if (cost <= best_cost) return;
        best_cost = cost;
        main_store(op, oc, iters);
    }

    void main_store(const tir::BufferStore* op, const OpCounter& oc, double iters) {
        st.iterations = iters;
        st.depth = int(stack.size());
        st.innermost_extent = stack.empty() ? 1 : stack.back().extent;
        st.vector_lanes = 1;
        st.unrolled = 1;
        st.parallel = 1;
        for (const Loop& l : stack) {
            if (l.kind == tir::ForKind::Vectorized) st.vector_lanes = l.extent;
            if (l.kind == tir::ForKind::Unrolled) st.unrolled *= l.extent;
            // Thread-bound loops (blockIdx / vthread / threadIdx) run in parallel too.
            if (l.kind == tir::ForKind::Parallel || l.kind == tir::ForKind::ThreadBinding)
                st.parallel *= l.extent;
        }
        std::vector<Access> acc = oc.loads;
        acc.push_back({op->buffer, op->indices});
        st.accesses = int(acc.size());
        st.stride0 = st.stride1 = st.strided = 0;
        // Coefficient of each access along each loop (0 = the loop reuses the data).
        std::vector<std::vector<int64_t>> coef(acc.size(), std::vector<int64_t>(stack.size(), 0));
        for (size_t a = 0; a < acc.size(); ++a) {
            Env zero;
            int64_t base = offset(acc[a], zero);
            for (size_t l = 0; l < stack.size(); ++l) {
                Env one{{stack[l].var, 1}};
                coef[a][l] = std::llabs(offset(acc[a], one) - base);
            }
            int64_t inner = stack.empty() ? 0 : coef[a].back();
            (inner == 0 ? st.stride0 : inner == 1 ? st.stride1 : st.strided)++;
        }
        // Footprint of the loops from depth d inward; the deepest d that fits a cache level.
        st.bytes_l1_iters = st.bytes_l2_iters = 1;
        st.footprint_bytes = 0;
        double inner_iters = 1;
        for (int d = int(stack.size()) - 1; d >= -1; --d) {
            double bytes = 0;
            for (size_t a = 0; a < acc.size(); ++a) {
                double elems = 1;
                for (size_t l = size_t(d + 1); l < stack.size(); ++l)
                    if (coef[a][l] != 0) elems *= double(std::max<int64_t>(stack[l].extent, 1));
                bytes += elems * acc[a].buffer->dtype.bits / 8;
            }
            if (bytes <= 32 * 1024) st.bytes_l1_iters = inner_iters;
            if (bytes <= 1024 * 1024) st.bytes_l2_iters = inner_iters;
            st.footprint_bytes = bytes;
            if (d >= 0) inner_iters *= double(std::max<int64_t>(stack[size_t(d)].extent, 1));
        }
    }
};

double lg(double x) { return std::log2(1.0 + std::max(0.0, x)); }

}  // namespace

KernelStats kernel_stats(const tir::PrimFunc& scheduled) {
    tir::PrimFunc f = tir::lower_blocks(scheduled);
    Walker w;
    w.visit_stmt(f->body);
    return w.st;
}

const std::vector<std::string>& feature_names() {
    static const std::vector<std::string> names = {
        "float_ops", "float_mul", "float_add", "int_ops", "math_calls", "iterations", "depth",
        "innermost_extent", "vector_lanes", "unrolled", "parallel", "accesses", "stride0",
        "stride1", "strided", "l1_reuse_iters", "l2_reuse_iters", "footprint_bytes",
        "alloc_bytes", "allocs", "stores", "int_per_float", "vector_fraction",
        "outer_extent_0", "outer_extent_1", "outer_extent_2", "inner_extent_1", "inner_extent_2",
        "kind_parallel", "kind_vectorized", "kind_unrolled",
        // the six innermost loops of the main nest, innermost first: extent and kind
        "inner0", "inner1", "inner2", "inner3", "inner4", "inner5",
        "inner0_kind", "inner1_kind", "inner2_kind", "inner3_kind", "inner4_kind", "inner5_kind"};
    return names;
}

std::vector<float> extract_features(const tir::PrimFunc& scheduled) {
    tir::PrimFunc f = tir::lower_blocks(scheduled);
    Walker w;
    w.visit_stmt(f->body);
    const KernelStats& s = w.st;
    // Loop extents of the main store's nest, outermost and innermost.
    std::vector<int64_t> ext;
    int kp = 0, kv = 0, ku = 0;
    tir::post_order_visit(f->body, [&](const tir::Object* o) {
        if (o->node_type != tir::NodeType::For) return;
        auto* l = static_cast<const tir::For*>(o);
        kp += l->kind == tir::ForKind::Parallel;
        kv += l->kind == tir::ForKind::Vectorized;
        ku += l->kind == tir::ForKind::Unrolled;
    });
    std::vector<float> x = {
        float(lg(s.float_ops)), float(lg(s.float_mul)), float(lg(s.float_add)),
        float(lg(s.int_ops)), float(lg(s.math_calls)), float(lg(s.iterations)), float(s.depth),
        float(lg(double(s.innermost_extent))), float(lg(double(s.vector_lanes))),
        float(lg(double(s.unrolled))), float(lg(double(s.parallel))), float(s.accesses),
        float(s.stride0), float(s.stride1), float(s.strided), float(lg(s.bytes_l1_iters)),
        float(lg(s.bytes_l2_iters)), float(lg(s.footprint_bytes)), float(lg(s.alloc_bytes)),
        float(s.allocs), float(s.stores),
        float(s.float_ops > 0 ? s.int_ops / s.float_ops : 0),
        float(s.vector_lanes > 1 ? 1.0 : 0.0), 0, 0, 0, 0, 0, float(kp), float(kv), float(ku)};
    // Extents along the main nest: rerun the walker's stack capture cheaply.
    struct Nest : tir::IRVisitor {
        std::vector<int64_t> cur, best;
        std::vector<int> cur_kind, best_kind;
        double best_iters = -1;
        using tir::IRVisitor::visit;
        void visit(const tir::For* op) override {
            const int64_t* c = tir::as_const_int(op->extent);
            cur.push_back(c ? *c : 1);
            cur_kind.push_back(op->kind == tir::ForKind::Vectorized ? 1
                               : op->kind == tir::ForKind::Unrolled ? 2
                               : op->kind == tir::ForKind::Parallel ? 3
                               : op->kind == tir::ForKind::ThreadBinding ? 4 : 0);
            IRVisitor::visit(op);
            cur.pop_back();
            cur_kind.pop_back();
        }
        void visit(const tir::BufferStore* op) override {
            double it = 1;
            for (int64_t e : cur) it *= double(e);
            if (it > best_iters) best_iters = it, best = cur, best_kind = cur_kind;
            IRVisitor::visit(op);
        }
    } nest;
    nest.visit_stmt(f->body);
    const auto& b = nest.best;
    for (size_t i = 0; i < 3 && i < b.size(); ++i) x[23 + i] = float(lg(double(b[i])));
    if (b.size() >= 2) x[26] = float(lg(double(b[b.size() - 2])));
    if (b.size() >= 3) x[27] = float(lg(double(b[b.size() - 3])));
    x.resize(feature_names().size(), 0.f);
    for (size_t i = 0; i < 6 && i < b.size(); ++i) {
        x[31 + i] = float(lg(double(b[b.size() - 1 - i])));
        x[37 + i] = float(nest.best_kind[b.size() - 1 - i]);
    }
    return x;
}

}  // namespace tessera::autotune
