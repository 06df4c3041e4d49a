// Sequences, optionals, control flow (If/Loop/Scan/SequenceMap) and string
// ops: models written in ONNX's text syntax, compiled and run on random
// non-zero data against naive C++ loops.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::driver {
// load_model.cpp: import options with constant folding.
frontend::ImportOptions import_options(const std::map<std::string, std::vector<int64_t>>& shapes);
}  // namespace tessera::driver

namespace tessera::frontend {
namespace {

using runtime::NDArray;
using Ints = std::vector<int64_t>;

ImportedModel import_text(const std::string& text) {
    return import_onnx_text(text, "test model", {.input_shapes = {}, .fold = driver::import_options({}).fold});
}

// Compiles `m`, runs it on `inputs` and gives its (flattened) outputs.
std::vector<NDArray> run(const ImportedModel& m, const std::vector<NDArray>& inputs) {
    auto compiled = driver::build(m.graph);
    return compiled->run(inputs);
}

NDArray random(Ints shape, uint64_t seed) {
    return runtime::random_ndarray({graph::DType::Float32, std::move(shape)}, seed);
}

void expect_near(const NDArray& a, const std::vector<float>& expected, const std::string& what) {
    ASSERT_EQ(a.num_elements(), int64_t(expected.size())) << what;
    for (size_t i = 0; i < expected.size(); ++i)
        EXPECT_NEAR(a.data<float>()[i], expected[i], 1e-5f) << what << " element " << i;
}

std::vector<float> values(const NDArray& a) {
    return std::vector<float>(a.data<float>(), a.data<float>() + a.num_elements());
}

TEST(OnnxSeq, ConstructInsertEraseAtAndConcat) {
    // seq = [x, y, z]; insert y at 1 -> [x, y, y, z]; erase 0 -> [y, y, z];
    // out0 = seq[-1] (z); out1 = concat(seq, axis 1); out2 = stack(seq, axis 0).
    ImportedModel m = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g (float[2,3] x, float[2,3] y, float[2,3] z) => (float[2,3] a, float[2,9] b, float[3,2,3] c) {
            one = Constant<value = int64 {1}>()
            zero = Constant<value = int64 {0}>()
            last = Constant<value = int64 {-1}>()
            s0 = SequenceConstruct(x, y, z)
            s1 = SequenceInsert(s0, y, one)
            s2 = SequenceErase(s1, zero)
            a0 = SequenceAt(s2, last)
            a = Relu(a0)
            b = ConcatFromSequence<axis = 1>(s2)
            c = ConcatFromSequence<axis = 0, new_axis = 1>(s2)
        })");
    NDArray x = random({2, 3}, 1), y = random({2, 3}, 2), z = random({2, 3}, 3);
    std::vector<NDArray> out = run(m, {x, y, z});
    ASSERT_EQ(out.size(), 3u);
    std::vector<float> relu_z, cat, stack;
    for (float v : values(z)) relu_z.push_back(v > 0 ? v : 0);
    std::vector<const NDArray*> seq = {&y, &y, &z};
    for (int r = 0; r < 2; ++r)
        for (const NDArray* e : seq)
            for (int c = 0; c < 3; ++c) cat.push_back(e->data<float>()[r * 3 + c]);
    for (const NDArray* e : seq)
        for (float v : values(*e)) stack.push_back(v);
    expect_near(out[0], relu_z, "SequenceAt");
    expect_near(out[1], cat, "ConcatFromSequence");
    expect_near(out[2], stack, "ConcatFromSequence new_axis");
}

TEST(OnnxSeq, SplitToSequenceLengthAndElements) {
    ImportedModel m = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g (float[5,2] x) => (int64 n, float[2,2] a, float[3,2] b) {
            sizes = Constant<value = int64[2] {2, 3}>()
            zero = Constant<value = int64 {0}>()
            one = Constant<value = int64 {1}>()
            s = SplitToSequence<axis = 0>(x, sizes)
            n = SequenceLength(s)
            a = SequenceAt(s, zero)
            b = SequenceAt(s, one)
        })");
    ASSERT_EQ(m.outputs.size(), 3u);
    NDArray x = random({5, 2}, 4);
    std::vector<NDArray> out = run(m, {x});
    std::vector<float> xs = values(x);
    EXPECT_EQ(out[0].data<int64_t>()[0], 2);
    EXPECT_EQ(out[1].shape(), (Ints{2, 2}));
    expect_near(out[1], {xs.begin(), xs.begin() + 4}, "part 0");
    expect_near(out[2], {xs.begin() + 4, xs.end()}, "part 1");
}

