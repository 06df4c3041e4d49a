// Loop-IR feature extraction for the cost model (see features.h).
#include "engine/autotune/features.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/compact_local_buffers.h"
#include "engine/tir/passes/compact_shared.h"
#include "engine/tir/passes/inject_prefetch.h"
#include "engine/tir/passes/lower_blocks.h"
#include "engine/tir/passes/simplify.h"

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
#define TS_BIN(T, EXPR)                                     \
    if (auto* op = e.as<tir::T>()) {                        \
        int64_t a = eval(op->a, env), b = eval(op->b, env); \
        return EXPR;                                        \
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

// Float / integer arithmetic and the loads of one statement. A tir.prefetch
// call is a hint, not a load: neither it nor the address it names count.
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
    void visit(const tir::Call* op) override {
        if (op->op == tir::kPrefetchIntrinsic) return;
        calls += op->dtype.lanes, IRVisitor::visit(op);
    }
    void visit(const tir::BufferLoad* op) override {
        loads.push_back({op->buffer, op->indices});
        IRVisitor::visit(op);
    }
};

// One store with the loops around it.
struct Site {
    const tir::BufferStore* op = nullptr;
    std::vector<Loop> stack;
    OpCounter oc;
    double iters = 0;
    double work = 0;  // float ops and math calls times iterations
    bool reduction = false;

    // Ranks candidates for the main statement (see KernelStats).
    bool better_than(const Site& o) const {
        if (reduction != o.reduction) return reduction;
        if (work != o.work) return work > o.work;
        return iters > o.iters;
    }
};

// Whether the store's value reads the stored element (an accumulation).
bool is_reduction(const tir::BufferStore* op, const OpCounter& oc) {
    for (const Access& a : oc.loads) {
        if (!a.buffer.same_as(op->buffer) || a.indices.size() != op->indices.size()) continue;
        bool same = true;
        for (size_t i = 0; i < a.indices.size() && same; ++i)
            same = tir::structural_equal(a.indices[i], op->indices[i]);
        if (same) return true;
    }
    return false;
}

// Buffers named by a software_prefetch annotation ("B:d,C:e").
int prefetch_requests(const tir::For* op) {
    auto it = op->annotations.find(tir::kPrefetchAnnotation);
    if (it == op->annotations.end() || it->second.empty()) return 0;
    return 1 + int(std::count(it->second.begin(), it->second.end(), ','));
}

struct Walker : tir::IRVisitor {
    std::vector<Loop> stack;
    std::map<std::string, int> bound;  // thread axes bound by enclosing loops
    KernelStats st;
    Site main;
    using tir::IRVisitor::visit;

    void visit(const tir::For* op) override {
        const int64_t* c = tir::as_const_int(op->extent);
        int64_t extent = c ? *c : 1;
        const bool thread = op->kind == tir::ForKind::ThreadBinding && !op->thread_tag.empty();
        // A loop bound to an axis an enclosing loop binds runs on the same threads.
        if (thread && bound[op->thread_tag]++ > 0) extent = 1;
        st.prefetches += prefetch_requests(op);
        stack.push_back({op->loop_var.get(), extent, op->kind});
        IRVisitor::visit(op);
        stack.pop_back();
        if (thread) bound[op->thread_tag]--;
    }
    void visit(const tir::Allocate* op) override {
        const double bytes = double(op->buffer.num_elements()) * op->buffer->dtype.bits / 8;
        st.alloc_bytes += bytes;
        const std::string& scope = op->buffer->scope;
        (scope == "local"    ? st.alloc_local_bytes
         : scope == "shared" ? st.alloc_shared_bytes
                             : st.alloc_global_bytes) += bytes;
        st.allocs++;
        IRVisitor::visit(op);
    }
    void visit(const tir::Evaluate* op) override {
        if (const auto* c = op->value.as<tir::Call>(); c && c->op == tir::kPrefetchIntrinsic) {
            st.prefetches++;
            return;
        }
        IRVisitor::visit(op);
    }
    void visit(const tir::BufferStore* op) override {
        st.stores++;
        Site s;
        s.op = op;
        s.iters = 1;
        for (const Loop& l : stack) s.iters *= double(std::max<int64_t>(l.extent, 1));
        s.oc.visit_expr(op->value);
        for (const auto& i : op->indices) s.oc.visit_expr(i);
        const OpCounter& oc = s.oc;
        st.float_add += oc.fadd * s.iters;
        st.float_mul += oc.fmul * s.iters;
        st.float_ops += (oc.fadd + oc.fmul + oc.fother) * s.iters;
        st.int_ops += oc.iops * s.iters;
        st.math_calls += oc.calls * s.iters;
        s.work = s.iters * (oc.fadd + oc.fmul + oc.fother + oc.calls);
        s.reduction = is_reduction(op, oc);
        if (main.op && !s.better_than(main)) return;
        s.stack = stack;
        main = std::move(s);
    }

