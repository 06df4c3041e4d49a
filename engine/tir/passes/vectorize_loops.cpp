// vectorize_loops: Vectorized loops -> Ramp/Broadcast vector IR, or Serial.
#include "engine/tir/passes/vectorize_loops.h"

#include <bit>
#include <set>

#include "engine/arith/analyzer.h"
#include "engine/tir/clamped_ramp.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::tir {
namespace {

constexpr int kMaxLanes = 64;
// The widest power of two a vector of a width that is not one is widened to
// (see try_vectorize): one AVX-512 float vector. Wider, LLVM split a row of
// 56 floats worse than pieces of 32 + 16 + 8 (a 56 x 56 depthwise conv
// 0.11 -> 0.19 ms).
constexpr int64_t kMaxWholeOddLanes = 16;

bool has_load(const Expr& e) {
    bool found = false;
    post_order_visit(Evaluate::make(e),
                     [&](const Object* n) { found |= n->node_type == NodeType::BufferLoad; });
    return found;
}

/// Vectorizes expressions over one loop variable; ok == false when it cannot.
class ExprVectorizer {
public:
    /// `loops` (may be null): the enclosing loops' ranges and this loop's,
    /// to prove a guarded load inside its buffer in every lane.
    ExprVectorizer(const Var& v, Expr min, int lanes, arith::Analyzer* loops = nullptr)
        : m_var(v), m_min(std::move(min)), m_lanes(lanes), m_loops(loops) {}
    bool ok = true;

    /// A vector of m_lanes lanes, or an undefined Expr if impossible.
    Expr vec(const Expr& e) {
        if (!ok) return Expr();
        if (!uses_var(e, m_var.get())) {
            if (e.dtype().is_vector()) return fail();
            return Broadcast::make(e, m_lanes);
        }
        if (e.dtype().is_vector()) return fail();
        switch (e.node_type()) {
            case NodeType::Variable:
                return Ramp::make(cast_like(m_min, e.dtype()), make_const(e.dtype(), 1), m_lanes);
#define TS_X(N)                              \
    case NodeType::N: {                      \
        const N* op = e.as<N>();             \
        Expr a = vec(op->a), b = vec(op->b); \
        if (!ok) return Expr();              \
        return simplify(N::make(a, b));      \
    }
                TS_TIR_BINARY_NODES(TS_X)
#undef TS_X
            case NodeType::Not: {
                Expr a = vec(e.as<Not>()->a);
                return ok ? Not::make(a) : Expr();
            }
            case NodeType::Select: {
                const Select* op = e.as<Select>();
                // Guarded loads (padding) may be out of bounds in the lanes
                // not taken; a vector select would evaluate them all. A
                // lane-invariant condition stays scalar: one branch per
                // vector, only the taken side loads (the codegen's guarded select).
                if (has_load(op->true_value) || has_load(op->false_value)) {
                    // Unless every guarded load is a contiguous vector load
                    // inside its buffer in every lane (a padded channel
                    // block's unpack then pack: the lanes past the channels
                    // read the block's padding; a padded row's clamped
                    // index, also at stride 2-4: a stride-2 depthwise conv's
                    // columns split by phase), which a vector select may
                    // load and discard.
                    // Gathers stay serial (im2col's windows ran slower as
                    // vector gathers).
                    if (uses_var(op->condition, m_var.get()) &&
                        !(loads_in_bounds(op->true_value) && loads_in_bounds(op->false_value)))
                        return fail();
                    if (uses_var(op->condition, m_var.get())) {
                        Expr c = vec(op->condition), t = vec(op->true_value), f = vec(op->false_value);
                        if (ok && !contiguous_loads(t)) return fail();
                        if (ok && !contiguous_loads(f)) return fail();
                        return ok ? Select::make(c, t, f) : Expr();
                    }
                    Expr t = vec(op->true_value), f = vec(op->false_value);
                    return ok ? Select::make(op->condition, t, f) : Expr();
                }
                Expr c = vec(op->condition), t = vec(op->true_value), f = vec(op->false_value);
                return ok ? Select::make(c, t, f) : Expr();
            }
            case NodeType::Cast: {
                const Cast* op = e.as<Cast>();
                Expr v = vec(op->value);
                return ok ? Cast::make(op->dtype.with_lanes(m_lanes), v) : Expr();
            }
            case NodeType::Call: {
                const Call* op = e.as<Call>();
                std::vector<Expr> args;
                for (const Expr& a : op->args) args.push_back(vec(a));
                return ok ? Call::make(op->dtype.with_lanes(m_lanes), op->op, args) : Expr();
            }
            case NodeType::BufferLoad: {
                const BufferLoad* op = e.as<BufferLoad>();
                std::vector<Expr> idx = index(op->indices, true);
                return ok ? BufferLoad::make(op->buffer, idx) : Expr();
            }
            default:
                return fail();
        }
    }

