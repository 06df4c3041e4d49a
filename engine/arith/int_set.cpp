// eval_set: symbolic interval of an expression over relaxed variables.
#include <functional>

#include "engine/arith/analyzer.h"
#include "engine/arith/linear_form.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::arith {

using namespace tir;

namespace {

using Relax = std::map<const Variable*, Range>;

bool uses_relaxed(const Expr& e, const Relax& relax) {
    bool found = false;
    struct Finder : IRVisitor {
        const Relax& r;
        bool& f;
        Finder(const Relax& r_, bool& f_) : r(r_), f(f_) {}
        void visit(const Variable* v) override {
            if (r.count(v)) f = true;
        }
    } finder(relax, found);
    finder.visit_expr(e);
    return found;
}

IntSet eval(const Expr& e, const Relax& relax, Analyzer& ana);

// c * [lo, hi]
IntSet scale(const IntSet& s, int64_t c) {
    if (!s.bounded()) return {};
    Expr k = IntImm::make(s.min.dtype(), c);
    if (c >= 0) return {s.min * k, s.max * k};
    return {s.max * k, s.min * k};
}

IntSet eval_term(const Expr& t, const Relax& relax, Analyzer& ana) {
    if (!uses_relaxed(t, relax)) return {t, t};
    if (const Variable* v = t.as<Variable>()) {
        const Range& r = relax.at(v);
        IntSet mn = eval(r.min, relax, ana);
        IntSet ext = eval(r.extent, relax, ana);
        if (!mn.bounded() || !ext.bounded()) return {};
        return {mn.min, mn.max + ext.max - 1};
    }
    if (const FloorDiv* op = t.as<FloorDiv>();
        op && as_const_int(op->b) && *as_const_int(op->b) > 0) {
        IntSet a = eval(op->a, relax, ana);
        if (!a.bounded()) return {};
        return {floordiv(a.min, op->b), floordiv(a.max, op->b)};
    }
    if (const FloorMod* op = t.as<FloorMod>();
        op && as_const_int(op->b) && *as_const_int(op->b) > 0) {
        IntSet a = eval(op->a, relax, ana);
        // Within one bucket the modulo is monotone.
        if (a.bounded() && ana.can_prove(EQ::make(floordiv(a.min, op->b), floordiv(a.max, op->b))))
            return {floormod(a.min, op->b), floormod(a.max, op->b)};
        return {make_zero(t.dtype()), op->b - 1};
    }
    if (const Min* op = t.as<Min>()) {
        IntSet a = eval(op->a, relax, ana), b = eval(op->b, relax, ana);
        if (!a.bounded() || !b.bounded()) return {};
        return {min(a.min, b.min), min(a.max, b.max)};
    }
    if (const Max* op = t.as<Max>()) {
        IntSet a = eval(op->a, relax, ana), b = eval(op->b, relax, ana);
        if (!a.bounded() || !b.bounded()) return {};
        return {max(a.min, b.min), max(a.max, b.max)};
    }
    return {};
}

IntSet eval(const Expr& e, const Relax& relax, Analyzer& ana) {
    if (!e.dtype().is_integer() || !e.dtype().is_scalar()) return {};
    LinearForm f = to_linear(ana.simplify(e));
    Expr lo = IntImm::make(e.dtype(), f.constant), hi = lo;
    for (const LinearTerm& t : f.terms) {
        IntSet s = scale(eval_term(t.term, relax, ana), t.coeff);
        if (!s.bounded()) return {};
        lo = lo + s.min;
        hi = hi + s.max;
    }
    return {ana.simplify(lo), ana.simplify(hi)};
}

}  // namespace

IntSet eval_set(const Expr& e, const Relax& relax, Analyzer& ana) { return eval(e, relax, ana); }

}  // namespace tessera::arith