TEST(OnnxSeq, LoopWithConstantTripCountIsUnrolled) {
    // y_{i+1} = y_i * w + i ; scan output = y_{i+1}; 4 iterations.
    ImportedModel m = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g (float[3] y0, float[3] w) => (float[3] y, float[4,3] ys) {
            trips = Constant<value = int64 {4}>()
            cond = Constant<value = bool {1}>()
            y, ys = Loop <body = body (int64 i, bool c, float[3] yin) => (bool cout, float[3] yout, float[3] scan) {
                cout = Identity(c)
                fi = Cast<to = 1>(i)
                m = Mul(yin, w)
                yout = Add(m, fi)
                scan = Identity(yout)
            }> (trips, cond, y0)
        })");
    NDArray y0 = random({3}, 5), w = random({3}, 6);
    std::vector<NDArray> out = run(m, {y0, w});
    std::vector<float> y = values(y0), ys;
    for (int i = 0; i < 4; ++i) {
        for (int k = 0; k < 3; ++k) y[size_t(k)] = y[size_t(k)] * w.data<float>()[k] + float(i);
        ys.insert(ys.end(), y.begin(), y.end());
    }
    expect_near(out[0], y, "final state");
    expect_near(out[1], ys, "scan output");
}

// Nested control flow refers to values of every enclosing scope: the inner
// Loop's If reads the inner body's input, the outer body's value and a graph
// input. Subgraphs are renamed when imported (the untaken branch never is).
TEST(OnnxSeq, NestedLoopsAndIfResolveNamesOfEveryEnclosingScope) {
    ImportedModel m = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g (float[3] y0, float[3] w) => (float[3] y) {
            trips3 = Constant<value = int64 {3}>()
            trips2 = Constant<value = int64 {2}>()
            cond = Constant<value = bool {1}>()
            pick = Constant<value = bool {1}>()
            y = Loop <body = outer (int64 i, bool c, float[3] yin) => (bool cout, float[3] yout) {
                cout = Identity(c)
                scaled = Mul(yin, w)
                yout = Loop <body = inner (int64 j, bool c2, float[3] zin) => (bool c2out, float[3] zout) {
                    c2out = Identity(c2)
                    zout = If <then_branch = t () => (float[3] r) { r = Add(zin, scaled) },
                               else_branch = e () => (float[3] r2) { big = Mul(zin, w)
                                                                     r2 = Sub(big, scaled) }> (pick)
                }> (trips2, cond, yin)
            }> (trips3, cond, y0)
        })");
    for (const auto& n : m.graph.nodes) EXPECT_NE(n.op, "subtract") << "the else branch was imported";
    NDArray y0 = random({3}, 8), w = random({3}, 9);
    std::vector<float> y = values(y0);
    for (int i = 0; i < 3; ++i)  // each outer trip: y + 2 * y * w (two inner trips add y * w)
        for (int k = 0; k < 3; ++k) y[size_t(k)] = y[size_t(k)] * (1.0f + 2.0f * w.data<float>()[k]);
    expect_near(run(m, {y0, w})[0], y, "nested loops");
}

TEST(OnnxSeq, LoopWithRuntimeTripCountIsAClearError) {
    try {
        import_text(R"(
            <ir_version: 8, opset_import: ["" : 16]>
            g (int64 trips, float[3] y0) => (float[3] y) {
                cond = Constant<value = bool {1}>()
                y = Loop <body = body (int64 i, bool c, float[3] yin) => (bool cout, float[3] yout) {
                    cout = Identity(c)
                    yout = Neg(yin)
                }> (trips, cond, y0)
            })");
        FAIL() << "expected a UserError";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("trip count ('trips') must be a constant"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("op Loop"), std::string::npos) << e.what();
    }
}