    /// Indices of a vector access: the last one a Ramp with stride 1, the
    /// others invariant; a load (`gather`) may take any vector of indices
    /// (each lane reads what its serial iteration reads: a strided layout's
    /// transpose, a reshape chain's div/mod).
    std::vector<Expr> index(const std::vector<Expr>& indices, bool gather = false) {
        std::vector<Expr> out;
        for (size_t d = 0; d < indices.size(); ++d) {
            bool last = d + 1 == indices.size();
            if (!uses_var(indices[d], m_var.get())) {
                out.push_back(indices[d]);
                continue;
            }
            Expr v = last ? vec(indices[d]) : Expr();
            const Ramp* r = v.defined() ? v.as<Ramp>() : nullptr;
            if (gather && last && v.defined() && ok) {
                out.push_back(v);
                continue;
            }
            if (!r || !is_const_int(r->stride, 1)) {
                fail();
                return {};
            }
            out.push_back(v);
        }
        if (!out.empty() && !out.back().as<Ramp>()) {  // invariant access
            // A load of one invariant element is broadcast by the caller.
        }
        return out;
    }

    Expr fail() {
        ok = false;
        return Expr();
    }

private:
    /// Every load of `e` indexes its buffer inside its shape for every value
    /// the enclosing loops and this one take.
    bool loads_in_bounds(const Expr& e) {
        if (!m_loops) return false;
        bool in = true;
        post_order_visit(Evaluate::make(e), [&](const Object* n) {
            if (n->node_type != NodeType::BufferLoad) return;
            const BufferLoad* l = static_cast<const BufferLoad*>(n);
            if (l->indices.size() != l->buffer->shape.size()) {
                in = false;
                return;
            }
            for (size_t d = 0; d < l->indices.size(); ++d) {
                const int64_t* extent = as_const_int(l->buffer->shape[d]);
                const arith::ConstIntBound b = m_loops->const_int_bound(l->indices[d]);
                if (!extent || b.min_value < 0 || b.max_value >= *extent) in = false;
            }
        });
        return in;
    }

    /// Every vector load of `e` reads consecutive elements, or every 2nd to
    /// 4th of a short span (read through the span, read_without_gather).
    static bool contiguous_loads(const Expr& e) {
        bool contiguous = true;
        post_order_visit(Evaluate::make(e), [&](const Object* n) {
            if (n->node_type != NodeType::BufferLoad) return;
            const BufferLoad* l = static_cast<const BufferLoad*>(n);
            if (l->indices.empty() || !l->dtype.is_vector()) return;
            // A Ramp, or one clamped into the buffer (a padded read): the
            // codegen reads it plainly where no lane is clamped.
            const Ramp* r = l->indices.back().as<Ramp>();
            ClampedRamp clamped;
            if (!r && match_clamped_ramp(l->indices.back(), clamped)) r = clamped.ramp;
            if (!r || !read_without_gather(*r)) contiguous = false;
            for (size_t d = 0; d + 1 < l->indices.size(); ++d)
                if (l->indices[d].dtype().is_vector()) contiguous = false;
        });
        return contiguous;
    }

