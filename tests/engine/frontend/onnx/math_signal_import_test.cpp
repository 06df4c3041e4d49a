// The ONNX converters of onnx_math_signal.cpp and onnx_quantization.cpp on ONNX's node models with random
// non-zero data against naive C++ references (windows and MelWeightMatrix,
// whose outputs are import-time constants, against ONNX's expected outputs).
#include <algorithm>

#include "tests/engine/frontend/onnx/math_signal_test_util.h"

namespace tessera::elemx_test {
namespace {

std::string case_dir(const std::string& name) {
    return std::string(TESSERA_ONNX_TESTDATA) + "/node/" + name;
}

// The case's model, with shape operands frozen from its first data set when needed.
graph::Graph load_case(const std::string& name) {
    return driver::load_model_for_inputs(
        case_dir(name) + "/model.onnx",
        driver::test_data_files(case_dir(name) + "/test_data_set_0", "input"));
}

std::vector<NDArray> case_inputs(const std::string& name) {
    return driver::read_test_data(case_dir(name) + "/test_data_set_0", "input");
}

int count_ops(const graph::Graph& g, const std::string& op) {
    return int(std::count_if(g.nodes.begin(), g.nodes.end(),
                             [&](const graph::Node& n) { return n.op == op; }));
}

// One value of an integer or float array as double.
double at(const NDArray& a, int64_t i) {
    switch (a.dtype()) {
        case DType::Float32:
            return a.data<float>()[i];
        case DType::Float64:
            return a.data<double>()[i];
        case DType::Int64:
            return double(a.data<int64_t>()[i]);
        case DType::Int32:
            return a.data<int32_t>()[i];
        case DType::Int8:
            return a.data<int8_t>()[i];
        case DType::UInt8:
            return a.data<uint8_t>()[i];
        default:
            ADD_FAILURE() << "unexpected dtype";
            return 0;
    }
}

// Expects integer outputs equal to `want` (within `slack` steps).
void expect_ints(const NDArray& got, DType dtype, const std::vector<double>& want, double slack,
                 const std::string& what) {
    ASSERT_EQ(got.dtype(), dtype) << what;
    ASSERT_EQ(size_t(got.num_elements()), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i)
        EXPECT_LE(std::fabs(at(got, int64_t(i)) - want[i]), slack)
            << what << ": element " << i << " is " << at(got, int64_t(i)) << ", expected "
            << want[i];
}

double saturate(double v, DType t) {
    return t == DType::Int8 ? std::clamp(v, -128.0, 127.0) : std::clamp(v, 0.0, 255.0);
}

TEST(ElemxImport, HardmaxMarksTheFirstMaximumAlongTheAxis) {
    for (const char* name :
         {"test_hardmax_axis_1", "test_hardmax_axis_0", "test_hardmax_default_axis"}) {
        graph::Graph g = load_case(name);
        EXPECT_EQ(count_ops(g, "argmax"), 1) << name;
        NDArray x = uniform({3, 4, 5}, -1, 1, 5);
        for (int64_t i = 0; i < 60; i += 7) x.data<float>()[i + 1] = x.data<float>()[i];  // ties
        int axis = std::string(name) == "test_hardmax_axis_1"   ? 1
                   : std::string(name) == "test_hardmax_axis_0" ? 0
                                                                : 2;
        const int64_t dims[3] = {3, 4, 5}, strides[3] = {20, 5, 1};
        std::vector<double> want(60, 0.0);
        for (int64_t i = 0; i < 60; ++i) {
            int64_t pos = (i / strides[axis]) % dims[axis];
            if (pos != 0) continue;  // one scan per line along the axis
            int64_t best = 0;
            for (int64_t k = 1; k < dims[axis]; ++k)
                if (x.data<float>()[i + k * strides[axis]] >
                    x.data<float>()[i + best * strides[axis]])
                    best = k;
            want[size_t(i + best * strides[axis])] = 1.0;
        }
        expect_close(run_jit(g, {x}).at(0), want, 0, 0, name);
    }
}

TEST(ElemxImport, OneHotHandlesNegativeAndOutOfRangeIndices) {
    graph::Graph g = load_case("test_onehot_with_axis");  // indices (2, 2) float, axis 1
    std::vector<NDArray> given = case_inputs("test_onehot_with_axis");
    int64_t depth = int64_t(at(given[1], 0));
    double off = at(given[2], 0), on = at(given[2], 1);
    NDArray idx = NDArray::empty({DType::Float32, {2, 2}});
    const float vals[4] = {3.0f, -2.0f, float(depth), float(-depth - 1)};
    for (int i = 0; i < 4; ++i) idx.data<float>()[i] = vals[i];
    std::vector<double> want;
    for (int64_t a = 0; a < 2; ++a)
        for (int64_t d = 0; d < depth; ++d)
            for (int64_t b = 0; b < 2; ++b) {
                int64_t v = int64_t(vals[a * 2 + b]);
                if (v < 0) v += depth;
                want.push_back(v == d ? on : off);
            }
    expect_close(run_jit(g, {idx}).at(0), want, 0, 0, "onehot");
}

TEST(ElemxImport, EyeLikeIsAConstantWithAShiftedDiagonal) {
    graph::Graph g = load_case("test_eyelike_populate_off_main_diagonal");  // (4, 5), k = 1
    EXPECT_TRUE(g.nodes.empty());
    const graph::Value& out = g.values[size_t(g.outputs.at(0))];
    ASSERT_TRUE(out.is_constant());
    const float* p = out.constant->as<float>();
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 5; ++j) EXPECT_EQ(p[i * 5 + j], j == i + 1 ? 1.0f : 0.0f);
}

TEST(ElemxImport, MeanVarianceNormalizationOverAxes023) {
    graph::Graph g = load_case("test_mvn");  // (3, 3, 3, 1)
    NDArray x = uniform({3, 3, 3, 1}, -3, 3, 9);
    std::vector<double> want(27);
    for (int c = 0; c < 3; ++c) {
        double s = 0, s2 = 0;
        for (int n = 0; n < 3; ++n)
            for (int h = 0; h < 3; ++h) {
                double v = x.data<float>()[(n * 3 + c) * 3 + h];
                s += v;
                s2 += v * v;
            }
        double mean = s / 9, sd = std::sqrt(s2 / 9 - mean * mean);
        for (int n = 0; n < 3; ++n)
            for (int h = 0; h < 3; ++h) {
                int i = (n * 3 + c) * 3 + h;
                want[size_t(i)] = (x.data<float>()[i] - mean) / (sd + 1e-9);
            }
    }
    expect_close(run_jit(g, {x}).at(0), want, 1e-4, 1e-5, "mvn");
}

TEST(ElemxImport, WindowsAndMelWeightsMatchOnnxExpectedOutputs) {
    for (const char* name : {"test_hannwindow", "test_hannwindow_symmetric", "test_hammingwindow",
                             "test_hammingwindow_symmetric", "test_blackmanwindow",
                             "test_blackmanwindow_symmetric", "test_melweightmatrix"}) {
        graph::Graph g = load_case(name);
        const graph::Value& out = g.values[size_t(g.outputs.at(0))];
        ASSERT_TRUE(out.is_constant()) << name;
        NDArray got =
            NDArray::from_bytes(out.type, out.constant->bytes.data(), out.constant->bytes.size());
        NDArray want = driver::read_test_data(case_dir(name) + "/test_data_set_0", "output").at(0);
        // ONNX 1.12's expected windows are float32 computations off by ~5e-5: its tolerances.
        EXPECT_TRUE(runtime::allclose(got, want, 1e-3, 1e-5)) << name;
    }
}

TEST(ElemxImport, HannWindowIsSineSquaredPeriodicOrSymmetric) {
    for (const char* name : {"test_hannwindow", "test_hannwindow_symmetric"}) {
        graph::Graph g = load_case(name);  // size 10
        const graph::Value& out = g.values[size_t(g.outputs.at(0))];
        ASSERT_TRUE(out.is_constant());
        NDArray got =
            NDArray::from_bytes(out.type, out.constant->bytes.data(), out.constant->bytes.size());
        double n = std::string(name) == "test_hannwindow" ? 10 : 9;
        std::vector<double> want;
        for (int i = 0; i < 10; ++i) want.push_back(std::pow(std::sin(M_PI * i / n), 2));
        expect_close(got, want, 1e-6, 1e-7, name);
    }
}

TEST(ElemxImport, QuantizeLinearPerAxisRoundsHalfToEvenAndSaturates) {
    graph::Graph g = load_case("test_quantizelinear_axis");  // x (1, 3, 3, 2), scale/zp (3)
    std::vector<NDArray> given = case_inputs("test_quantizelinear_axis");
    NDArray x = uniform({1, 3, 3, 2}, -300, 600, 13);
    for (int i = 0; i < 18; i += 3)  // exact half-way cases
        x.data<float>()[i] = float((double(i) - 4.5) * at(given[1], i / 6));
    std::vector<double> want;
    for (int64_t i = 0; i < 18; ++i) {
        int64_t c = i / 6;
        double q = std::nearbyint(double(x.data<float>()[i] / float(at(given[1], c))));
        want.push_back(saturate(q + at(given[2], c), given[2].dtype()));
    }
    std::vector<NDArray> in = {x, given[1], given[2]};
    expect_ints(run_jit(g, driver::match_test_inputs(g, in)).at(0), given[2].dtype(), want, 0,
                "quantize");
}

TEST(ElemxImport, DequantizeLinearPerAxis) {
    graph::Graph g = load_case("test_dequantizelinear_axis");
    std::vector<NDArray> given = case_inputs("test_dequantizelinear_axis");
    NDArray x = uniform_int<uint8_t>(DType::UInt8, {1, 3, 3, 2}, 0, 255, 14);
    std::vector<double> want;
    for (int64_t i = 0; i < 18; ++i)
        want.push_back((at(x, i) - at(given[2], i / 6)) * at(given[1], i / 6));
    std::vector<NDArray> in = {x, given[1], given[2]};
    expect_close(run_jit(g, driver::match_test_inputs(g, in)).at(0), want, 1e-6, 1e-6,
                 "dequantize");
}

TEST(ElemxImport, DynamicQuantizeLinearScaleZeroPointAndValues) {
    graph::Graph g = load_case("test_dynamicquantizelinear");  // x (6)
    for (uint64_t seed : {15, 16, 17}) {
        NDArray x = uniform({6}, seed == 16 ? 0.5 : -4, seed == 17 ? -0.5 : 3, seed);
        float lo = 0, hi = 0;
        for (int i = 0; i < 6; ++i) {
            lo = std::min(lo, x.data<float>()[i]);
            hi = std::max(hi, x.data<float>()[i]);
        }
        float scale = (hi - lo) / 255.0f;
        double zp = std::clamp(std::nearbyint(double(-lo / scale)), 0.0, 255.0);
        std::vector<double> want;
        for (int i = 0; i < 6; ++i)
            want.push_back(
                std::clamp(std::nearbyint(double(x.data<float>()[i] / scale)) + zp, 0.0, 255.0));
        std::vector<NDArray> out = run_jit(g, {x});
        ASSERT_EQ(out.size(), 3u);
        expect_ints(out[0], DType::UInt8, want, 0, "y");
        expect_close(out[1], {scale}, 1e-6, 0, "y_scale");
        expect_ints(out[2], DType::UInt8, {zp}, 0, "y_zero_point");
    }
}

TEST(ElemxImport, MatMulIntegerSubtractsZeroPointsExactly) {
    graph::Graph g = load_case("test_matmulinteger");  // A (4, 3), B (3, 2) uint8, zps (1)
    NDArray a = uniform_int<uint8_t>(DType::UInt8, {4, 3}, 0, 255, 18);
    NDArray b = uniform_int<uint8_t>(DType::UInt8, {3, 2}, 0, 255, 19);
    NDArray azp = uniform_int<uint8_t>(DType::UInt8, {1}, 0, 255, 20);
    NDArray bzp = uniform_int<uint8_t>(DType::UInt8, {1}, 0, 255, 21);
    std::vector<double> want;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j) {
            int64_t acc = 0;
            for (int k = 0; k < 3; ++k)
                acc += (int64_t(at(a, i * 3 + k)) - int64_t(at(azp, 0))) *
                       (int64_t(at(b, k * 2 + j)) - int64_t(at(bzp, 0)));
            want.push_back(double(acc));
        }
    expect_ints(run_jit(g, {a, b, azp, bzp}).at(0), DType::Int32, want, 0, "matmulinteger");
}