TEST(OnnxSeq, IfWithConstantConditionImportsOneBranchAndRuntimeConditionSelects) {
    const std::string branches = R"(If <
                then_branch = t () => (float[4] r) { r = Add(x, x) },
                else_branch = e () => (float[4] r2) { r2 = Mul(x, x) }> (c))";
    ImportedModel fixed = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g (float[4] x) => (float[4] y) {
            c = Constant<value = bool {0}>()
            y = )" + branches + "\n}");
    for (const auto& n : fixed.graph.nodes) EXPECT_NE(n.op, "add") << "the then branch was imported";
    ImportedModel dynamic = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g (bool c, float[4] x) => (float[4] y) {
            y = )" + branches + "\n}");
    NDArray x = random({4}, 7);
    std::vector<float> sum, prod;
    for (float v : values(x)) {
        sum.push_back(v + v);
        prod.push_back(v * v);
    }
    expect_near(run(fixed, {x})[0], prod, "constant false");
    for (bool c : {true, false}) {
        NDArray cond = NDArray::empty({graph::DType::Bool, {}});
        cond.data<uint8_t>()[0] = c ? 1 : 0;
        expect_near(run(dynamic, {cond, x})[0], c ? sum : prod, c ? "runtime true" : "runtime false");
    }
}

TEST(OnnxSeq, ScanAccumulatesInReverse) {
    ImportedModel m = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g (float[2] init, float[3,2] xs) => (float[2] total, float[3,2] partial) {
            total, partial = Scan <num_scan_inputs = 1, scan_input_directions = [1], body = b (float[2] acc, float[2] x) => (float[2] acc2, float[2] out) {
                acc2 = Add(acc, x)
                out = Identity(acc2)
            }> (init, xs)
        })");
    NDArray init = random({2}, 8), xs = random({3, 2}, 9);
    std::vector<float> acc = values(init), partial;
    for (int t = 2; t >= 0; --t) {
        for (int k = 0; k < 2; ++k) acc[size_t(k)] += xs.data<float>()[t * 2 + k];
        partial.insert(partial.end(), acc.begin(), acc.end());
    }
    std::vector<NDArray> out = run(m, {init, xs});
    expect_near(out[0], acc, "total");
    expect_near(out[1], partial, "partial sums");
}

TEST(OnnxSeq, SequenceMapAppliesTheBodyPerElement) {
    ImportedModel m = import_text(R"(
        <ir_version: 8, opset_import: ["" : 17]>
        g (float[2] a, float[3] b, float[1] k) => (float[5] out) {
            s = SequenceConstruct(a, b)
            mapped = SequenceMap <body = f (float[?] e, float[1] kk) => (float[?] r) { r = Mul(e, kk) }> (s, k)
            out = ConcatFromSequence<axis = 0>(mapped)
        })");
    NDArray a = random({2}, 10), b = random({3}, 11), k = random({1}, 12);
    std::vector<NDArray> out = run(m, {a, b, k});
    float kv = k.data<float>()[0];
    std::vector<float> expected;
    for (float v : values(a)) expected.push_back(v * kv);
    for (float v : values(b)) expected.push_back(v * kv);
    expect_near(out.at(0), expected, "mapped elements");
}

TEST(OnnxSeq, OptionalsAreResolvedAtImport) {
    ImportedModel m = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g (float[3] x) => (bool has, float[3] y) {
            o = Optional(x)
            has = OptionalHasElement(o)
            y0 = OptionalGetElement(o)
            y = Abs(y0)
        })");
    NDArray x = random({3}, 13);
    std::vector<NDArray> out = run(m, {x});
    EXPECT_EQ(out[0].data<uint8_t>()[0], 1);
    std::vector<float> ab;
    for (float v : values(x)) ab.push_back(v < 0 ? -v : v);
    expect_near(out[1], ab, "OptionalGetElement");
}

