// GatherND, ScatterElements, Scatter, ScatterND and ReverseSequence on random
// data (negative indices included) against naive loops, and out-of-range
// constant indices rejected at import.
#include <algorithm>
#include <functional>

#include "tests/engine/frontend/onnx/index_test_util.h"

namespace tessera::index_test {
namespace {

using graph::DType;

int64_t wrap(int64_t v, int64_t n) { return v < 0 ? v + n : v; }

// Random indices in [-n, n) for a tensor of `shape`.
NDArray signed_indices(const Ints& shape, uint32_t seed, int64_t n) { return random_ints(shape, seed, -n, n - 1); }

TEST(GatherND, RandomIndicesWithNegativesMatchLoops) {
    Ints ds = {3, 4, 5}, is = {2, 3, 2};
    graph::Graph g = OneNodeModel("GatherND", 13)
                         .input("data", DType::Float32, ds)
                         .input("indices", DType::Int64, is)
                         .output("y", DType::Float32, {2, 3, 5})
                         .load("gathernd");
    NDArray x = random_floats(ds, 1), ind = signed_indices(is, 2, 3);
    std::vector<NDArray> out = run(g, {x, ind});
    ASSERT_EQ(out[0].shape(), (Ints{2, 3, 5}));
    std::vector<double> want;
    for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j) {
            const int64_t* t = ind.data<int64_t>() + (i * 3 + j) * 2;
            for (int64_t r = 0; r < 5; ++r)
                want.push_back(x.data<float>()[offset(ds, {wrap(t[0], 3), wrap(t[1], 4), r})]);
        }
    expect_close(out[0], want);
}

TEST(GatherND, BatchDimsOneMatchesLoops) {
    Ints ds = {2, 3, 4}, is = {2, 2, 1};
    graph::Graph g = OneNodeModel("GatherND", 13)
                         .input("data", DType::Float32, ds)
                         .input("indices", DType::Int64, is)
                         .output("y", DType::Float32, {2, 2, 4})
                         .attr("batch_dims", int64_t(1))
                         .load("gathernd_b1");
    NDArray x = random_floats(ds, 3), ind = signed_indices(is, 4, 3);
    std::vector<NDArray> out = run(g, {x, ind});
    ASSERT_EQ(out[0].shape(), (Ints{2, 2, 4}));
    std::vector<double> want;
    for (int64_t b = 0; b < 2; ++b)
        for (int64_t j = 0; j < 2; ++j)
            for (int64_t r = 0; r < 4; ++r)
                want.push_back(x.data<float>()[offset(ds, {b, wrap(ind.data<int64_t>()[b * 2 + j], 3), r})]);
    expect_close(out[0], want);
}

TEST(GatherND, OutOfRangeConstantIndexIsAnImportError) {
    OneNodeModel m("GatherND", 13);
    m.input("data", DType::Float32, {3, 4}).constant("indices", ints({2, 2}, {0, 1, 3, 0}));
    m.output("y", DType::Float32, {2});
    std::string msg = user_error([&] { m.load("gathernd_bad"); });
    EXPECT_NE(msg.find("node 'n0' (op GatherND): index 3 at position 2 is out of range [-3, 3)"),
              std::string::npos)
        << msg;
}

// Naive ScatterElements: out = data; out[j with axis -> idx[j]] op= upd[j].
std::vector<double> scatter_elements_ref(const NDArray& data, const NDArray& ind, const NDArray& upd,
                                         int64_t axis, const std::string& red) {
    std::vector<double> out(data.data<float>(), data.data<float>() + data.num_elements());
    for (int64_t f = 0; f < ind.num_elements(); ++f) {
        Ints j = unravel(ind.shape(), f);
        j[size_t(axis)] = wrap(ind.data<int64_t>()[f], data.shape()[size_t(axis)]);
        double& o = out[size_t(offset(data.shape(), j))];
        double u = upd.data<float>()[f];
        if (red == "none") o = u;
        if (red == "add") o += u;
        if (red == "mul") o *= u;
        if (red == "max") o = std::max(o, u);
        if (red == "min") o = std::min(o, u);
    }
    return out;
}

TEST(ScatterElements, EveryReductionMatchesLoops) {
    Ints ds = {4, 5, 3}, is = {3, 4, 2};
    for (std::string red : {"none", "add", "mul", "max", "min"}) {
        SCOPED_TRACE(red);
        NDArray ind = NDArray::empty({DType::Int64, is});
        std::mt19937 rng(7);
        for (int64_t i = 0; i < 3; ++i)
            for (int64_t k = 0; k < 2; ++k) {
                // Distinct targets along the axis for "none" (ONNX leaves duplicates undefined).
                Ints perm = {0, 1, 2, 3, 4};
                std::shuffle(perm.begin(), perm.end(), rng);
                for (int64_t j = 0; j < 4; ++j) {
                    int64_t v = red == "none" ? perm[size_t(j)] : int64_t(rng() % 3);
                    if (rng() % 2) v -= 5;  // the same position, counted from the end
                    ind.data<int64_t>()[offset(is, {i, j, k})] = v;
                }
            }
        OneNodeModel m("ScatterElements", 18);
        m.input("data", DType::Float32, ds).input("indices", DType::Int64, is);
        m.input("updates", DType::Float32, is).output("y", DType::Float32, ds).attr("axis", int64_t(-2));
        if (red != "none") m.attr("reduction", red);
        graph::Graph g = m.load("scatter_elements_" + red);
        NDArray data = random_floats(ds, 11), upd = random_floats(is, 12);
        expect_close(run(g, {data, ind, upd})[0], scatter_elements_ref(data, ind, upd, 1, red));
    }
}

TEST(ScatterElements, OldScatterOpAndConstantIndices) {
    Ints ds = {3, 3}, is = {2, 3};
    NDArray ind = ints(is, {1, 0, 2, 0, 2, -2});
    graph::Graph g = OneNodeModel("Scatter", 10)
                         .input("data", DType::Float32, ds)
                         .constant("indices", ind)
                         .input("updates", DType::Float32, is)
                         .output("y", DType::Float32, ds)
                         .load("scatter_v10");
    NDArray data = random_floats(ds, 5), upd = random_floats(is, 6);
    expect_close(run(g, {data, upd})[0], scatter_elements_ref(data, ind, upd, 0, "none"));
}

TEST(ScatterElements, OutOfRangeConstantIndexIsAnImportError) {
    OneNodeModel m("ScatterElements", 16);
    m.input("data", DType::Float32, {1, 5}).constant("indices", ints({1, 2}, {1, -6}));
    m.input("updates", DType::Float32, {1, 2}).output("y", DType::Float32, {1, 5}).attr("axis", int64_t(1));
    std::string msg = user_error([&] { m.load("scatter_bad"); });
    EXPECT_NE(msg.find("(op ScatterElements): index -6 at position 1 is out of range [-5, 5) for axis 1"),
              std::string::npos)
        << msg;
}

TEST(ScatterND, EveryReductionMatchesLoops) {
    Ints ds = {4, 5, 6}, is = {2, 3, 2}, us = {2, 3, 6};
    for (std::string red : {"none", "add", "mul", "max", "min"}) {
        SCOPED_TRACE(red);
        NDArray ind = NDArray::empty({DType::Int64, is});
        std::mt19937 rng(9);
        Ints cells(20);
        for (int64_t c = 0; c < 20; ++c) cells[size_t(c)] = red == "none" ? c : c % 3;
        std::shuffle(cells.begin(), cells.end(), rng);
        for (int64_t p = 0; p < 6; ++p) {
            int64_t a = cells[size_t(p)] / 5, b = cells[size_t(p)] % 5;
            ind.data<int64_t>()[2 * p] = rng() % 2 ? a - 4 : a;
            ind.data<int64_t>()[2 * p + 1] = rng() % 2 ? b - 5 : b;
        }
        OneNodeModel m("ScatterND", 18);
        m.input("data", DType::Float32, ds).input("indices", DType::Int64, is);
        m.input("updates", DType::Float32, us).output("y", DType::Float32, ds);
        if (red != "none") m.attr("reduction", red);
        graph::Graph g = m.load("scatter_nd_" + red);
        NDArray data = random_floats(ds, 21), upd = random_floats(us, 22);
        std::vector<double> want(data.data<float>(), data.data<float>() + data.num_elements());
        for (int64_t p = 0; p < 6; ++p)
            for (int64_t r = 0; r < 6; ++r) {
                const int64_t* t = ind.data<int64_t>() + 2 * p;
                double& o = want[size_t(offset(ds, {wrap(t[0], 4), wrap(t[1], 5), r}))];
                double u = upd.data<float>()[p * 6 + r];
                if (red == "none") o = u;
                if (red == "add") o += u;
                if (red == "mul") o *= u;
                if (red == "max") o = std::max(o, u);
                if (red == "min") o = std::min(o, u);
            }
        expect_close(run(g, {data, ind, upd})[0], want);
    }
}

TEST(ScatterND, NoUpdatesCopiesTheData) {
    Ints ds = {4, 5, 6};
    graph::Graph g = OneNodeModel("ScatterND", 16)
                         .input("data", DType::Float32, ds)
                         .input("indices", DType::Int64, {0, 2})
                         .input("updates", DType::Float32, {0, 6})
                         .output("y", DType::Float32, ds)
                         .load("scatter_nd_empty");
    NDArray data = random_floats(ds, 23);
    std::vector<NDArray> in = {data, NDArray::empty({DType::Int64, {0, 2}}),
                               NDArray::empty({DType::Float32, {0, 6}})};
    expect_close(run(g, in)[0], std::vector<double>(data.data<float>(), data.data<float>() + 120));
}

TEST(ScatterND, OutOfRangeConstantIndexIsAnImportError) {
    OneNodeModel m("ScatterND", 16);
    m.input("data", DType::Float32, {4, 4}).constant("indices", ints({1, 1}, {4}));
    m.input("updates", DType::Float32, {1, 4}).output("y", DType::Float32, {4, 4});
    std::string msg = user_error([&] { m.load("scatternd_bad"); });
    EXPECT_NE(msg.find("index 4 at position 0 is out of range [-4, 4)"), std::string::npos) << msg;
}

TEST(ReverseSequence, BothAxisOrdersMatchLoops) {
    struct Case {
        Ints shape;
        int64_t batch_axis, time_axis;
    };
    for (Case c : {Case{{5, 3, 2}, 1, 0}, Case{{3, 4, 2}, 0, 1}}) {
        int64_t nb = c.shape[size_t(c.batch_axis)], nt = c.shape[size_t(c.time_axis)];
        graph::Graph g = OneNodeModel("ReverseSequence", 10)
                             .input("x", DType::Float32, c.shape)
                             .input("lens", DType::Int64, {nb})
                             .output("y", DType::Float32, c.shape)
                             .attr("batch_axis", c.batch_axis)
                             .attr("time_axis", c.time_axis)
                             .load("reverse_sequence");
        NDArray x = random_floats(c.shape, 31), lens = random_ints({nb}, 32, 0, nt);
        std::vector<double> want;
        for (int64_t f = 0; f < x.num_elements(); ++f) {
            Ints i = unravel(c.shape, f);
            int64_t len = lens.data<int64_t>()[i[size_t(c.batch_axis)]];
            int64_t& t = i[size_t(c.time_axis)];
            if (t < len) t = len - 1 - t;
            want.push_back(x.data<float>()[offset(c.shape, i)]);
        }
        expect_close(run(g, {x, lens})[0], want);
    }
}

}  // namespace
}  // namespace tessera::index_test
