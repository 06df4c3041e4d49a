// Computes for extra elementwise/unary/window/quantization ops: inverse and
// hyperbolic trigonometry (tir intrinsic calls), shrink, bit shifts, LRN,
// determinant (closed-form cofactor expansion), DFT and STFT.
#include <cmath>
#include <functional>

#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {

Expr c(const Expr& like, double v) { return tir::make_const(like.dtype(), v); }

// tan, asin, ... : one intrinsic call of the op's name per element.
Tensors trig(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const std::string name = n.op;
    te::Tensor y = te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
            Expr v = x(as_exprs(i));
            return tir::Call::make(v.dtype(), name, {v});
        },
        "T_" + n.op, "elemwise");
    return {y};
}

Tensors shrink(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    double lambd = n.attr_float("lambd", 0.5), bias = n.attr_float("bias", 0.0);
    te::Tensor y = te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
            Expr v = x(as_exprs(i));
            return tir::select(v < c(v, -lambd), v + c(v, bias),
                               tir::select(v > c(v, lambd), v - c(v, bias), c(v, 0)));
        },
        "T_shrink", "elemwise");
    return {y};
}

// a << b and a >> b as a multiply / divide by 2^b (tir has no shift nodes);
// shifts by the bit width or more give 0 (a signed right shift: its sign,
// 0 or -1). Signed types (unsigned ONNX tensors
// widened at the graph boundary) shift arithmetically: 2^b is built from
// 2^min(b, bits - 2) and one more factor 2 so that it never overflows.
Tensors shift(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    const te::Tensor& a = in[0];
    const te::Tensor& b = in[1];
    const auto& os = out[0].shape;
    bool left = n.op == "left_shift";
    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            Expr x = a(broadcast_index(idx, os, a.shape()));
            Expr s = b(broadcast_index(idx, os, b.shape()));
            tir::DataType t = x.dtype();
            const tir::DataType f64 = tir::DataType::float64();
            auto k = [&](double v) { return tir::make_const(t, v); };
            bool is_signed = t.is_int();
            int top = is_signed ? t.bits - 2 : t.bits - 1;
            Expr amount = tir::min(s, k(top));
            if (is_signed) amount = tir::max(amount, k(0));
            Expr p = tir::cast(t, tir::pow(tir::make_const(f64, 2.0), tir::cast(f64, amount)));
            Expr r;
            if (!is_signed) {
                r = left ? x * p : x / p;
            } else {
                Expr q = tir::select(s > k(top), k(2), k(1));
                r = left ? x * p * q : tir::floordiv(tir::floordiv(x, p), q);
            }
            Expr past = s >= k(t.bits);
            if (is_signed) past = past || s < k(0);
            // A signed right shift by the width or more (or a negative
            // amount) fills with the sign bit: -1 for negative x (onnx 1.23's cases).
            Expr filled =
                is_signed && !left ? tir::select(x < k(0), k(-1), k(0)) : tir::make_zero(t);
            return tir::select(past, filled, r);
        },
        "T_" + n.op, "broadcast");
    return {y};
}

// y = x / (bias + alpha / size * sum of x^2 over channels [c - lo, c + hi])^beta
// with lo = floor((size - 1) / 2), hi = ceil((size - 1) / 2).
Tensors lrn(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const auto& xs = x.shape();
    int64_t size = n.attr_int("size", 1), C = xs[1];
    int64_t lo = (size - 1) / 2;
    double alpha = n.attr_float("alpha", 1e-4), beta = n.attr_float("beta", 0.75),
           bias = n.attr_float("bias", 1.0);
    te::Tensor sq = te::compute(
        xs,
        [&](const std::vector<Var>& i) {
            tir::IterVar r = te::reduce_axis(size, "r");
            Expr ch = add_const(i[1] + r.var, -lo);
            std::vector<Expr> idx = as_exprs(i);
            idx[1] = clamp_index(ch, C);
            Expr v = x(idx);
            Expr inside = ch >= int64_t(0) && ch < C;
            return te::sum(tir::select(inside, v * v, tir::make_zero(x.dtype())), {r});
        },
        "lrn_sum", "reduce");
    te::Tensor y = te::compute(
        xs,
        [&](const std::vector<Var>& i) {
            Expr v = x(as_exprs(i));
            Expr d = c(v, bias) + c(v, alpha / double(size)) * sq(as_exprs(i));
            return v / tir::pow(d, c(v, beta));
        },
        "T_lrn", "elemwise");
    return {y};
}

// Determinant of m[r][c] by cofactor expansion along the first row.
Expr det_of(const std::function<Expr(int, int)>& m, const std::vector<int>& rows,
            const std::vector<int>& cols) {
    if (rows.size() == 1) return m(rows[0], cols[0]);
    Expr acc;
    std::vector<int> sub_rows(rows.begin() + 1, rows.end());
    for (size_t j = 0; j < cols.size(); ++j) {
        std::vector<int> sub_cols = cols;
        sub_cols.erase(sub_cols.begin() + long(j));
        Expr term = m(rows[0], cols[j]) * det_of(m, sub_rows, sub_cols);
        acc = !acc.defined() ? term : (j % 2 == 0 ? acc + term : acc - term);
    }
    return acc;
}

Tensors det(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    int M = int(x.shape().back());
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            auto m = [&](int r, int col) {
                std::vector<Expr> idx = as_exprs(i);
                idx.push_back(tir::make_const(tir::DataType::int64(), r));
                idx.push_back(tir::make_const(tir::DataType::int64(), col));
                return x(idx);
            };
            std::vector<int> all(size_t(M), 0);
            for (int k = 0; k < M; ++k) all[size_t(k)] = k;
            return det_of(m, all, all);
        },
        "T_det", "injective");
    return {y};
}