TEST(OnnxSeq, StringNormalizerOnConstantStrings) {
    ImportedModel m = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g () => (string[2] y) {
            x = Constant<value = string[4] {"Monday", "tuesday", "monday", "Friday"}>()
            y = StringNormalizer<case_change_action = "UPPER", stopwords = ["monday"]>(x)
        })");
    ASSERT_EQ(m.outputs.size(), 1u);
    EXPECT_EQ(m.outputs[0].kind, ValueKind::Strings);
    EXPECT_EQ(m.outputs[0].string_shape, (Ints{2}));
    EXPECT_EQ(m.outputs[0].strings, (std::vector<std::string>{"TUESDAY", "FRIDAY"}));
}

TEST(OnnxSeq, CastBetweenStringsAndNumbersAtImport) {
    ImportedModel m = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g (float[3] x) => (float[3] y, string[2] t) {
            s = Constant<value = string[3] {"0.5", "-INF", "1e-3"}>()
            f = Cast<to = 1>(s)
            y = Add(f, x)
            k = Constant<value = float[2] {0.1, 2.5}>()
            t = Cast<to = 8>(k)
        })");
    NDArray x = random({3}, 14);
    std::vector<NDArray> out = run(m, {x});
    std::vector<float> xs = values(x);
    EXPECT_NEAR(out.at(0).data<float>()[0], 0.5f + xs[0], 1e-6f);
    EXPECT_TRUE(std::isinf(out[0].data<float>()[1]) && out[0].data<float>()[1] < 0);
    EXPECT_NEAR(out[0].data<float>()[2], 1e-3f + xs[2], 1e-6f);
    ASSERT_EQ(m.outputs.size(), 2u);
    EXPECT_EQ(m.outputs[1].strings, (std::vector<std::string>{"0.1", "2.5"}));
    // A runtime tensor cannot become strings: the error names the node.
    try {
        import_text(R"(
            <ir_version: 8, opset_import: ["" : 16]>
            g (float[2] x) => (string[2] t) { t = Cast<to = 8>(x) })");
        FAIL() << "expected a UserError";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("(op Cast): a cast to STRING needs a constant input"),
                  std::string::npos) << e.what();
    }
}

TEST(OnnxSeq, TfIdfVectorizerCountsSkipGrams) {
    ImportedModel m = import_text(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g () => (float[1,4] y) {
            x = Constant<value = int64[1,6] {1, 2, 9, 2, 3, 1}>()
            y = TfIdfVectorizer<max_gram_length = 2, max_skip_count = 1, min_gram_length = 1, mode = "TFIDF",
                                ngram_counts = [0, 2], ngram_indexes = [0, 1, 2, 3],
                                pool_int64s = [1, 2, 2, 3, 1, 9], weights = [1.0, 2.0, 0.5, 3.0]>(x)
        })");
    // Unigrams: 1 twice, 2 twice. Bigrams (skip 0 or 1): (2,3) once [2,3 at 3,4],
    // (1,9) once [positions 0,2].
    std::vector<NDArray> out = run(m, {});
    expect_near(out.at(0), {2.0f * 1.0f, 2.0f * 2.0f, 1.0f * 0.5f, 1.0f * 3.0f}, "tf-idf");
}

// Sequence, optional and string outputs of ONNX's shipped cases, through the
// conformance runner (SequenceProto/OptionalProto test data, output layouts).
TEST(OnnxSeq, ShippedCasesWithSequenceOptionalAndStringOutputs) {
    const std::string data = TESSERA_ONNX_TESTDATA;
    for (const std::string c :
         {"/simple/test_sequence_model4", "/simple/test_strnorm_model_monday_empty_output",
          "/node/test_if_seq", "/node/test_if_opt", "/node/test_loop13_seq",
          "/node/test_optional_get_element_sequence", "/node/test_sequence_map_add_2_sequences",
          "/node/test_optional_has_element_empty"}) {
        driver::ConformanceResult r = driver::run_conformance_case(data + c);
        EXPECT_EQ(r.status, driver::ConformanceResult::Passed) << c << ": " << r.message;
    }
}

}  // namespace
}  // namespace tessera::frontend