// Naive 2-D convolution of (x - xzp) and (w - wzp), zero padded, one channel.
std::vector<double> conv_ref(const NDArray& x, double xzp, const NDArray& w, double wzp, int64_t H,
                             int64_t W, int64_t K, int64_t pad) {
    std::vector<double> out;
    int64_t oh = H + 2 * pad - K + 1, ow = W + 2 * pad - K + 1;
    for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
            double acc = 0;
            for (int64_t r = 0; r < K; ++r)
                for (int64_t s = 0; s < K; ++s) {
                    int64_t h = i + r - pad, c = j + s - pad;
                    if (h < 0 || h >= H || c < 0 || c >= W) continue;
                    acc += (at(x, h * W + c) - xzp) * (at(w, r * K + s) - wzp);
                }
            out.push_back(acc);
        }
    return out;
}

TEST(ElemxImport, ConvIntegerWithPaddingPadsTheCenteredInputWithZeros) {
    graph::Graph g =
        load_case("test_convinteger_with_padding");  // x (1,1,3,3), w (1,1,2,2), pads 1
    NDArray x = uniform_int<uint8_t>(DType::UInt8, {1, 1, 3, 3}, 0, 255, 22);
    NDArray w = uniform_int<uint8_t>(DType::UInt8, {1, 1, 2, 2}, 0, 255, 23);
    NDArray zp = uniform_int<uint8_t>(DType::UInt8, {}, 1, 255, 24);
    expect_ints(run_jit(g, {x, w, zp}).at(0), DType::Int32,
                conv_ref(x, at(zp, 0), w, 0, 3, 3, 2, 1), 0, "convinteger");
}

