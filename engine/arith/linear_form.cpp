// Linear forms: decomposition and deterministic reconstruction.
#include "engine/arith/linear_form.h"

#include "engine/core/error.h"
#include "engine/tir/structural_equal.h"

namespace tessera::arith {

using namespace tir;

int64_t wrap_to(DataType t, int64_t v) {
    if (t.is_bool()) return v != 0;
    if (t.bits >= 64) return v;
    uint64_t mask = (uint64_t(1) << t.bits) - 1;
    uint64_t u = uint64_t(v) & mask;
    if (t.is_int() && (u >> (t.bits - 1)) & 1) u |= ~mask;
    return int64_t(u);
}

namespace {
int64_t wmul(DataType t, int64_t a, int64_t b) {
    return wrap_to(t, int64_t(uint64_t(a) * uint64_t(b)));
}
int64_t wadd(DataType t, int64_t a, int64_t b) {
    return wrap_to(t, int64_t(uint64_t(a) + uint64_t(b)));
}
}  // namespace

void LinearForm::add_term(const Expr& term, int64_t coeff) {
    for (size_t i = 0; i < terms.size(); ++i) {
        if (structural_equal(terms[i].term, term)) {
            terms[i].coeff = wadd(dtype, terms[i].coeff, coeff);
            if (terms[i].coeff == 0) terms.erase(terms.begin() + long(i));
            return;
        }
    }
    if (wrap_to(dtype, coeff) != 0) terms.push_back({term, wrap_to(dtype, coeff)});
}

void LinearForm::add(const LinearForm& o, int64_t s) {
    for (const LinearTerm& t : o.terms) add_term(t.term, wmul(dtype, t.coeff, s));
    constant = wadd(dtype, constant, wmul(dtype, o.constant, s));
}

void LinearForm::scale(int64_t c) {
    if (wrap_to(dtype, c) == 0) {
        terms.clear();
        constant = 0;
        return;
    }
    std::vector<LinearTerm> out;
    for (const LinearTerm& t : terms)
        if (int64_t k = wmul(dtype, t.coeff, c); k != 0) out.push_back({t.term, k});
    terms = std::move(out);
    constant = wmul(dtype, constant, c);
}

int64_t LinearForm::coeff_of(const Expr& term) const {
    for (const LinearTerm& t : terms)
        if (structural_equal(t.term, term)) return t.coeff;
    return 0;
}

namespace {

const IntImm* as_int(const Expr& e) {
    const IntImm* i = e.as<IntImm>();
    return i && !i->dtype.is_bool() ? i : nullptr;
}

void decompose(const Expr& e, int64_t scale, LinearForm& out) {
    DataType t = out.dtype;
    if (const IntImm* i = as_int(e)) {
        out.constant = wadd(t, out.constant, wmul(t, i->value, scale));
    } else if (const Add* op = e.as<Add>()) {
        decompose(op->a, scale, out);
        decompose(op->b, scale, out);
    } else if (const Sub* op = e.as<Sub>()) {
        decompose(op->a, scale, out);
        decompose(op->b, wmul(t, scale, -1), out);
    } else if (const Mul* op = e.as<Mul>(); op && as_int(op->b)) {
        decompose(op->a, wmul(t, scale, as_int(op->b)->value), out);
    } else if (const Mul* op = e.as<Mul>(); op && as_int(op->a)) {
        decompose(op->b, wmul(t, scale, as_int(op->a)->value), out);
    } else {
        out.add_term(e, scale);
    }
}

Expr term_expr(const Expr& term, int64_t coeff) {
    if (coeff == 1) return term;
    return Mul::make(term, IntImm::make(term.dtype(), coeff));
}

}  // namespace

LinearForm to_linear(const Expr& e) {
    TS_CHECK(e.dtype().is_integer() && e.dtype().is_scalar())
        << "linear form of a non-integer expression";
    LinearForm f;
    f.dtype = e.dtype();
    decompose(e, 1, f);
    return f;
}

Expr from_linear(const LinearForm& f) {
    DataType t = f.dtype;
    // Start with the first positive term so that later negatives read as a - b.
    size_t first = f.terms.size();
    for (size_t i = 0; i < f.terms.size(); ++i)
        if (f.terms[i].coeff > 0) {
            first = i;
            break;
        }
    Expr acc;
    bool const_used = false;
    if (first < f.terms.size()) {
        acc = term_expr(f.terms[first].term, f.terms[first].coeff);
    } else if (f.constant > 0 || f.terms.empty()) {
        acc = IntImm::make(t, f.constant);
        const_used = true;
    } else {
        first = 0;
        acc = term_expr(f.terms[0].term, f.terms[0].coeff);
    }
    for (size_t i = 0; i < f.terms.size(); ++i) {
        if (i == first && !const_used) continue;
        int64_t c = f.terms[i].coeff;
        if (c > 0)
            acc = Add::make(acc, term_expr(f.terms[i].term, c));
        else if (c != INT64_MIN && wrap_to(t, -c) == -c)
            acc = Sub::make(acc, term_expr(f.terms[i].term, -c));
        else
            acc = Add::make(acc, term_expr(f.terms[i].term, c));
    }
    if (!const_used && f.constant != 0) {
        int64_t c = f.constant;
        if (c < 0 && c != INT64_MIN && wrap_to(t, -c) == -c)
            acc = Sub::make(acc, IntImm::make(t, -c));
        else
            acc = Add::make(acc, IntImm::make(t, c));
    }
    return acc;
}

}  // namespace tessera::arith