// One term of a Fourier sum in float64: x[n] (re, im) times
// e^(-+2 pi i k n / L), the real (part 0) or imaginary (part 1) component.
// The angle comes from k * n mod L in integers, so it stays exact for long
// signals; float64 keeps near-zero bins of large inputs within ONNX's atol.
Expr fourier_term(Expr re, Expr im, Expr k, Expr nn, int64_t L, bool inverse, Expr part) {
    const tir::DataType f64 = tir::DataType::float64();
    re = tir::cast(f64, re);
    im = tir::cast(f64, im);
    Expr kn = tir::cast(f64, tir::floormod(k * nn, tir::make_const(k.dtype(), L)));
    Expr theta = kn * tir::make_const(f64, 2.0 * M_PI / double(L));
    Expr cs = tir::Call::make(f64, "cos", {theta});
    Expr sn = tir::Call::make(f64, "sin", {theta});
    if (inverse) sn = -sn;
    // (re + i im)(cos - i sn) for the forward transform.
    Expr out_re = re * cs + im * sn;
    Expr out_im = im * cs - re * sn;
    return tir::select(part == tir::make_const(part.dtype(), 0), out_re, out_im);
}

// The float64 sums of a Fourier compute, rounded to float32.
te::Tensor to_float32(const te::Tensor& acc, const std::string& name) {
    return te::compute(
        acc.shape(),
        [&](const std::vector<Var>& i) {
            return tir::cast(tir::DataType::float32(), acc(as_exprs(i)));
        },
        name, "elemwise");
}

Tensors dft(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const auto& xs = x.shape();
    size_t axis = size_t(n.attr_int("axis", 1));
    bool inverse = n.attr_int("inverse", 0) != 0, complex = xs.back() == 2;
    // irfft (inverse one-sided, numpy's): the bins 0 .. L/2 stand for the
    // Hermitian spectrum, the others counted twice by symmetry.
    const bool irfft = inverse && n.attr_int("onesided", 0) != 0;
    int64_t N = xs[axis], L = n.attr_int("length", irfft ? 2 * (N - 1) : N);
    const int64_t terms = irfft ? std::min(N, L / 2 + 1) : std::min(N, L);
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            tir::IterVar r = te::reduce_axis(terms, "n");
            std::vector<Expr> idx = as_exprs(i);
            idx[axis] = r.var;
            idx.back() = tir::make_const(tir::DataType::int64(), 0);
            Expr re = x(idx);
            Expr im = c(re, 0);
            if (complex) {
                idx.back() = tir::make_const(tir::DataType::int64(), 1);
                im = x(idx);
            }
            Expr t = fourier_term(re, im, i[axis], r.var, L, inverse, i.back());
            if (inverse) t = t * c(t, 1.0 / double(L));
            if (irfft) {
                Expr k = r.var;
                Expr once = k == tir::make_const(k.dtype(), 0) ||
                            k * tir::make_const(k.dtype(), 2) == tir::make_const(k.dtype(), L);
                t = t * tir::select(once, c(t, 1.0), c(t, 2.0));
            }
            return te::sum(t, {r});
        },
        "dft_sum", "reduce");
    return {to_float32(y, "T_dft")};
}

Tensors stft(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 2);
    const te::Tensor& x = in[0];
    bool complex = x.shape().back() == 2, windowed = in.size() == 2;
    int64_t frame = n.attr_int("frame_length", 0), step = n.attr_int("frame_step", 1);
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            tir::IterVar r = te::reduce_axis(frame, "n");
            Expr pos = mul_const(i[1], step) + r.var;
            Expr zero = tir::make_const(tir::DataType::int64(), 0);
            Expr re = x(i[0], pos, zero);
            Expr im = complex ? x(i[0], pos, tir::make_const(tir::DataType::int64(), 1)) : c(re, 0);
            if (windowed) {
                Expr w = in[1](r.var);
                re = re * w;
                im = im * w;
            }
            return te::sum(fourier_term(re, im, i[2], r.var, frame, false, i[3]), {r});
        },
        "stft_sum", "reduce");
    return {to_float32(y, "T_stft")};
}

// bitwise_and / bitwise_or / bitwise_xor (numpy broadcasting) and bitwise_not
// of integers, in their dtype's width.
Tensors bitwise(const graph::Node& n, const Tensors& in, const Types& out) {
    const bool unary = n.op == "bitwise_not";
    check_arity(n, in, out, unary ? 1 : 2, unary ? 1 : 2);
    const auto& os = out[0].shape;
    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            Expr a = in[0](broadcast_index(idx, os, in[0].shape()));
            if (unary) return tir::bitwise_not(a);
            Expr b = in[1](broadcast_index(idx, os, in[1].shape()));
            if (n.op == "bitwise_and") return tir::bitwise_and(a, b);
            if (n.op == "bitwise_or") return tir::bitwise_or(a, b);
            return tir::bitwise_xor(a, b);
        },
        "T_" + n.op, "elemwise");
    return {y};
}

}  // namespace

void add_math_signal_computes(ComputeTable& t) {
    for (const char* op :
         {"tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"})
        t[op] = trig;
    t["nn.shrink"] = shrink;
    t["left_shift"] = shift;
    t["right_shift"] = shift;
    for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"})
        t[op] = bitwise;
    t["nn.lrn"] = lrn;
    t["det"] = det;
    t["dft"] = dft;
    t["stft"] = stft;
}

}  // namespace tessera::topi::detail
