// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against naive C++ loops
// on random data: every reduction, class weights, ignore_index (in range,
// negative, absent), N-D inputs, int32 targets and the log_prob output; and
// the diagnostics for bad operands.
#include <cmath>
#include <random>

#include "tests/engine/frontend/onnx/loss_test_util.h"

namespace tessera::loss_test {
namespace {

using graph::DType;
using index_test::random_floats;
using index_test::user_error;

struct LossCase {
    Ints shape;  // (N, C, d...)
    bool weight = false;
    bool has_ii = false;
    int64_t ii = 0;
    std::string reduction = "mean";
    std::string label() const {
        std::string s = "r" + reduction + (weight ? "_w" : "") +
                        (has_ii ? "_ii" + std::to_string(ii) : "") + "_rank" +
                        std::to_string(shape.size());
        for (char& c : s)
            if (c == '-') c = 'm';
        return s;
    }
};

// Targets (N, d...) in [0, C); with ignore_index about a quarter are set to it.
NDArray make_targets(const LossCase& c, uint32_t seed, DType dtype = DType::Int64) {
    Ints ts = c.shape;
    ts.erase(ts.begin() + 1);
    NDArray t = NDArray::empty({dtype, ts});
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
        int64_t v = int64_t(rng() % uint32_t(c.shape[1]));
        if (c.has_ii && rng() % 4 == 0) v = c.ii;
        if (dtype == DType::Int64)
            t.data<int64_t>()[i] = v;
        else
            t.data<int32_t>()[i] = int32_t(v);
    }
    return t;
}

int64_t target_at(const NDArray& t, int64_t i) {
    return t.dtype() == DType::Int64 ? t.data<int64_t>()[i] : int64_t(t.data<int32_t>()[i]);
}

// log_softmax over axis 1 of (N, C, D...) in double.
std::vector<double> log_softmax_ref(const std::vector<double>& x, const Ints& shape) {
    int64_t n = shape[0], c = shape[1], d = 1;
    for (size_t i = 2; i < shape.size(); ++i) d *= shape[i];
    std::vector<double> out(x.size());
    for (int64_t a = 0; a < n; ++a)
        for (int64_t k = 0; k < d; ++k) {
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < c; ++j) mx = std::max(mx, x[size_t((a * c + j) * d + k)]);
            for (int64_t j = 0; j < c; ++j) sum += std::exp(x[size_t((a * c + j) * d + k)] - mx);
            for (int64_t j = 0; j < c; ++j)
                out[size_t((a * c + j) * d + k)] = x[size_t((a * c + j) * d + k)] - mx - std::log(sum);
        }
    return out;
}

// The NLL loss of log-probabilities `x` by the ONNX spec's definition.
std::vector<double> nll_ref(const LossCase& c, const std::vector<double>& x, const NDArray& t,
                            const std::vector<double>& w) {
    int64_t n = c.shape[0], cls = c.shape[1], d = 1;
    for (size_t i = 2; i < c.shape.size(); ++i) d *= c.shape[i];
    std::vector<double> loss;
    double sum = 0, wsum = 0;
    for (int64_t a = 0; a < n; ++a)
        for (int64_t k = 0; k < d; ++k) {
            int64_t tc = target_at(t, a * d + k);
            double l = 0, wt = 0;
            if (!(c.has_ii && tc == c.ii)) {
                wt = c.weight ? w[size_t(tc)] : 1.0;
                l = -x[size_t((a * cls + tc) * d + k)] * wt;
            }
            loss.push_back(l);
            sum += l;
            wsum += wt;
        }
    if (c.reduction == "none") return loss;
    if (c.reduction == "sum") return {sum};
    return {sum / wsum};
}

// Builds and runs the loss op (NLL on `x` directly, or SCE on scores) and checks
// it (and SCE's log_prob) against the loops.
void check_loss(const std::string& op, const LossCase& c, uint32_t seed,
                DType target_dtype = DType::Int64) {
    SCOPED_TRACE(op + " " + c.label());
    NDArray x = random_floats(c.shape, seed, -2.f, 2.f);
    NDArray t = make_targets(c, seed + 1, target_dtype);
    NDArray w = random_floats({c.shape[1]}, seed + 2, 0.2f, 2.f);
    const bool sce = op == "SoftmaxCrossEntropyLoss";
    GraphModel m;
    m.input("x", DType::Float32, c.shape).input("t", target_dtype, t.shape());
    std::vector<std::string> in = {"x", "t"};
    if (c.weight) {
        m.input("w", DType::Float32, {c.shape[1]});
        in.push_back("w");
    }
    std::vector<std::string> out = {"loss"};
    if (sce) out.push_back("log_prob");
    m.node(op, in, out).attr("reduction", c.reduction);
    if (c.has_ii) m.attr("ignore_index", c.ii);
    Ints loss_shape = c.shape;
    loss_shape.erase(loss_shape.begin() + 1);
    if (c.reduction != "none") loss_shape.clear();
    m.output("loss", DType::Float32, loss_shape);
    if (sce) m.output("log_prob", DType::Float32, c.shape);
    graph::Graph g = m.load(op + "_" + c.label());
    std::vector<NDArray> inputs = {x, t};
    if (c.weight) inputs.push_back(w);
    std::vector<NDArray> got = index_test::run(g, inputs);

    std::vector<double> xv = values(x);
    std::vector<double> lp = sce ? log_softmax_ref(xv, c.shape) : xv;
    std::vector<double> want = nll_ref(c, lp, t, values(w));
    Ints want_shape = c.shape;
    want_shape.erase(want_shape.begin() + 1);
    if (c.reduction != "none") want_shape.clear();
    ASSERT_EQ(got[0].shape(), want_shape);
    index_test::expect_close(got[0], want, 2e-5);
    if (sce) {
        ASSERT_EQ(got.size(), 2u);
        ASSERT_EQ(got[1].shape(), c.shape);
        index_test::expect_close(got[1], lp, 2e-5);
    }
}