// Large same-sign operands make the sums exceed 2^24: float32 alone would round them.
TEST(ElemxImport, LongIntegerReductionsStayExact) {
    const std::string dir = std::string(TESSERA_SOURCE_DIR) + "/tests/data/onnx_math_signal/";
    graph::Graph g = driver::load_model(dir + "matmulinteger_k600.onnx");
    NDArray a = uniform_int<uint8_t>(DType::UInt8, {3, 600}, 200, 255, 31);
    NDArray b = uniform_int<uint8_t>(DType::UInt8, {600, 5}, 200, 255, 32);
    NDArray azp = uniform_int<uint8_t>(DType::UInt8, {}, 0, 5, 33);
    NDArray bzp = uniform_int<uint8_t>(DType::UInt8, {}, 0, 5, 34);
    std::vector<double> want;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j) {
            int64_t acc = 0;
            for (int k = 0; k < 600; ++k)
                acc += (int64_t(at(a, i * 600 + k)) - int64_t(at(azp, 0))) *
                       (int64_t(at(b, k * 5 + j)) - int64_t(at(bzp, 0)));
            want.push_back(double(acc));
        }
    EXPECT_GT(want[0], double(1 << 24));
    expect_ints(run_jit(g, {a, b, azp, bzp}).at(0), DType::Int32, want, 0, "matmulinteger k=600");

    g = driver::load_model(dir + "convinteger_k360.onnx");  // x (1,40,5,5), w (3,40,3,3), pads 1
    NDArray x = uniform_int<uint8_t>(DType::UInt8, {1, 40, 5, 5}, 230, 255, 35);
    NDArray w = uniform_int<uint8_t>(DType::UInt8, {3, 40, 3, 3}, 230, 255, 36);
    NDArray xzp = uniform_int<uint8_t>(DType::UInt8, {}, 0, 5, 37);
    want.clear();
    for (int m = 0; m < 3; ++m)
        for (int i = 0; i < 5; ++i)
            for (int j = 0; j < 5; ++j) {
                int64_t acc = 0;
                for (int c = 0; c < 40; ++c)
                    for (int r = 0; r < 3; ++r)
                        for (int q = 0; q < 3; ++q) {
                            int h = i + r - 1, v = j + q - 1;
                            if (h < 0 || h >= 5 || v < 0 || v >= 5) continue;
                            acc += (int64_t(at(x, (c * 5 + h) * 5 + v)) - int64_t(at(xzp, 0))) *
                                   int64_t(at(w, ((m * 40 + c) * 3 + r) * 3 + q));
                        }
                want.push_back(double(acc));
            }
    EXPECT_GT(want[6], double(1 << 24));  // an interior output sums all 360 terms
    expect_ints(run_jit(g, {x, w, xzp}).at(0), DType::Int32, want, 0, "convinteger k=360");
}

