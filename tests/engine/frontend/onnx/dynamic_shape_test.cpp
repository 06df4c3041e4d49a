// Ops whose output shape depends on input values: Compress compiles to a
// gather when its condition is constant; NonZero, Unique and NonMaxSuppression
// fold at import on constant inputs; non-constant inputs give a clear error
// that the conformance runner answers by freezing the test inputs.
#include <map>
#include <set>

#include "tests/engine/frontend/onnx/index_test_util.h"

namespace tessera::index_test {
namespace {

using graph::DType;

NDArray bools(const Ints& shape, const std::vector<int>& v) {
    NDArray a = NDArray::empty({DType::Bool, shape});
    for (size_t i = 0; i < v.size(); ++i) a.data<uint8_t>()[i] = uint8_t(v[i]);
    return a;
}

const graph::Value& output_value(const graph::Graph& g, size_t k) {
    return g.values.at(size_t(g.outputs.at(k)));
}

TEST(Compress, ConstantConditionCompilesToAGatherOfRuntimeData) {
    Ints xs = {4, 3, 2};
    NDArray x = random_floats(xs, 71);
    // Along axis 1 (negative), a condition shorter than the axis.
    graph::Graph g = OneNodeModel("Compress", 11)
                         .input("x", DType::Float32, xs)
                         .constant("cond", bools({2}, {0, 1}))
                         .output("y", DType::Float32, {4, 1, 2})
                         .attr("axis", int64_t(-2))
                         .load("compress_axis");
    ASSERT_EQ(g.nodes.size(), 1u) << graph::print(g);
    EXPECT_EQ(g.nodes[0].op, "take");
    std::vector<NDArray> out = run(g, {x});
    ASSERT_EQ(out[0].shape(), (Ints{4, 1, 2}));
    std::vector<double> want;
    for (int64_t a = 0; a < 4; ++a)
        for (int64_t c = 0; c < 2; ++c) want.push_back(x.data<float>()[offset(xs, {a, 1, c})]);
    expect_close(out[0], want);
    // Without axis: elements of the flattened input.
    std::vector<int> cond(24, 0);
    for (int i : {0, 3, 4, 10, 23}) cond[size_t(i)] = 1;
    g = OneNodeModel("Compress", 11)
            .input("x", DType::Float32, xs)
            .constant("cond", bools({24}, cond))
            .output("y", DType::Float32, {5})
            .load("compress_flat");
    out = run(g, {x});
    ASSERT_EQ(out[0].shape(), (Ints{5}));
    expect_close(out[0], {x.data<float>()[0], x.data<float>()[3], x.data<float>()[4],
                          x.data<float>()[10], x.data<float>()[23]});
}

TEST(Compress, RuntimeConditionAndTooLongConditionAreClearErrors) {
    OneNodeModel m("Compress", 11);
    m.input("x", DType::Float32, {3, 2}).input("cond", DType::Bool, {3}).output("y", DType::Float32, {-1, 2});
    m.attr("axis", int64_t(0));
    std::string msg = user_error([&] { m.load("compress_runtime"); });
    EXPECT_NE(msg.find("node 'n0' (op Compress): output shape of Compress depends on input values, "
                       "and condition ('cond') is not a constant"),
              std::string::npos)
        << msg;
    OneNodeModel l("Compress", 11);
    l.input("x", DType::Float32, {3, 2}).constant("cond", bools({4}, {1, 0, 0, 1}));
    l.output("y", DType::Float32, {-1, 2}).attr("axis", int64_t(0));
    msg = user_error([&] { l.load("compress_long"); });
    EXPECT_NE(msg.find("condition is true at position 3, past the 3 elements"), std::string::npos)
        << msg;
}

TEST(NonZero, FoldsConstantInputAndMatchesLoops) {
    Ints xs = {3, 4};
    NDArray x = random_floats(xs, 81);
    for (int64_t i = 0; i < 12; i += 3) x.data<float>()[i] = 0.f;
    graph::Graph g = OneNodeModel("NonZero", 13).constant("x", x).output("y", DType::Int64, {2, -1}).load("nonzero");
    const graph::Value& y = output_value(g, 0);
    ASSERT_TRUE(y.is_constant());
    ASSERT_EQ(y.type, (graph::TensorType{DType::Int64, {2, 8}}));
    Ints rows, cols;
    for (int64_t i = 0; i < 12; ++i)
        if (x.data<float>()[i] != 0.f) rows.push_back(i / 4), cols.push_back(i % 4);
    rows.insert(rows.end(), cols.begin(), cols.end());
    EXPECT_EQ(Ints(y.constant->as<int64_t>(), y.constant->as<int64_t>() + 16), rows);
    OneNodeModel r("NonZero", 13);
    r.input("x", DType::Float32, xs).output("y", DType::Int64, {2, -1});
    EXPECT_NE(user_error([&] { r.load("nonzero_runtime"); }).find("output shape of NonZero depends on input values"),
              std::string::npos);
}

TEST(NonZero, ConformanceRunnerFreezesTheInput) {
    OneNodeModel m("NonZero", 13);
    m.input("x", DType::Bool, {2, 3}).output("y", DType::Int64, {2, -1});
    std::string path = m.save("nonzero_frozen");
    std::string in = path + ".input_0.pb";
    frontend::write_tensor_pb(bools({2, 3}, {1, 0, 0, 1, 1, 0}), "x", in);
    graph::Graph g = driver::load_model_for_inputs(path, {in});
    const graph::Value& y = output_value(g, 0);
    ASSERT_TRUE(y.is_constant());
    EXPECT_EQ(Ints(y.constant->as<int64_t>(), y.constant->as<int64_t>() + 6), (Ints{0, 1, 1, 0, 0, 1}));
}

Ints ints_of(const graph::Value& v) {
    return Ints(v.constant->as<int64_t>(), v.constant->as<int64_t>() + v.type.num_elements());
}

TEST(Unique, SortedAndUnsortedWithAndWithoutAxisMatchLoops) {
    // Without axis: values drawn from a small set so that repeats occur.
    NDArray x = NDArray::empty({DType::Float32, {3, 4}});
    std::mt19937 rng(91);
    for (int64_t i = 0; i < 12; ++i) x.data<float>()[i] = float(int(rng() % 5) - 2) * 0.5f;
    for (int64_t sorted : {0, 1}) {
        graph::Graph g = OneNodeModel("Unique", 11)
                             .constant("x", x)
                             .output("y", DType::Float32, {-1})
                             .output("idx", DType::Int64, {-1})
                             .output("inv", DType::Int64, {12})
                             .output("cnt", DType::Int64, {-1})
                             .attr("sorted", sorted)
                             .load("unique");
        std::vector<float> order;  // unique values in first-appearance order
        for (int64_t i = 0; i < 12; ++i)
            if (std::find(order.begin(), order.end(), x.data<float>()[i]) == order.end())
                order.push_back(x.data<float>()[i]);
        if (sorted) std::sort(order.begin(), order.end());
        const graph::Value& y = output_value(g, 0);
        ASSERT_EQ(y.type.shape, (Ints{int64_t(order.size())}));
        Ints first, inv, cnt(order.size(), 0);
        for (float v : order)
            for (int64_t i = 0; i < 12; ++i)
                if (x.data<float>()[i] == v) {
                    first.push_back(i);
                    break;
                }
        for (int64_t i = 0; i < 12; ++i) {
            int64_t k = std::find(order.begin(), order.end(), x.data<float>()[i]) - order.begin();
            inv.push_back(k);
            ++cnt[size_t(k)];
        }
        EXPECT_EQ(std::vector<float>(y.constant->as<float>(), y.constant->as<float>() + order.size()), order);
        EXPECT_EQ(ints_of(output_value(g, 1)), first);
        EXPECT_EQ(ints_of(output_value(g, 2)), inv);
        EXPECT_EQ(ints_of(output_value(g, 3)), cnt);
    }
    // Along axis 1 of (2, 4): columns 0 and 2 repeat; sorted lexicographically.
    NDArray m = floats({2, 4}, {1, 0, 1, -1, 2, 3, 2, 5});
    graph::Graph g = OneNodeModel("Unique", 11)
                         .constant("x", m)
                         .output("y", DType::Float32, {2, -1})
                         .output("idx", DType::Int64, {-1})
                         .output("inv", DType::Int64, {4})
                         .output("cnt", DType::Int64, {-1})
                         .attr("axis", int64_t(-1))
                         .load("unique_axis");
    const graph::Value& y = output_value(g, 0);
    ASSERT_EQ(y.type.shape, (Ints{2, 3}));
    EXPECT_EQ(std::vector<float>(y.constant->as<float>(), y.constant->as<float>() + 6),
              (std::vector<float>{-1, 0, 1, 5, 3, 2}));
    EXPECT_EQ(ints_of(output_value(g, 1)), (Ints{3, 1, 0}));
    EXPECT_EQ(ints_of(output_value(g, 2)), (Ints{2, 1, 2, 0}));
    EXPECT_EQ(ints_of(output_value(g, 3)), (Ints{1, 1, 2}));
}

// Naive greedy NMS over (y1, x1, y2, x2) boxes.
Ints nms_ref(const NDArray& boxes, const NDArray& scores, int64_t max_out, double iou_thr,
             double score_thr) {
    int64_t nb = boxes.shape()[0], n = boxes.shape()[1], nc = scores.shape()[1];
    Ints out;
    for (int64_t b = 0; b < nb; ++b)
        for (int64_t c = 0; c < nc; ++c) {
            const float* s = scores.data<float>() + (b * nc + c) * n;
            std::vector<bool> used(size_t(n), false);
            Ints kept;
            while (int64_t(kept.size()) < max_out) {
                int64_t best = -1;
                for (int64_t i = 0; i < n; ++i)
                    if (!used[size_t(i)] && s[i] > score_thr && (best < 0 || s[i] > s[best])) best = i;
                if (best < 0) break;
                used[size_t(best)] = true;
                const float* p = boxes.data<float>() + (b * n + best) * 4;
                bool drop = false;
                for (int64_t k : kept) {
                    const float* q = boxes.data<float>() + (b * n + k) * 4;
                    double ih = std::min(p[2], q[2]) - std::max(p[0], q[0]);
                    double iw = std::min(p[3], q[3]) - std::max(p[1], q[1]);
                    if (ih <= 0 || iw <= 0) continue;
                    double inter = ih * iw;
                    double uni = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter;
                    drop = drop || inter / uni > iou_thr;
                }
                if (drop) continue;
                kept.push_back(best);
                out.insert(out.end(), {b, c, best});
            }
        }
    return out;
}

TEST(NonMaxSuppression, FoldsConstantBoxesAndMatchesGreedyLoops) {
    const int64_t B = 2, N = 12, C = 3;
    NDArray boxes = NDArray::empty({DType::Float32, {B, N, 4}});
    std::mt19937 rng(101);
    std::uniform_real_distribution<float> pos(0.f, 6.f), size(0.5f, 3.f);
    for (int64_t i = 0; i < B * N; ++i) {
        float y = pos(rng), x = pos(rng);
        float* p = boxes.data<float>() + i * 4;
        p[0] = y, p[1] = x, p[2] = y + size(rng), p[3] = x + size(rng);
    }
    NDArray scores = random_floats({B, C, N}, 102, 0.f, 1.f);
    graph::Graph g = OneNodeModel("NonMaxSuppression", 11)
                         .constant("boxes", boxes)
                         .constant("scores", scores)
                         .constant("max", ints({1}, {4}))
                         .constant("iou", floats({1}, {0.3f}))
                         .constant("score", floats({1}, {0.2f}))
                         .output("sel", DType::Int64, {-1, 3})
                         .load("nms");
    Ints want = nms_ref(boxes, scores, 4, 0.3, 0.2);
    const graph::Value& y = output_value(g, 0);
    ASSERT_EQ(y.type.shape, (Ints{int64_t(want.size() / 3), 3}));
    EXPECT_EQ(ints_of(y), want);
    OneNodeModel r("NonMaxSuppression", 11);
    r.input("boxes", DType::Float32, {B, N, 4}).constant("scores", scores).output("sel", DType::Int64, {-1, 3});
    EXPECT_NE(user_error([&] { r.load("nms_runtime"); })
                  .find("output shape of NonMaxSuppression depends on input values, and boxes ('boxes')"),
              std::string::npos);
}

}  // namespace
}  // namespace tessera::index_test
