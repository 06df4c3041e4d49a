// Canonical linear form of integer expressions: sum of coefficient * term plus
// a constant, with terms kept in order of first appearance (deterministic).
#pragma once

#include <vector>

#include "engine/tir/expr.h"

namespace tessera::arith {

struct LinearTerm {
    tir::Expr term;  // a non-linear atom: variable, floordiv, load, x*y, ...
    int64_t coeff = 0;
};

/// sum(terms[i].coeff * terms[i].term) + constant, all in `dtype` (a scalar
/// integer type; coefficients wrap to its width).
struct LinearForm {
    tir::DataType dtype = tir::DataType::int64();
    std::vector<LinearTerm> terms;
    int64_t constant = 0;

    /// Adds coeff * term, merging with a structurally equal term.
    void add_term(const tir::Expr& term, int64_t coeff);
    void add(const LinearForm& o, int64_t scale = 1);
    void scale(int64_t c);
    bool is_const() const { return terms.empty(); }
    /// Coefficient of `term` (0 if absent).
    int64_t coeff_of(const tir::Expr& term) const;
};

/// Two's-complement wrap of v to the width of integer type t.
int64_t wrap_to(tir::DataType t, int64_t v);

/// Decomposes `e` (a scalar integer expression) over Add, Sub, Mul by a
/// constant and integer constants; everything else becomes a term.
LinearForm to_linear(const tir::Expr& e);

/// Builds the expression: positive terms first where possible, negative
/// coefficients as Sub (`i - 1`, never `i + -1`), unit coefficients without
/// `* 1`, a zero constant omitted.
tir::Expr from_linear(const LinearForm& f);

}  // namespace tessera::arith
