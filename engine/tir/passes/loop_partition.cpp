// loop_partition: split loops at the point where a guard stops being provable.
#include "engine/tir/passes/loop_partition.h"

#include "engine/arith/analyzer.h"
#include "engine/arith/stmt_simplify.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/remove_no_op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::tir {
namespace {

// Conjunctions of integer comparisons of expressions without modulo: the
// set of iterations where they hold is an interval, so a prefix is all true.
bool monotone(const Expr& c) {
    if (const And* a = c.as<And>()) return monotone(a->a) && monotone(a->b);
    const Expr* sides[2] = {nullptr, nullptr};
    if (const LT* x = c.as<LT>()) sides[0] = &x->a, sides[1] = &x->b;
    if (const LE* x = c.as<LE>()) sides[0] = &x->a, sides[1] = &x->b;
    if (const GT* x = c.as<GT>()) sides[0] = &x->a, sides[1] = &x->b;
    if (const GE* x = c.as<GE>()) sides[0] = &x->a, sides[1] = &x->b;
    if (!sides[0] || !sides[0]->dtype().is_integer() || !sides[0]->dtype().is_scalar())
        return false;
    bool ok = true;
    for (const Expr* e : sides)
        post_order_visit(Evaluate::make(*e), [&](const Object* n) {
            if (n->node_type == NodeType::FloorMod || n->node_type == NodeType::Mod ||
                n->node_type == NodeType::BufferLoad || n->node_type == NodeType::Call)
                ok = false;
        });
    return ok;
}

/// A guard inside a loop body with the loops between the loop and the guard.
struct Guard {
    Expr condition;
    std::vector<const For*> inner;
};

bool contains_loop(const Stmt& s) {
    bool found = false;
    post_order_visit(s, [&](const Object* n) { found |= n->node_type == NodeType::For; });
    return found;
}

// Select conditions count inside an innermost vector loop: a select whose
// condition varies along the vector or from one row of vectors to the next
// (a padding stage's select(0 <= w - 1 < W, x[clamp(w - 1)], pad), a packed
// panel's select(j < N, B[k, j], 0) past the last column) keeps its lanes
// serial, as its clamped or guarded loads are no vector load; partitioned,
// the edges and the interior are plain vector stores and copies.
bool innermost_vector_loop(const For* op) {
    return op->kind == ForKind::Vectorized && !contains_loop(op->body);
}

// Collects IfThenElse conditions that use `v`, with the loops around them,
// and the conditions of Select expressions inside innermost vector loops
// (all of them with `selects`: the loop partitioned is such a loop).
class GuardCollector : public IRVisitor {
public:
    GuardCollector(const Variable* v, bool selects) : m_v(v), m_selects(selects) {}
    std::vector<Guard> guards;

protected:
    using IRVisitor::visit;
    void visit(const For* op) override {
        m_loops.push_back(op);
        const bool selects = m_selects;
        m_selects = m_selects || innermost_vector_loop(op);
        IRVisitor::visit(op);
        m_selects = selects;
        m_loops.pop_back();
    }
    void visit(const IfThenElse* op) override {
        add(op->condition);
        IRVisitor::visit(op);
    }
    void visit(const Select* op) override {
        if (m_selects) add(op->condition);
        IRVisitor::visit(op);
    }
    void visit(const LetStmt* op) override {}  // let-bound guards: not analysed
    void visit(const Block* op) override {}    // blocks are lowered first

private:
    // Each conjunct is a guard of its own: a prefix may satisfy one of them.
    void add(const Expr& c) {
        if (const And* a = c.as<And>()) {
            add(a->a);
            add(a->b);
        } else if (uses_var(c, m_v) && monotone(c)) {
            guards.push_back({c, m_loops});
        }
    }
    const Variable* m_v;
    bool m_selects;
    std::vector<const For*> m_loops;
};


class Partitioner : public IRMutator {
public:
    arith::Analyzer ana;

protected:
    using IRMutator::visit;

