// The narrow_cast graph op: float16/bfloat16 rounding written as float32
// arithmetic and integer wrap, compiled (LLVM) and interpreted, against the
// bit-level conversions of runtime/half_float.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "engine/core/error.h"
#include "engine/core/small_types.h"
#include "engine/driver/driver.h"
#include "engine/graph/op_registry.h"
#include "engine/runtime/half_float.h"

namespace tessera {
namespace {

using graph::DType;
using graph::TensorType;
using runtime::NDArray;

graph::Graph narrow_graph(DType dtype, int64_t n, const std::string& declared,
                          const std::string& rounding = "", bool saturate = true) {
    graph::Graph g;
    graph::Value in;
    in.name = "x";
    in.type = {dtype, {n}};
    int x = g.add_value(in);
    g.inputs.push_back(x);
    graph::Node node;
    node.op = "narrow_cast";
    node.name = "narrow";
    node.attrs["dtype"] = declared;
    if (!rounding.empty()) node.attrs["rounding"] = rounding;
    if (!saturate) node.attrs["saturate"] = int64_t(0);
    node.inputs = {x};
    graph::Value out;
    out.name = "y";
    out.type = graph::infer_types(g, node).at(0);
    int y = g.add_value(out);
    node.outputs = {y};
    g.outputs.push_back(y);
    g.add_node(node);
    return g;
}

float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// Special values plus random floats over every exponent.
std::vector<float> test_floats() {
    std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.0f, 65520.0f, -65520.0f,
                            1e10f, INFINITY, -INFINITY, std::ldexp(1.0f, -24),
                            std::ldexp(1.0f, -25), std::ldexp(3.0f, -25), std::ldexp(1023.5f, -24),
                            1.0f + std::ldexp(1.0f, -11), 1.0f + 3 * std::ldexp(1.0f, -11),
                            1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -8),
                            from_bits(0x7f7fffff), from_bits(0x00000001), from_bits(0x00018000),
                            std::ldexp(1.0f, 100), std::ldexp(1.5f, 110), 3.0e38f};
    std::mt19937 rng(3);
    for (int i = 0; i < 20000; ++i) v.push_back(from_bits(rng()));
    return v;
}

void expect_same_bits(const NDArray& got, const std::vector<float>& want, const std::string& what) {
    ASSERT_EQ(size_t(got.num_elements()), want.size());
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        float g = got.data<float>()[i];
        bool same = std::memcmp(&g, &want[i], 4) == 0 || (std::isnan(g) && std::isnan(want[i]));
        if (!same && ++bad <= 5)
            ADD_FAILURE() << what << ": element " << i << " is " << std::hexfloat << g
                          << ", expected " << want[i];
    }
}

void check_float_rounding(const std::string& declared, const std::string& rounding,
                          const std::function<float(float)>& reference, bool saturate = true) {
    std::vector<float> xs = test_floats();
    NDArray x = NDArray::from_bytes({DType::Float32, {int64_t(xs.size())}}, xs.data(), xs.size() * 4);
    std::vector<float> want;
    for (float f : xs) want.push_back(reference(f));
    graph::Graph g = narrow_graph(DType::Float32, int64_t(xs.size()), declared, rounding, saturate);
    expect_same_bits(driver::build(g)->run({x}).at(0), want, declared + " compiled");
    expect_same_bits(driver::interpret_graph(g, {x}).at(0), want, declared + " interpreted");
}

float truncate_bfloat16(float f) {
    if (std::isnan(f)) return f;
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return from_bits(u & 0xffff0000u);
}

TEST(NarrowCast, Float16RoundingMatchesBitConversion) {
    check_float_rounding("float16", "", runtime::round_to_half);
}

TEST(NarrowCast, BFloat16RoundingMatchesBitConversion) {
    check_float_rounding("bfloat16", "", runtime::round_to_bfloat16);
}

TEST(NarrowCast, BFloat16TowardZeroKeepsTheHighBits) {
    check_float_rounding("bfloat16", "toward_zero", truncate_bfloat16);
}

// float8/float4 written as float32 arithmetic agree with core/small_types.h
// (itself checked against the decoded value sets in small_types_test.cpp),
// over every exponent, infinities and NaN, saturating or not.
TEST(NarrowCast, Float8AndFloat4RoundingMatchesCore) {
    for (SmallType t : {SmallType::Float8E4M3FN, SmallType::Float8E4M3FNUZ, SmallType::Float8E5M2,
                        SmallType::Float8E5M2FNUZ, SmallType::Float8E8M0, SmallType::Float4E2M1}) {
        for (bool saturate : {true, false}) {
            SCOPED_TRACE(std::string(small_type_name(t)) + (saturate ? " saturate" : " overflow"));
            check_float_rounding(small_type_name(t), "",
                                 [&](float f) { return round_to_small_float(t, f, saturate); },
                                 saturate);
        }
    }
}

TEST(NarrowCast, WrapsIntegers) {
    std::vector<int32_t> v32 = {0, 5, -5, 32767, 32768, -32768, -32769, 65535, 65536, 100000, -100000};
    NDArray x = NDArray::from_bytes({DType::Int32, {int64_t(v32.size())}}, v32.data(), v32.size() * 4);
    for (std::string declared : {"int16", "uint16"}) {
        NDArray y = driver::build(narrow_graph(DType::Int32, int64_t(v32.size()), declared))->run({x}).at(0);
        for (size_t i = 0; i < v32.size(); ++i) {
            int32_t want = declared == "int16" ? int16_t(uint16_t(v32[i])) : uint16_t(v32[i]);
            EXPECT_EQ(y.data<int32_t>()[i], want) << declared << " of " << v32[i];
        }
    }
    for (SmallType t : {SmallType::Int4, SmallType::UInt4, SmallType::Int2, SmallType::UInt2}) {
        NDArray y = driver::build(narrow_graph(DType::Int32, int64_t(v32.size()), small_type_name(t)))
                        ->run({x})
                        .at(0);
        for (size_t i = 0; i < v32.size(); ++i)
            EXPECT_EQ(y.data<int32_t>()[i], wrap_to_small_int(t, v32[i])) << small_type_name(t);
    }
    std::vector<int64_t> v64 = {0, -1, 4294967295, 4294967296, -4294967297, int64_t(1) << 40};
    NDArray x64 = NDArray::from_bytes({DType::Int64, {int64_t(v64.size())}}, v64.data(), v64.size() * 8);
    NDArray y = driver::build(narrow_graph(DType::Int64, int64_t(v64.size()), "uint32"))->run({x64}).at(0);
    for (size_t i = 0; i < v64.size(); ++i) EXPECT_EQ(y.data<int64_t>()[i], int64_t(uint32_t(v64[i])));
}

TEST(NarrowCast, RejectsMismatchedTypes) {
    EXPECT_THROW(narrow_graph(DType::Int32, 4, "float16"), UserError);
    EXPECT_THROW(narrow_graph(DType::Float32, 4, "uint32"), UserError);
    EXPECT_THROW(narrow_graph(DType::Float32, 4, "float8"), UserError);
    EXPECT_THROW(narrow_graph(DType::Float32, 4, "float16", "toward_zero"), UserError);
}

}  // namespace
}  // namespace tessera
