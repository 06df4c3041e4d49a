// Training-mode ops against naive C++ references on random data:
// BatchNormalization with training_mode=1, Dropout in training mode, and the
// ai.onnx.preview.training.Gradient op (checked against central differences
// of a double-precision forward pass).
#include <cmath>
#include <functional>

#include "tests/engine/frontend/onnx/loss_test_util.h"

namespace tessera::loss_test {
namespace {

using graph::DType;
using index_test::random_floats;
using index_test::user_error;

TEST(BatchNormalization, TrainingModeUsesBatchStatisticsAndUpdatesRunningStats) {
    const Ints xs = {3, 4, 2, 5};
    const double eps = 0.01, momentum = 0.7;
    NDArray x = random_floats(xs, 11, -2.f, 3.f);
    NDArray scale = random_floats({4}, 12), bias = random_floats({4}, 13);
    NDArray mean = random_floats({4}, 14), var = random_floats({4}, 15, 0.5f, 2.f);
    GraphModel m(15);
    m.input("x", DType::Float32, xs);
    for (const char* p : {"s", "b", "m", "v"}) m.input(p, DType::Float32, {4});
    m.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "rm", "rv"})
        .attr("training_mode", int64_t(1))
        .attr("epsilon", eps)
        .attr("momentum", momentum);
    m.output("y", DType::Float32, xs).output("rm", DType::Float32, {4}).output("rv", DType::Float32, {4});
    std::vector<NDArray> got = index_test::run(m.load("bn_train"), {x, scale, bias, mean, var});
    ASSERT_EQ(got.size(), 3u);

    std::vector<double> xv = values(x), y(xv.size()), rm, rv;
    const int64_t n = xs[0], c = xs[1], hw = xs[2] * xs[3];
    for (int64_t k = 0; k < c; ++k) {
        double s = 0, sq = 0;
        for (int64_t a = 0; a < n; ++a)
            for (int64_t i = 0; i < hw; ++i) s += xv[size_t((a * c + k) * hw + i)];
        double mu = s / double(n * hw);
        for (int64_t a = 0; a < n; ++a)
            for (int64_t i = 0; i < hw; ++i) {
                double d = xv[size_t((a * c + k) * hw + i)] - mu;
                sq += d * d;
            }
        double v = sq / double(n * hw);  // population variance
        for (int64_t a = 0; a < n; ++a)
            for (int64_t i = 0; i < hw; ++i) {
                size_t o = size_t((a * c + k) * hw + i);
                y[o] = (xv[o] - mu) / std::sqrt(v + eps) * scale.data<float>()[k] + bias.data<float>()[k];
            }
        rm.push_back(mean.data<float>()[k] * momentum + mu * (1 - momentum));
        rv.push_back(var.data<float>()[k] * momentum + v * (1 - momentum));
    }
    index_test::expect_close(got[0], y, 1e-4);
    index_test::expect_close(got[1], rm, 1e-5);
    index_test::expect_close(got[2], rv, 1e-5);
}

TEST(Dropout, TrainingModeWithRandomMaskIsAClearErrorAndRatioZeroIsIdentity) {
    NDArray x = random_floats({3, 4}, 21);
    auto model = [&](float ratio) {
        GraphModel m(13);
        m.input("x", DType::Float32, {3, 4});
        m.constant("r", index_test::floats({}, {ratio}));
        NDArray t = NDArray::empty({DType::Bool, {}});
        t.data<uint8_t>()[0] = 1;
        m.constant("t", t);
        m.node("Dropout", {"x", "r", "t"}, {"y"}).output("y", DType::Float32, {3, 4});
        return m;
    };
    std::string msg = user_error([&] { model(0.5f).load("dropout_train"); });
    EXPECT_NE(msg.find("node 'n0' (op Dropout): random dropout mask in training mode is not "
                       "reproducible"),
              std::string::npos)
        << msg;
    std::vector<NDArray> got = index_test::run(model(0.f).load("dropout_zero"), {x});
    index_test::expect_close(got[0], values(x), 0);
}

// Central differences of f at x (double precision).
std::vector<double> numeric_gradient(const std::function<double(const std::vector<double>&)>& f,
                                     std::vector<double> x) {
    std::vector<double> g(x.size());
    const double h = 1e-6;
    for (size_t i = 0; i < x.size(); ++i) {
        double keep = x[i];
        x[i] = keep + h;
        double up = f(x);
        x[i] = keep - h;
        double down = f(x);
        x[i] = keep;
        g[i] = (up - down) / (2 * h);
    }
    return g;
}