    // The main statement's statistics (after the walk).
    void finish() {
        if (!main.op) return;
        const std::vector<Loop>& loops = main.stack;
        const tir::BufferStore* op = main.op;
        st.iterations = main.iters;
        st.reduction = main.reduction;
        st.main_buffer = op->buffer->name;
        st.depth = int(loops.size());
        st.innermost_extent = loops.empty() ? 1 : loops.back().extent;
        st.vector_lanes = 1;
        st.unrolled = 1;
        st.parallel = 1;
        for (const Loop& l : loops) {
            if (l.kind == tir::ForKind::Vectorized) st.vector_lanes = l.extent;
            if (l.kind == tir::ForKind::Unrolled) st.unrolled *= l.extent;
            // Thread-bound loops (blockIdx / vthread / threadIdx) run in parallel too.
            if (l.kind == tir::ForKind::Parallel || l.kind == tir::ForKind::ThreadBinding)
                st.parallel *= l.extent;
        }
        std::vector<Access> acc = main.oc.loads;
        acc.push_back({op->buffer, op->indices});
        st.accesses = int(acc.size());
        st.stride0 = st.stride1 = st.strided = 0;
        st.local_accesses = st.shared_accesses = 0;
        // Coefficient of each access along each loop (0 = the loop reuses the data).
        std::vector<std::vector<int64_t>> coef(acc.size(), std::vector<int64_t>(loops.size(), 0));
        for (size_t a = 0; a < acc.size(); ++a) {
            st.local_accesses += acc[a].buffer->scope == "local";
            st.shared_accesses += acc[a].buffer->scope == "shared";
            Env zero;
            int64_t base = offset(acc[a], zero);
            for (size_t l = 0; l < loops.size(); ++l) {
                Env one{{loops[l].var, 1}};
                coef[a][l] = std::llabs(offset(acc[a], one) - base);
            }
            int64_t inner = loops.empty() ? 0 : coef[a].back();
            (inner == 0 ? st.stride0 : inner == 1 ? st.stride1 : st.strided)++;
        }
        // Footprint of the loops from depth d inward; the deepest d that fits a cache level.
        st.bytes_l1_iters = st.bytes_l2_iters = 1;
        st.footprint_bytes = 0;
        double inner_iters = 1;
        for (int d = int(loops.size()) - 1; d >= -1; --d) {
            double bytes = 0;
            for (size_t a = 0; a < acc.size(); ++a) {
                double elems = 1;
                for (size_t l = size_t(d + 1); l < loops.size(); ++l)
                    if (coef[a][l] != 0) elems *= double(std::max<int64_t>(loops[l].extent, 1));
                bytes += elems * acc[a].buffer->dtype.bits / 8;
            }
            if (bytes <= 32 * 1024) st.bytes_l1_iters = inner_iters;
            if (bytes <= 1024 * 1024) st.bytes_l2_iters = inner_iters;
            st.footprint_bytes = bytes;
            if (d >= 0) inner_iters *= double(std::max<int64_t>(loops[size_t(d)].extent, 1));
        }
    }
};

// The loop IR code generation sees: blocks lowered, "local" and "shared"
// buffers compacted to the tiles they hold. A compaction that does not apply
// leaves the buffer whole (the features stay defined for any schedule).
tir::PrimFunc prepare(const tir::PrimFunc& scheduled) {
    tir::PrimFunc f = tir::lower_blocks(scheduled);
    try {
        f = tir::compact_local_buffers(f);
    } catch (const std::exception&) {
    }
    try {
        f = tir::compact_shared_buffers(f);
    } catch (const std::exception&) {
    }
    return f;
}

Walker walk(const tir::PrimFunc& scheduled, tir::PrimFunc* prepared = nullptr) {
    tir::PrimFunc f = prepare(scheduled);
    Walker w;
    w.visit_stmt(f->body);
    w.finish();
    if (prepared) *prepared = f;
    return w;
}

double lg(double x) { return std::log2(1.0 + std::max(0.0, x)); }

}  // namespace

KernelStats kernel_stats(const tir::PrimFunc& scheduled) { return walk(scheduled).st; }