    Stmt visit(const For* op) override {
        const int64_t* mn = as_const_int(op->min);
        const int64_t* ext = as_const_int(op->extent);
        if (op->kind != ForKind::ThreadBinding && mn && ext && *ext > 1) {
            if (Stmt s = partition(op, *mn, *ext); s.defined()) return s;
        }
        arith::ScopedBind bind(ana, op->loop_var, Range{op->min, op->extent});
        return IRMutator::visit(op);
    }

private:
    // True if `g` holds for every iteration with the loop var in [mn, p).
    bool provable(const For* op, const Guard& g, int64_t mn, int64_t p) {
        arith::ScopedBind bind(ana, op->loop_var, arith::ConstIntBound{mn, p - 1});
        std::vector<std::unique_ptr<arith::ScopedBind>> inner;
        for (const For* f : g.inner)
            inner.push_back(
                std::make_unique<arith::ScopedBind>(ana, f->loop_var, Range{f->min, f->extent}));
        return ana.can_prove(g.condition);
    }

    // True if `g` fails for every iteration with the loop var in [p, end).
    bool refutable(const For* op, const Guard& g, int64_t p, int64_t end) {
        arith::ScopedBind bind(ana, op->loop_var, arith::ConstIntBound{p, end - 1});
        std::vector<std::unique_ptr<arith::ScopedBind>> inner;
        for (const For* f : g.inner)
            inner.push_back(
                std::make_unique<arith::ScopedBind>(ana, f->loop_var, Range{f->min, f->extent}));
        return ana.can_prove(!g.condition);
    }

    // The smallest q in (mn, end) such that `g` fails (holds, with `holds`)
    // on [q, end), or end.
    int64_t suffix(const For* op, const Guard& g, int64_t mn, int64_t end, bool holds) {
        auto settled = [&](int64_t q) {
            return holds ? provable(op, g, q, end) : refutable(op, g, q, end);
        };
        if (!settled(end - 1)) return end;
        int64_t lo = mn + 1, hi = end - 1;  // smallest q in [lo, hi] that is settled
        if (settled(lo)) return lo;
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            if (settled(mid))
                hi = mid;
            else
                lo = mid;
        }
        return hi;
    }