TEST(Gradient, ReverseModeThroughBroadcastingArithmeticMatchesCentralDifferences) {
    // y = tanh((a * b - a) / b + exp(a)) summed by the seed of ones; a (2, 3), b (3).
    const Ints as = {2, 3}, bs = {3};
    NDArray a = random_floats(as, 31, -1.f, 1.f);
    NDArray b = random_floats(bs, 32, 0.5f, 1.5f);
    GraphModel m(13);
    m.domain("ai.onnx.preview.training", 1);
    m.input("a", DType::Float32, as).input("b", DType::Float32, bs);
    m.node("Mul", {"a", "b"}, {"ab"}).node("Sub", {"ab", "a"}, {"d"});
    m.node("Div", {"d", "b"}, {"q"}).node("Exp", {"a"}, {"e"});
    m.node("Add", {"q", "e"}, {"s"}).node("Tanh", {"s"}, {"y"});
    m.node("Gradient", {"a", "b"}, {"da", "db"}, "ai.onnx.preview.training")
        .attr("xs", std::vector<std::string>{"a", "b"})
        .attr("y", std::string("y"));
    m.output("y", DType::Float32, as).output("da", DType::Float32, as).output("db", DType::Float32, bs);
    std::vector<NDArray> got = index_test::run(m.load("grad_arith"), {a, b});
    ASSERT_EQ(got.size(), 3u);
    ASSERT_EQ(got[1].shape(), as);
    ASSERT_EQ(got[2].shape(), bs);

    auto forward = [](const std::vector<double>& av, const std::vector<double>& bv) {
        double sum = 0;
        for (size_t i = 0; i < 2; ++i)
            for (size_t j = 0; j < 3; ++j) {
                double x = av[i * 3 + j], z = bv[j];
                sum += std::tanh((x * z - x) / z + std::exp(x));
            }
        return sum;
    };
    std::vector<double> av = values(a), bv = values(b);
    auto want_a = numeric_gradient([&](const std::vector<double>& v) { return forward(v, bv); }, av);
    auto want_b = numeric_gradient([&](const std::vector<double>& v) { return forward(av, v); }, bv);
    index_test::expect_close(got[1], want_a, 1e-4);
    index_test::expect_close(got[2], want_b, 1e-4);
}

TEST(Gradient, MatMulReluReduceAndUnusedInput) {
    // y = ReduceMean(Relu(a @ w), axis 1); c does not reach y: its gradient is zero.
    const Ints as = {3, 4}, ws = {4, 2};
    NDArray a = random_floats(as, 41), w = random_floats(ws, 42), c = random_floats({2}, 43);
    GraphModel m(13);
    m.domain("ai.onnx.preview.training", 1);
    m.input("a", DType::Float32, as).input("w", DType::Float32, ws).input("c", DType::Float32, {2});
    m.node("MatMul", {"a", "w"}, {"p"}).node("Relu", {"p"}, {"r"});
    m.node("ReduceMean", {"r"}, {"y"}).attr("keepdims", int64_t(0));
    m.node("Gradient", {"a", "w", "c"}, {"da", "dw", "dc"}, "ai.onnx.preview.training")
        .attr("xs", std::vector<std::string>{"a", "w", "c"})
        .attr("y", std::string("y"));
    m.output("da", DType::Float32, as).output("dw", DType::Float32, ws).output("dc", DType::Float32, {2});
    std::vector<NDArray> got = index_test::run(m.load("grad_matmul"), {a, w, c});
    ASSERT_EQ(got.size(), 3u);
    auto forward = [](const std::vector<double>& av, const std::vector<double>& wv) {
        double sum = 0;
        for (size_t i = 0; i < 3; ++i)
            for (size_t j = 0; j < 2; ++j) {
                double p = 0;
                for (size_t k = 0; k < 4; ++k) p += av[i * 4 + k] * wv[k * 2 + j];
                sum += std::max(p, 0.0);
            }
        return sum / 6.0;
    };
    std::vector<double> av = values(a), wv = values(w);
    auto want_a = numeric_gradient([&](const std::vector<double>& v) { return forward(v, wv); }, av);
    auto want_w = numeric_gradient([&](const std::vector<double>& v) { return forward(av, v); }, wv);
    index_test::expect_close(got[0], want_a, 1e-4);
    index_test::expect_close(got[1], want_w, 1e-4);
    index_test::expect_close(got[2], {0.0, 0.0}, 0);
}

TEST(Gradient, OpWithoutGradientRuleIsAClearError) {
    GraphModel m(13);
    m.domain("ai.onnx.preview.training", 1);
    m.input("a", DType::Float32, {2});
    m.node("Floor", {"a"}, {"f"}).node("Mul", {"f", "a"}, {"y"});
    m.node("Gradient", {"a"}, {"da"}, "ai.onnx.preview.training")
        .attr("xs", std::vector<std::string>{"a"})
        .attr("y", std::string("y"));
    m.output("da", DType::Float32, {2});
    std::string msg = user_error([&] { m.load("grad_floor"); });
    EXPECT_NE(msg.find("node 'n2' (op Gradient): cannot differentiate through node 'n0' (op floor)"),
              std::string::npos)
        << msg;
}

}  // namespace
}  // namespace tessera::loss_test