const std::vector<std::string>& feature_names() {
    static const std::vector<std::string> names = {
        "float_ops", "float_mul", "float_add", "int_ops", "math_calls", "iterations", "depth",
        "innermost_extent", "vector_lanes", "unrolled", "parallel", "accesses", "stride0",
        "stride1", "strided", "l1_reuse_iters", "l2_reuse_iters", "footprint_bytes", "alloc_bytes",
        "allocs", "stores", "int_per_float", "vector_fraction",
        // the three outermost loops of the main nest, the second and third innermost
        "outer_extent_0", "outer_extent_1", "outer_extent_2", "inner_extent_1", "inner_extent_2",
        // loops of each kind in the whole kernel
        "kind_parallel", "kind_vectorized", "kind_unrolled",
        // the six innermost loops of the main nest, innermost first: extent and kind
        // (0 serial, 1 vectorized, 2 unrolled, 3 parallel, 4 thread-bound)
        "inner0", "inner1", "inner2", "inner3", "inner4", "inner5", "inner0_kind", "inner1_kind",
        "inner2_kind", "inner3_kind", "inner4_kind", "inner5_kind",
        // since version 2: allocation bytes per scope, the main statement's accesses to
        // on-chip buffers, prefetches, whether the main statement is a reduction
        "alloc_local_bytes", "alloc_shared_bytes", "alloc_global_bytes", "local_accesses",
        "shared_accesses", "prefetches", "reduction"};
    return names;
}

std::vector<float> extract_features(const tir::PrimFunc& scheduled) {
    tir::PrimFunc f;
    const Walker w = walk(scheduled, &f);
    const KernelStats& s = w.st;
    int kp = 0, kv = 0, ku = 0;
    tir::post_order_visit(f->body, [&](const tir::Object* o) {
        if (o->node_type != tir::NodeType::For) return;
        auto* l = static_cast<const tir::For*>(o);
        kp += l->kind == tir::ForKind::Parallel;
        kv += l->kind == tir::ForKind::Vectorized;
        ku += l->kind == tir::ForKind::Unrolled;
    });
    // Extents and kinds of the main statement's loops, outermost first.
    std::vector<int64_t> b;
    std::vector<int> kind;
    for (const Loop& l : w.main.stack) {
        b.push_back(l.extent);
        kind.push_back(l.kind == tir::ForKind::Vectorized      ? 1
                       : l.kind == tir::ForKind::Unrolled      ? 2
                       : l.kind == tir::ForKind::Parallel      ? 3
                       : l.kind == tir::ForKind::ThreadBinding ? 4
                                                               : 0);
    }
    auto ext = [&](size_t i) { return i < b.size() ? float(lg(double(b[i]))) : 0.f; };
    auto from_inner = [&](size_t i) { return i < b.size() ? ext(b.size() - 1 - i) : 0.f; };
    std::vector<float> x = {float(lg(s.float_ops)),
                            float(lg(s.float_mul)),
                            float(lg(s.float_add)),
                            float(lg(s.int_ops)),
                            float(lg(s.math_calls)),
                            float(lg(s.iterations)),
                            float(s.depth),
                            float(lg(double(s.innermost_extent))),
                            float(lg(double(s.vector_lanes))),
                            float(lg(double(s.unrolled))),
                            float(lg(double(s.parallel))),
                            float(s.accesses),
                            float(s.stride0),
                            float(s.stride1),
                            float(s.strided),
                            float(lg(s.bytes_l1_iters)),
                            float(lg(s.bytes_l2_iters)),
                            float(lg(s.footprint_bytes)),
                            float(lg(s.alloc_bytes)),
                            float(s.allocs),
                            float(s.stores),
                            float(s.float_ops > 0 ? s.int_ops / s.float_ops : 0),
                            float(s.vector_lanes > 1 ? 1.0 : 0.0),
                            ext(0),
                            ext(1),
                            ext(2),
                            b.size() >= 2 ? from_inner(1) : 0.f,
                            b.size() >= 3 ? from_inner(2) : 0.f,
                            float(kp),
                            float(kv),
                            float(ku)};
    for (size_t i = 0; i < 6; ++i) x.push_back(from_inner(i));
    for (size_t i = 0; i < 6; ++i)
        x.push_back(i < kind.size() ? float(kind[kind.size() - 1 - i]) : 0.f);
    x.insert(x.end(), {float(lg(s.alloc_local_bytes)), float(lg(s.alloc_shared_bytes)),
                       float(lg(s.alloc_global_bytes)), float(s.local_accesses),
                       float(s.shared_accesses), float(s.prefetches), s.reduction ? 1.f : 0.f});
    TS_CHECK(x.size() == feature_names().size())
        << "features: " << x.size() << " values for " << feature_names().size() << " names";
    return x;
}

}  // namespace tessera::autotune