    // The largest q in [lo, hi] for which `holds_up_to(q)`, a predicate true
    // at lo that stays false once it is (a prefix that grows with q).
    template <typename Predicate>
    static int64_t largest(int64_t lo, int64_t hi, const Predicate& holds_up_to) {
        while (lo < hi) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (holds_up_to(mid))
                lo = mid;
            else
                hi = mid - 1;
        }
        return lo;
    }

    Stmt partition(const For* op, int64_t mn, int64_t ext) {
        GuardCollector gc(op->loop_var.get(), innermost_vector_loop(op));
        gc.visit_stmt(op->body);
        bool simplifiable = false;
        for (const Guard& g : gc.guards) {
            if (provable(op, g, mn, mn + ext) || refutable(op, g, mn, mn + ext)) {
                simplifiable = true;  // the same on every iteration
                continue;
            }
            if (!provable(op, g, mn, mn + 1)) {
                if (refutable(op, g, mn, mn + 1)) {
                    // A guard that fails on a prefix (the left padding): the
                    // prefix and the rest become loops of their own, and the
                    // rest is partitioned again by the other guards.
                    const int64_t q = largest(mn + 1, mn + ext - 1, [&](int64_t end) {
                        return refutable(op, g, mn, end);
                    });
                    if (op->kind == ForKind::Parallel) return branch_at(op, mn, ext, q);
                    Stmt head = remove_no_op(make_loop(op, mn, q - mn, true));
                    Stmt rest = make_loop(op, q, mn + ext - q, true);
                    if (is_no_op(head)) return rest;
                    return SeqStmt::make({head, rest});
                }
                // A guard that holds from some iteration on, not before, of
                // a loop right around the vector loop it is in (a padding
                // stage's row of vectors, whose first lane is the left
                // padding): the first iterations keep it, the rest becomes a
                // loop of its own where it simplifies away (a select on
                // every vector of a row was a third of a depthwise conv's
                // padding stage). Not for outer loops: peeling a block of
                // rows copies the conv's unrolled body too (MobileNetV2's
                // depthwise layers ran 35 % slower with three copies).
                if (const int64_t q = g.inner.size() <= 1 ? suffix(op, g, mn, mn + ext, true) : mn;
                    q > mn && q < mn + ext) {
                    if (op->kind == ForKind::Parallel) return branch_at(op, mn, ext, q);
                    Stmt head = remove_no_op(make_loop(op, mn, q - mn, true));
                    Stmt rest = make_loop(op, q, mn + ext - q, true);
                    if (is_no_op(head)) return rest;
                    return SeqStmt::make({head, rest});
                }
                // A guard that fails on a suffix of the iterations (the end
                // of a tail tile): the suffix becomes a loop of its own,
                // where the guard simplifies away (often with the whole
                // body: a tile's rows past the end of the matrix).
                const int64_t q = ext > 1 ? suffix(op, g, mn, mn + ext, false) : mn + ext;
                if (q <= mn || q >= mn + ext) continue;
                if (op->kind == ForKind::Parallel) return branch_at(op, mn, ext, q);
                Stmt head = make_loop(op, mn, q - mn, true);
                Stmt rest = remove_no_op(make_loop(op, q, mn + ext - q, true));
                if (is_no_op(rest)) return head;
                return SeqStmt::make({head, rest});
            }
            const int64_t p = largest(mn + 1, mn + ext - 1,
                                      [&](int64_t end) { return provable(op, g, mn, end); });
            if (op->kind == ForKind::Parallel) return branch_at(op, mn, ext, p);
            // The main part may hold other guards on the same variable (the
            // other side of a padding): it is partitioned again.
            Stmt main = make_loop(op, mn, p - mn, true);
            Stmt tail = remove_no_op(make_loop(op, p, mn + ext - p, true));
            if (is_no_op(tail)) return main;
            return SeqStmt::make({main, tail});
        }
        if (simplifiable) return make_loop(op, mn, ext, false);
        return Stmt();
    }

    // A parallel loop is one fork of the thread team: split in two, each part
    // would be a fork of its own, and a part of one iteration (a tail block
    // of columns, the second of two) would run on one thread while the
    // others wait (an int8 conv's GEMM split 416 + 368 columns for 2
    // threads ran serially: 0.30 ms on 1 and on 2 threads). It stays one
    // loop whose body branches at `q`: each branch simplified for its
    // iterations and partitioned inside.
    Stmt branch_at(const For* op, int64_t mn, int64_t ext, int64_t q) {
        Stmt head = remove_no_op(body_over(op, mn, q - mn));
        Stmt rest = remove_no_op(body_over(op, q, mn + ext - q));
        const Expr before = op->loop_var < IntImm::make(op->loop_var.dtype(), q);
        Stmt body = is_no_op(rest)   ? IfThenElse::make(before, head)
                    : is_no_op(head) ? IfThenElse::make(!before, rest)
                                     : IfThenElse::make(before, head, rest);
        return For::make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag,
                         op->annotations);
    }

    // The loop's body for its iterations in [start, start + extent):
    // simplified with that bound, and partitioned inside.
    Stmt body_over(const For* op, int64_t start, int64_t extent) {
        arith::ScopedBind bind(
            ana, op->loop_var,
            Range{IntImm::make(op->min.dtype(), start), IntImm::make(op->extent.dtype(), extent)});
        return mutate(arith::simplify_stmt(op->body, ana, true));
    }

    // The loop over [start, start + extent), simplified with its bounds, then
    // partitioned further inside; a tail (`again`) may be partitioned itself
    // (it is shorter than the loop, so this ends).
    Stmt make_loop(const For* op, int64_t start, int64_t extent, bool again) {
        Stmt loop = For::make(op->loop_var, IntImm::make(op->min.dtype(), start),
                              IntImm::make(op->extent.dtype(), extent), op->kind, op->body,
                              op->thread_tag, op->annotations);
        loop = arith::simplify_stmt(loop, ana, true);
        if (const For* f = loop.as<For>(); f && f->loop_var.same_as(op->loop_var)) {
            if (again) return mutate(loop);
            arith::ScopedBind bind(ana, f->loop_var, Range{f->min, f->extent});
            Stmt body = mutate(f->body);
            if (body.same_as(f->body)) return loop;
            return For::make(f->loop_var, f->min, f->extent, f->kind, body, f->thread_tag,
                             f->annotations);
        }
        return mutate(loop);
    }
};

}  // namespace

PrimFunc loop_partition(const PrimFunc& f) {
    Partitioner p;
    Stmt body = p.mutate(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessera::tir