std::vector<LossCase> cases() {
    std::vector<LossCase> out;
    const Ints shapes[] = {{4, 5}, {3, 4, 6}, {2, 3, 2, 3}};
    int i = 0;
    for (const char* red : {"none", "sum", "mean"})
        for (bool weight : {false, true})
            for (int ii : {0, 1, 2}) {
                LossCase c;
                c.shape = shapes[size_t(i++ % 3)];
                c.reduction = red;
                c.weight = weight;
                c.has_ii = ii != 0;
                c.ii = ii == 1 ? -1 : 2;  // negative, and inside [0, C)
                out.push_back(c);
            }
    return out;
}

TEST(NegativeLogLikelihoodLoss, AllReductionsWeightsAndIgnoreIndexMatchLoops) {
    uint32_t seed = 100;
    for (const LossCase& c : cases()) check_loss("NegativeLogLikelihoodLoss", c, seed += 10);
}

TEST(SoftmaxCrossEntropyLoss, AllReductionsWeightsAndIgnoreIndexMatchLoops) {
    // Every other case (still each reduction with and without weights and
    // ignore_index): SCE adds only log_softmax in front of the NLL expansion.
    uint32_t seed = 500;
    std::vector<LossCase> all = cases();
    for (size_t i = 0; i < all.size(); i += 2)
        check_loss("SoftmaxCrossEntropyLoss", all[i], seed += 10);
}

TEST(NegativeLogLikelihoodLoss, Int32TargetsAndFiveSpatialDims) {
    LossCase c;
    c.shape = {2, 3, 2, 1, 2, 2, 1};
    c.weight = true;
    c.has_ii = true;
    c.ii = -5;
    check_loss("NegativeLogLikelihoodLoss", c, 901, DType::Int32);
    c.reduction = "none";
    check_loss("SoftmaxCrossEntropyLoss", c, 911, DType::Int32);
}

TEST(SoftmaxCrossEntropyLoss, WithoutLogProbOutputAndDefaultMeanReduction) {
    Ints xs = {5, 4};
    NDArray x = random_floats(xs, 77, -3.f, 3.f);
    LossCase c;
    c.shape = xs;
    NDArray t = make_targets(c, 78);
    graph::Graph g = GraphModel()
                         .input("x", DType::Float32, xs)
                         .input("t", DType::Int64, {5})
                         .node("SoftmaxCrossEntropyLoss", {"x", "t"}, {"loss"})
                         .output("loss", DType::Float32, {})
                         .load("sce_default");
    std::vector<NDArray> got = index_test::run(g, {x, t});
    ASSERT_EQ(got.size(), 1u);
    index_test::expect_close(got[0], nll_ref(c, log_softmax_ref(values(x), xs), t, {}), 2e-5);
}

TEST(NegativeLogLikelihoodLoss, BadOperandsAreClearErrors) {
    auto model = [](const NDArray& target) {
        GraphModel m;
        m.input("x", DType::Float32, {3, 4}).constant("t", target);
        m.node("NegativeLogLikelihoodLoss", {"x", "t"}, {"loss"}).attr("ignore_index", int64_t(-1));
        m.output("loss", DType::Float32, {});
        return m;
    };
    // A constant target outside [0, C) that is not ignore_index.
    std::string msg = user_error([&] { model(index_test::ints({3}, {0, -1, 4})).load("nll_range"); });
    EXPECT_NE(msg.find("node 'n0' (op NegativeLogLikelihoodLoss): target element 2 is class 4, "
                       "outside [0, 4) and not ignore_index -1"),
              std::string::npos)
        << msg;
    // In range and ignored targets are fine.
    EXPECT_EQ(user_error([&] { model(index_test::ints({3}, {0, -1, 3})).load("nll_ok"); }), "");
    // Target shape not (N, d...).
    msg = user_error([&] { model(index_test::ints({2}, {0, 1})).load("nll_shape"); });
    EXPECT_NE(msg.find("the target must have shape (N, d1, ...) = Tensor[(3,), int64]"),
              std::string::npos)
        << msg;
    // Float target, wrong weight, unknown reduction.
    GraphModel f;
    f.input("x", DType::Float32, {3, 4}).input("t", DType::Float32, {3});
    f.node("NegativeLogLikelihoodLoss", {"x", "t"}, {"loss"}).output("loss", DType::Float32, {});
    msg = user_error([&] { f.load("nll_float_target"); });
    EXPECT_NE(msg.find("the target must be int64 or int32"), std::string::npos) << msg;
    GraphModel w;
    w.input("x", DType::Float32, {3, 4}).input("t", DType::Int64, {3}).input("w", DType::Float32, {3});
    w.node("NegativeLogLikelihoodLoss", {"x", "t", "w"}, {"loss"}).output("loss", DType::Float32, {});
    msg = user_error([&] { w.load("nll_weight"); });
    EXPECT_NE(msg.find("the weight must have shape (4) and dtype float32"), std::string::npos) << msg;
    GraphModel r;
    r.input("x", DType::Float32, {3, 4}).input("t", DType::Int64, {3});
    r.node("SoftmaxCrossEntropyLoss", {"x", "t"}, {"loss"}).attr("reduction", std::string("avg"));
    r.output("loss", DType::Float32, {});
    msg = user_error([&] { r.load("sce_reduction"); });
    EXPECT_NE(msg.find("reduction must be none, sum or mean, got 'avg'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tessera::loss_test