    static Expr cast_like(const Expr& e, DataType t) {
        return e.dtype() == t ? e : simplify(Cast::make(t, e));
    }
    Var m_var;
    Expr m_min;
    int m_lanes;
    arith::Analyzer* m_loops;
};

// Stores of the loop body, or empty if the body is anything else.
std::vector<const BufferStore*> stores_of(const Stmt& body) {
    std::vector<const BufferStore*> out;
    if (const BufferStore* s = body.as<BufferStore>()) return {s};
    const SeqStmt* seq = body.as<SeqStmt>();
    if (!seq) return {};
    for (const Stmt& s : seq->seq) {
        const BufferStore* st = s.as<BufferStore>();
        if (!st) return {};
        out.push_back(st);
    }
    return out;
}

// A buffer written in the body may only be read at the very index it is
// written at: otherwise the vector order (all lanes of a statement first)
// could differ from the serial order.
bool independent(const std::vector<const BufferStore*>& stores) {
    for (const BufferStore* st : stores) {
        bool bad = false;
        for (const BufferStore* other : stores) {
            auto check = [&](const Object* n) {
                if (n->node_type != NodeType::BufferLoad) return;
                const BufferLoad* l = static_cast<const BufferLoad*>(n);
                if (!l->buffer.same_as(st->buffer)) return;
                if (l->indices.size() != st->indices.size()) {
                    bad = true;
                    return;
                }
                for (size_t i = 0; i < l->indices.size(); ++i)
                    if (!structural_equal(l->indices[i], st->indices[i])) bad = true;
            };
            post_order_visit(Evaluate::make(other->value), check);
            for (const Expr& i : other->indices) post_order_visit(Evaluate::make(i), check);
        }
        if (bad) return false;
    }
    return true;
}

Stmt try_vectorize(const For* op, arith::Analyzer* loops) {
    const int64_t* ext = as_const_int(op->extent);
    if (!ext || *ext < 2 || *ext > kMaxLanes) return Stmt();
    // A guard that no lane changes (a block predicate on an outer loop: the
    // rows past a tiled extent) is tested once for the whole vector.
    if (const IfThenElse* g = op->body.as<IfThenElse>()) {
        if (g->else_case.defined() || uses_var(g->condition, op->loop_var.get())) return Stmt();
        Stmt inner = For::make(op->loop_var, op->min, op->extent, op->kind, g->then_case, "",
                               op->annotations);
        Stmt v = try_vectorize(inner.as<For>(), loops);
        return v.defined() ? IfThenElse::make(g->condition, v, Stmt()) : Stmt();
    }
    std::vector<const BufferStore*> stores = stores_of(op->body);
    if (stores.empty() || !independent(stores)) return Stmt();
    // The stores of `lanes` lanes from lane `first` on.
    auto piece = [&](int64_t first, int lanes, std::vector<Stmt>& out) {
        const Expr base = first == 0 ? op->min : op->min + make_const(op->min.dtype(), double(first));
        if (lanes == 1) {
            for (const BufferStore* st : stores)
                out.push_back(substitute(Stmt(st), {{op->loop_var.get(), base}}));
            return true;
        }
        ExprVectorizer vz(op->loop_var, base, lanes, loops);
        for (const BufferStore* st : stores) {
            std::vector<Expr> idx = vz.index(st->indices);
            if (!vz.ok || idx.empty() || !idx.back().as<Ramp>()) return false;  // store must vary
            Expr value = vz.vec(st->value);
            if (!vz.ok) return false;
            out.push_back(BufferStore::make(st->buffer, value, idx));
        }
        return true;
    };
    // A width that is not a power of two runs as power-of-two pieces (17
    // lanes: 16 + 1): LLVM legalizes a <17 x float> operation lane by lane,
    // and a GEMM's 17-column tail panel ([512, 1152] x [1152, 49]) made the
    // whole product run at 49 GFLOP/s instead of 260. Up to 16 lanes, a
    // width of at least 3/4 of its power of two stays one vector: LLVM
    // widens its operations to that power of two (one operation instead of
    // one per piece: a 7 x 7 plane's row of 7 ran its epilogue as 4 + 2 + 1
    // lanes) and the codegen reads and writes it with a masked vector where
    // the CPU has masks.
    std::vector<Stmt> out;
    if (int64_t p = std::bit_ceil(uint64_t(*ext)); p <= kMaxWholeOddLanes && *ext * 4 >= p * 3) {
        if (!piece(0, int(*ext), out)) return Stmt();
        return SeqStmt::make(std::move(out));
    }
    int64_t first = 0;
    while (first < *ext) {
        int lanes = 1;
        while (lanes * 2 <= *ext - first) lanes *= 2;
        if (!piece(first, lanes, out)) return Stmt();
        first += lanes;
    }
    return SeqStmt::make(std::move(out));
}

class Vectorizer : public IRMutator {
protected:
    using IRMutator::visit;
    arith::Analyzer m_loops;

    Stmt visit(const For* op) override {
        // The loop's range while its body is vectorized (guarded loads are
        // proven in bounds with every enclosing loop's).
        arith::ScopedBind bind(m_loops, op->loop_var, Range{op->min, op->extent});
        Stmt s = IRMutator::visit(op);
        const For* loop = s.as<For>();
        if (!loop || loop->kind != ForKind::Vectorized) return s;
        if (Stmt v = try_vectorize(loop, &m_loops); v.defined()) return v;
        return For::make(loop->loop_var, loop->min, loop->extent, ForKind::Serial, loop->body, "",
                         loop->annotations);
    }
};

}  // namespace

PrimFunc vectorize_loops(const PrimFunc& f) {
    Stmt body = Vectorizer().mutate(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessera::tir