TEST(ElemxImport, QLinearMatMulRequantizesTheIntegerProduct) {
    graph::Graph g = load_case("test_qlinearmatmul_3D");  // a (2,2,4), b (2,4,3)
    std::vector<NDArray> given = case_inputs("test_qlinearmatmul_3D");
    NDArray a = uniform_int<uint8_t>(DType::UInt8, {2, 2, 4}, 0, 255, 25);
    NDArray b = uniform_int<uint8_t>(DType::UInt8, {2, 4, 3}, 0, 255, 26);
    float m = float(at(given[1], 0)) * float(at(given[4], 0)) / float(at(given[6], 0));
    std::vector<double> want;
    for (int bt = 0; bt < 2; ++bt)
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 3; ++j) {
                double acc = 0;
                for (int k = 0; k < 4; ++k)
                    acc += (at(a, (bt * 2 + i) * 4 + k) - at(given[2], 0)) *
                           (at(b, (bt * 4 + k) * 3 + j) - at(given[5], 0));
                want.push_back(saturate(std::nearbyint(double(float(acc) * m)) + at(given[7], 0),
                                        DType::UInt8));
            }
    std::vector<NDArray> in = {a, given[1], given[2], b, given[4], given[5], given[6], given[7]};
    // One step of slack: the float32 product of scales may round a tie either way.
    expect_ints(run_jit(g, driver::match_test_inputs(g, in)).at(0), DType::UInt8, want, 1,
                "qlinearmatmul");
}

TEST(ElemxImport, QLinearConvRequantizesTheIntegerConvolution) {
    graph::Graph g = load_case("test_qlinearconv");  // x (1,1,7,7), w (1,1,1,1)
    std::vector<NDArray> given = case_inputs("test_qlinearconv");
    NDArray x = uniform_int<uint8_t>(DType::UInt8, {1, 1, 7, 7}, 0, 255, 27);
    NDArray w = uniform_int<uint8_t>(DType::UInt8, {1, 1, 1, 1}, 1, 255, 28);
    float m = float(at(given[1], 0)) * float(at(given[4], 0)) / float(at(given[6], 0));
    std::vector<double> want;
    for (double acc : conv_ref(x, at(given[2], 0), w, at(given[5], 0), 7, 7, 1, 0))
        want.push_back(
            saturate(std::nearbyint(double(float(acc) * m)) + at(given[7], 0), DType::UInt8));
    std::vector<NDArray> in = {x, given[1], given[2], w, given[4], given[5], given[6], given[7]};
    expect_ints(run_jit(g, driver::match_test_inputs(g, in)).at(0), DType::UInt8, want, 1,
                "qlinearconv");
}

}  // namespace
}  // namespace tessera::elemx_test
