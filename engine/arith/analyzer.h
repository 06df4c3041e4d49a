// arith::Analyzer: bounds of bound variables, constant interval analysis,
// proving conditions and simplifying expressions and statements (TVM style).
//
//   arith::Analyzer ana;
//   ana.bind(i, Range::from_extent(8));
//   ana.simplify(floordiv(i * 8 + j, 8));   // i, when j is bound to [0, 8)
//   ana.can_prove(i < 8);                   // true
#pragma once

#include <map>
#include <vector>

#include "engine/arith/const_int_bound.h"
#include "engine/tir/stmt.h"

namespace tessera::arith {

class Analyzer {
public:
    /// Binds v to the half-open range [min, min + extent). The range's bounds
    /// are evaluated now (with the current bindings). Rebinding shadows the
    /// previous binding until unbind(v).
    void bind(const tir::Var& v, const tir::Range& r);
    /// Binds v to the constant interval b.
    void bind(const tir::Var& v, const ConstIntBound& b);
    /// Removes the latest binding of v.
    void unbind(const tir::Var& v);

    /// [min, max] of an integer expression under the current bindings
    /// (everything for unbound variables of int64, the type's range otherwise).
    ConstIntBound const_int_bound(const tir::Expr& e) const;

    /// True if `cond` simplifies to true under the current bindings. False
    /// means "not proven", not "false".
    bool can_prove(const tir::Expr& cond);

    /// Folds constants, puts integer sums into canonical linear form
    /// (coefficients merged, terms in order of first appearance, negatives as
    /// Sub), applies floordiv/floormod, comparison, min/max, select and logic
    /// rules using the bounds. Deterministic; returns `e` itself if nothing
    /// changes.
    tir::Expr simplify(const tir::Expr& e);

    /// Simplifies every expression of `s`; loop variables and block iteration
    /// variables are bound to their ranges inside their bodies. Keeps the
    /// statement structure (no loop removed); see tir::simplify for that.
    tir::Stmt simplify(const tir::Stmt& s);

private:
    std::map<const tir::Variable*, std::vector<ConstIntBound>> m_bounds;
    friend class BoundEvaluator;
};

/// RAII binding of a variable for a scope.
class ScopedBind {
public:
    ScopedBind(Analyzer& a, const tir::Var& v, const tir::Range& r) : m_a(a), m_v(v) {
        a.bind(v, r);
    }
    ScopedBind(Analyzer& a, const tir::Var& v, const ConstIntBound& b) : m_a(a), m_v(v) {
        a.bind(v, b);
    }
    ~ScopedBind() { m_a.unbind(m_v); }
    ScopedBind(const ScopedBind&) = delete;
    ScopedBind& operator=(const ScopedBind&) = delete;

private:
    Analyzer& m_a;
    tir::Var m_v;
};

/// A symbolic interval [min, max] (both inclusive); undefined ends mean
/// "unbounded".
struct IntSet {
    tir::Expr min, max;
    bool bounded() const { return min.defined() && max.defined(); }
};

/// The set of values of integer expression `e` when each variable in `relax`
/// ranges over its Range; other variables stay symbolic. Handles linear forms,
/// floordiv/floormod by constants and min/max; anything else in a relaxed
/// variable is unbounded. Results are simplified with `ana`.
IntSet eval_set(const tir::Expr& e, const std::map<const tir::Variable*, tir::Range>& relax,
                Analyzer& ana);

}  // namespace tessera::arith
