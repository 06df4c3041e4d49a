// The extra graph ops (trigonometric intrinsics, nn.shrink, bit shifts,
// nn.lrn, det, dft, stft) on random non-zero data: the JIT and the loop-IR
// interpreter against naive C++ references.
#include <complex>

#include "engine/tir/printer.h"
#include "tests/engine/frontend/onnx/math_signal_test_util.h"

namespace tessera::elemx_test {
namespace {

using Shape = std::vector<int64_t>;

// Runs g on `inputs` through the JIT and the interpreter; both must match `want`.
void expect_both(const graph::Graph& g, const std::vector<NDArray>& inputs,
                 const std::vector<double>& want, double rtol, double atol,
                 const std::string& what) {
    expect_close(run_jit(g, inputs).at(0), want, rtol, atol, what + " (jit)");
    expect_close(driver::interpret_graph(g, inputs).at(0), want, rtol, atol,
                 what + " (interpreter)");
}

struct TrigCase {
    const char* op;
    double lo, hi;
    double (*ref)(double);
};

// Lengths around the vector widths (4, 8, 16 lanes) so vector loops get tails.
TEST(ElemxIntrinsics, TrigMatchesLibmInJitAndInterpreterWithVectorTails) {
    const TrigCase cases[] = {
        {"tan", -1.3, 1.3, [](double x) { return std::tan(x); }},
        {"asin", -0.97, 0.97, [](double x) { return std::asin(x); }},
        {"acos", -0.97, 0.97, [](double x) { return std::acos(x); }},
        {"atan", -4, 4, [](double x) { return std::atan(x); }},
        {"sinh", -3, 3, [](double x) { return std::sinh(x); }},
        {"cosh", -3, 3, [](double x) { return std::cosh(x); }},
        {"asinh", -4, 4, [](double x) { return std::asinh(x); }},
        {"acosh", 1.05, 6, [](double x) { return std::acosh(x); }},
        {"atanh", -0.95, 0.95, [](double x) { return std::atanh(x); }},
    };
    const Shape shapes[] = {{1}, {7}, {16}, {37}, {3, 67}};
    uint64_t seed = 1;
    for (const TrigCase& c : cases) {
        for (const Shape& s : shapes) {
            graph::Graph g = one_node(c.op, {{DType::Float32, s}});
            NDArray x = uniform(s, c.lo, c.hi, seed++);
            std::vector<double> want;
            for (int64_t i = 0; i < x.num_elements(); ++i)
                want.push_back(c.ref(x.data<float>()[i]));
            expect_both(g, {x}, want, 2e-6, 1e-6,
                        std::string(c.op) + " n=" + std::to_string(x.num_elements()));
        }
    }
    // The long rows do run as vector loops (the intrinsic is called per lane).
    std::shared_ptr<driver::CompiledModel> m =
        driver::build(one_node("atanh", {{DType::Float32, {3, 67}}}));
    ASSERT_EQ(m->kernels.size(), 1u);
    EXPECT_NE(tir::print(m->kernels[0]).find("vectorized"), std::string::npos)
        << tir::print(m->kernels[0]);
}

TEST(ElemxOps, ShrinkSubtractsBiasOutsideTheBand) {
    graph::Graph g =
        one_node("nn.shrink", {{DType::Float32, {5, 9}}}, {{"lambd", 0.7}, {"bias", 0.3}});
    NDArray x = uniform({5, 9}, -2, 2, 11);
    std::vector<double> want;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
        double v = x.data<float>()[i];
        want.push_back(v < -0.7 ? v + 0.3 : v > 0.7 ? v - 0.3 : 0.0);
    }
    expect_both(g, {x}, want, 1e-6, 1e-7, "shrink");
}

TEST(ElemxOps, BitShiftsOfUint8WrapAndGiveZeroPastTheWidth) {
    for (const char* op : {"left_shift", "right_shift"}) {
        graph::Graph g = one_node(op, {{DType::UInt8, {4, 5}}, {DType::UInt8, {5}}});
        NDArray x = uniform_int<uint8_t>(DType::UInt8, {4, 5}, 1, 255, 3);
        NDArray y = uniform_int<uint8_t>(DType::UInt8, {5}, 0, 9, 4);
        bool left = std::string(op) == "left_shift";
        for (const auto& got :
             {run_jit(g, {x, y}).at(0), driver::interpret_graph(g, {x, y}).at(0)}) {
            ASSERT_EQ(got.dtype(), DType::UInt8);
            for (int64_t i = 0; i < 20; ++i) {
                unsigned a = x.data<uint8_t>()[i], b = y.data<uint8_t>()[i % 5];
                unsigned want = b >= 8 ? 0 : uint8_t(left ? a << b : a >> b);
                EXPECT_EQ(unsigned(got.data<uint8_t>()[i]), want) << op << " " << a << ", " << b;
            }
        }
    }
}

// Unsigned ONNX tensors widened to signed types at the graph boundary.
TEST(ElemxOps, BitShiftsOfInt32WrapShiftArithmeticallyAndGiveZeroPastTheWidth) {
    for (const char* op : {"left_shift", "right_shift"}) {
        graph::Graph g = one_node(op, {{DType::Int32, {40}}, {DType::Int32, {40}}});
        NDArray x = uniform_int<int32_t>(DType::Int32, {40}, -100000, 100000, 5);
        NDArray y = uniform_int<int32_t>(DType::Int32, {40}, 0, 34, 6);
        y.data<int32_t>()[0] = 31;
        y.data<int32_t>()[1] = 30;
        bool left = std::string(op) == "left_shift";
        for (const auto& got :
             {run_jit(g, {x, y}).at(0), driver::interpret_graph(g, {x, y}).at(0)}) {
            ASSERT_EQ(got.dtype(), DType::Int32);
            for (int64_t i = 0; i < 40; ++i) {
                int32_t a = x.data<int32_t>()[i], b = y.data<int32_t>()[i];
                int32_t want = b >= 32 ? 0 : left ? int32_t(uint32_t(a) << b) : a >> b;
                EXPECT_EQ(got.data<int32_t>()[i], want) << op << " " << a << ", " << b;
            }
        }
    }
}

TEST(ElemxOps, LrnNormalizesOverAChannelWindow) {
    const Shape s = {2, 5, 3, 4};
    for (int64_t size : {3, 4}) {
        double alpha = 0.6, beta = 0.75, bias = 1.5;
        graph::Graph g =
            one_node("nn.lrn", {{DType::Float32, s}},
                     {{"size", size}, {"alpha", alpha}, {"beta", beta}, {"bias", bias}});
        NDArray x = uniform(s, -2, 2, 20 + uint64_t(size));
        const float* p = x.data<float>();
        std::vector<double> want;
        int64_t lo = (size - 1) / 2, hi = size - 1 - lo, hw = 12;
        for (int64_t n = 0; n < 2; ++n)
            for (int64_t c = 0; c < 5; ++c)
                for (int64_t k = 0; k < hw; ++k) {
                    double sq = 0;
                    for (int64_t j = std::max<int64_t>(0, c - lo);
                         j <= std::min<int64_t>(4, c + hi); ++j)
                        sq += double(p[(n * 5 + j) * hw + k]) * p[(n * 5 + j) * hw + k];
                    want.push_back(p[(n * 5 + c) * hw + k] /
                                   std::pow(bias + alpha / double(size) * sq, beta));
                }
        expect_both(g, {x}, want, 1e-5, 1e-6, "lrn size " + std::to_string(size));
    }
}

// Determinant by Gaussian elimination with partial pivoting, in double.
double det_ref(std::vector<double> a, int m) {
    double d = 1;
    for (int k = 0; k < m; ++k) {
        int piv = k;
        for (int r = k + 1; r < m; ++r)
            if (std::fabs(a[size_t(r * m + k)]) > std::fabs(a[size_t(piv * m + k)])) piv = r;
        if (a[size_t(piv * m + k)] == 0) return 0;
        if (piv != k) {
            for (int c = 0; c < m; ++c) std::swap(a[size_t(k * m + c)], a[size_t(piv * m + c)]);
            d = -d;
        }
        d *= a[size_t(k * m + k)];
        for (int r = k + 1; r < m; ++r) {
            double f = a[size_t(r * m + k)] / a[size_t(k * m + k)];
            for (int c = k; c < m; ++c) a[size_t(r * m + c)] -= f * a[size_t(k * m + c)];
        }
    }
    return d;
}

TEST(ElemxOps, DetMatchesGaussianEliminationUpTo5x5) {
    for (int m = 1; m <= 5; ++m) {
        graph::Graph g = one_node("det", {{DType::Float32, {3, m, m}}});
        NDArray x = uniform({3, m, m}, -2, 2, 30 + uint64_t(m));
        std::vector<double> want;
        for (int b = 0; b < 3; ++b) {
            std::vector<double> a(size_t(m * m));
            for (int i = 0; i < m * m; ++i) a[size_t(i)] = x.data<float>()[b * m * m + i];
            want.push_back(det_ref(a, m));
        }
        expect_both(g, {x}, want, 1e-4, 1e-5, "det " + std::to_string(m));
    }
}

TEST(ElemxOps, DetRejectsLargeMatrices) {
    EXPECT_THROW(one_node("det", {{DType::Float32, {6, 6}}}), UserError);
}

// Naive DFT of complex rows: out[k] = sum_n x[n] e^(-+2 pi i k n / L) (/ L when inverse).
std::vector<std::complex<double>> dft_ref(const std::vector<std::complex<double>>& x, int64_t L,
                                          int64_t bins, bool inverse) {
    std::vector<std::complex<double>> out;
    for (int64_t k = 0; k < bins; ++k) {
        std::complex<double> acc = 0;
        for (int64_t n = 0; n < std::min<int64_t>(L, int64_t(x.size())); ++n)
            acc += x[size_t(n)] *
                   std::polar(1.0, (inverse ? 2 : -2) * M_PI * double(k * n) / double(L));
        out.push_back(inverse ? acc / double(L) : acc);
    }
    return out;
}

struct DftCase {
    Shape shape;  // (batch, signal, other, 1|2)
    int64_t length;
    bool inverse, onesided;
};

TEST(ElemxOps, DftMatchesNaiveSumsForRealComplexPaddedAndOnesided) {
    const DftCase cases[] = {
        {{2, 6, 3, 1}, 6, false, false}, {{2, 5, 2, 2}, 5, true, false},
        {{1, 7, 2, 1}, 7, false, true},  {{1, 5, 1, 2}, 8, false, false},
        {{2, 9, 1, 2}, 4, false, true},
    };
    uint64_t seed = 40;
    for (const DftCase& c : cases) {
        graph::Graph g = one_node("dft", {{DType::Float32, c.shape}},
                                  {{"axis", int64_t(1)},
                                   {"inverse", int64_t(c.inverse)},
                                   {"onesided", int64_t(c.onesided)},
                                   {"length", c.length}});
        NDArray x = uniform(c.shape, -1, 1, seed++);
        const Shape& os = g.values[size_t(g.outputs[0])].type.shape;
        int64_t N = c.shape[1], M = c.shape[2], ch = c.shape[3], bins = os[1];
        std::vector<double> want(size_t(os[0] * bins * M * 2));
        for (int64_t b = 0; b < c.shape[0]; ++b)
            for (int64_t m = 0; m < M; ++m) {
                std::vector<std::complex<double>> row;
                for (int64_t n = 0; n < N; ++n) {
                    const float* p = x.data<float>() + ((b * N + n) * M + m) * ch;
                    row.emplace_back(p[0], ch == 2 ? p[1] : 0.0f);
                }
                auto y = dft_ref(row, c.length, bins, c.inverse);
                for (int64_t k = 0; k < bins; ++k) {
                    want[size_t(((b * bins + k) * M + m) * 2)] = y[size_t(k)].real();
                    want[size_t(((b * bins + k) * M + m) * 2 + 1)] = y[size_t(k)].imag();
                }
            }
        expect_both(g, {x}, want, 1e-4, 1e-5, "dft length " + std::to_string(c.length));
    }
}

// irfft (inverse one-sided, numpy's): the bins are the first half of a
// Hermitian spectrum of length L (cropped or zero-padded to L / 2 + 1, the
// imaginary parts of DC and Nyquist ignored); the output is L real samples.
TEST(ElemxOps, InverseOnesidedDftMatchesTheHermitianSpectrumsInverse) {
    struct Case {
        Shape shape;     // (batch, bins, other, 2)
        int64_t length;  // 0: the default, 2 (bins - 1)
    };
    const Case cases[] = {{{1, 5, 2, 2}, 8}, {{2, 4, 1, 2}, 7}, {{1, 6, 1, 2}, 6}, {{1, 5, 3, 2}, 0}};
    uint64_t seed = 60;
    for (const Case& c : cases) {
        std::map<std::string, graph::AttrValue> attrs = {
            {"axis", int64_t(1)}, {"inverse", int64_t(1)}, {"onesided", int64_t(1)}};
        if (c.length > 0) attrs["length"] = c.length;
        graph::Graph g = one_node("dft", {{DType::Float32, c.shape}}, attrs);
        const int64_t N = c.shape[1], M = c.shape[2], L = c.length > 0 ? c.length : 2 * (N - 1);
        const Shape& os = g.values[size_t(g.outputs[0])].type.shape;
        ASSERT_EQ(os, (Shape{c.shape[0], L, M, 1}));
        NDArray x = uniform(c.shape, -1, 1, seed++);
        std::vector<double> want(size_t(c.shape[0] * L * M));
        for (int64_t b = 0; b < c.shape[0]; ++b)
            for (int64_t m = 0; m < M; ++m) {
                std::vector<std::complex<double>> full(static_cast<size_t>(L));
                for (int64_t k = 0; k <= L / 2; ++k) {
                    std::complex<double> v = 0;
                    if (k < N) {
                        const float* p = x.data<float>() + ((b * N + k) * M + m) * 2;
                        v = {p[0], (k == 0 || 2 * k == L) ? 0.0 : p[1]};
                    }
                    full[size_t(k)] = v;
                    if (k > 0 && k < L - k) full[size_t(L - k)] = std::conj(v);
                }
                auto y = dft_ref(full, L, L, true);
                for (int64_t t = 0; t < L; ++t) {
                    EXPECT_NEAR(y[size_t(t)].imag(), 0.0, 1e-9);
                    want[size_t((b * L + t) * M + m)] = y[size_t(t)].real();
                }
            }
        expect_both(g, {x}, want, 1e-4, 1e-5, "irfft length " + std::to_string(L));
    }
}

TEST(ElemxOps, StftMatchesWindowedFrameDfts) {
    for (bool windowed : {true, false}) {
        const int64_t len = 40, frame = 8, step = 6, ch = windowed ? 1 : 2;
        bool onesided = windowed;
        std::vector<TensorType> types = {{DType::Float32, {2, len, ch}}};
        if (windowed) types.push_back({DType::Float32, {frame}});
        graph::Graph g = one_node(
            "stft", types,
            {{"frame_step", step}, {"frame_length", frame}, {"onesided", int64_t(onesided)}});
        std::vector<NDArray> in = {uniform({2, len, ch}, -1, 1, 50)};
        if (windowed) in.push_back(uniform({frame}, 0.1, 1, 51));
        const Shape& os = g.values[size_t(g.outputs[0])].type.shape;
        int64_t frames = os[1], bins = os[2];
        ASSERT_EQ(frames, (len - frame) / step + 1);
        std::vector<double> want;
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t f = 0; f < frames; ++f) {
                std::vector<std::complex<double>> row;
                for (int64_t n = 0; n < frame; ++n) {
                    const float* p = in[0].data<float>() + (b * len + f * step + n) * ch;
                    double w = windowed ? in[1].data<float>()[n] : 1.0;
                    row.emplace_back(p[0] * w, ch == 2 ? p[1] * w : 0.0);
                }
                for (const auto& v : dft_ref(row, frame, bins, false)) {
                    want.push_back(v.real());
                    want.push_back(v.imag());
                }
            }
        expect_both(g, in, want, 1e-4, 1e-5, windowed ? "stft windowed" : "stft complex");
    }
}

}  // namespace
}  // namespace tessera::elemx_test
