// The dot4_u8s8 intrinsic (four byte products into int32 lanes): compiled at
// every vector width against the interpreter and a plain C++ sum, lowered to
// vpdpbusd where the host has AVX-512 VNNI or AVX-VNNI and to pmaddwd on x86
// CPUs without them.
#include <cmath>
#include <random>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/tir/interpreter.h"
#include "tests/engine/codegen/llvm/codegen_test_util.h"

namespace tessera::test {
namespace {

Buffer int_buffer(const std::string& name, int64_t n) {
    return Buffer(name, DataType::int32(), {Expr(n)}, "global");
}

// C[i] = C[i] + dot4_u8s8(A[i / lanes * lanes] (one word per vector, as the
// GEMM broadcasts A), B[i]) over `n` elements, `lanes` at a time.
PrimFunc dot4_func(const std::string& name, int64_t n, int lanes) {
    Buffer A = int_buffer("A", n), B = int_buffer("B", n), C = int_buffer("C", n);
    Var io("io");
    Expr base = io * Expr(int64_t(lanes));
    Expr idx = lanes == 1 ? base : Ramp::make(base, Expr(int64_t(1)), lanes);
    Expr a = lanes == 1 ? ld(A, {base}) : Broadcast::make(ld(A, {base}), lanes);
    Stmt body = For::make(io, Expr(int64_t(0)), Expr(n / lanes), ForKind::Serial,
                          st(C, ld(C, {idx}) + tir::dot4_u8s8(a, ld(B, {idx})), {idx}));
    return PrimFunc(name, {A, B, C}, body);
}

std::vector<int32_t> random_words(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> v(n);
    for (int32_t& x : v) x = int32_t(rng());
    return v;
}

int32_t reference(int32_t acc, int32_t a, int32_t b) {
    int64_t s = acc;
    for (int t = 0; t < 4; ++t)
        s += int64_t((uint32_t(a) >> (8 * t)) & 0xff) * int64_t(int8_t(uint32_t(b) >> (8 * t)));
    return int32_t(s);
}

TEST(LlvmDot4, EveryVectorWidthSumsTheFourByteProducts) {
    const int64_t n = 96;
    for (int lanes : {1, 2, 4, 8, 16, 24, 32, 48}) {
        PrimFunc f = dot4_func("dot4_x" + std::to_string(lanes), n, lanes);
        std::vector<int32_t> a = random_words(n, 3), b = random_words(n, 4);
        // Extreme bytes too: 255 * -128 in every position.
        a[0] = int32_t(0xffffffffu);
        b[0] = int32_t(0x80808080u);
        std::vector<int32_t> c = random_words(n, 5), want(n), interp = c;
        for (int64_t i = 0; i < n; ++i) want[i] = reference(c[i], a[i / lanes * lanes], b[i]);
        run_jit(f, {a.data(), b.data(), c.data()});
        tir::interpret(f, {a.data(), b.data(), interp.data()});
        EXPECT_EQ(c, want) << lanes << " lanes";
        EXPECT_EQ(interp, want) << lanes << " lanes, interpreter";
    }
}

TEST(LlvmDot4, UsesVpdpbusdWhereTheHostHasVnni) {
    const std::string host = codegen::host_target_description();
    const bool vnni =
        host.find("+avx512vnni") != std::string::npos || host.find("+avxvnni") != std::string::npos;
    if (!vnni) GTEST_SKIP() << "no AVX-512 VNNI / AVX-VNNI on this CPU: " << host;
    const std::string text = codegen::emit_assembly({dot4_func("dot4_vnni", 64, 16)});
    EXPECT_NE(text.find("vpdpbusd"), std::string::npos) << text;
    EXPECT_EQ(text.find("vpmulld"), std::string::npos) << text;
}

// An x86 CPU without VNNI (AVX2 Haswell / Zen 3, AVX-512 Skylake-X): two
// pmaddwd per vector on the bytes as 16-bit halves, exact for every byte
// pair (pmaddubsw would saturate 255 x -128 + 255 x -128 in int16).
TEST(LlvmDot4, WithoutVnniTwoPmaddwdPerVectorSumTheProductsExactly) {
    codegen::LlvmOptions skx;
    skx.cpu = "skylake-avx512";
    const std::string text512 = codegen::emit_assembly({dot4_func("dot4_skx", 64, 16)}, skx);
    EXPECT_NE(text512.find("vpmaddwd\t%zmm"), std::string::npos) << text512;
    EXPECT_EQ(text512.find("vpmulld"), std::string::npos) << text512;
    const std::string host = codegen::host_target_description();
    if (host.find("+avx2") == std::string::npos) GTEST_SKIP() << "no AVX2 on this CPU: " << host;
    codegen::LlvmOptions hsw;
    hsw.cpu = "haswell";
    const std::string text = codegen::emit_assembly({dot4_func("dot4_hsw", 64, 8)}, hsw);
    EXPECT_NE(text.find("vpmaddwd"), std::string::npos) << text;
    EXPECT_EQ(text.find("vpmulld"), std::string::npos) << text;
    const int64_t n = 96;
    for (int lanes : {4, 8, 16, 24, 32}) {
        PrimFunc f = dot4_func("dot4_hsw_x" + std::to_string(lanes), n, lanes);
        std::vector<int32_t> a = random_words(n, 13), b = random_words(n, 14);
        a[0] = int32_t(0xffffffffu);  // 255 x -128 in every byte: the extremes
        b[0] = int32_t(0x80808080u);
        a[lanes] = int32_t(0xffffffffu);  // 255 x 127
        b[lanes] = int32_t(0x7f7f7f7fu);
        std::vector<int32_t> c = random_words(n, 15), want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = reference(c[i], a[i / lanes * lanes], b[i]);
        auto module = codegen::jit_compile({f}, hsw);
        std::vector<void*> args = {a.data(), b.data(), c.data()};
        module->lookup(f->name)(args.data());
        EXPECT_EQ(c, want) << lanes << " lanes";
    }
}

// W[i] = the bytes round(X[4i + t] * 2), t = 0..3, as one word (a quantized
// row packed for an integer GEMM), `lanes` words at a time: byte t reads X
// at stride 4 from element t.
PrimFunc packed_row_func(const std::string& name, int64_t words, int lanes) {
    Buffer X("X", DataType::float32(), {Expr(4 * words)}, "global");
    Buffer W = int_buffer("W", words);
    Var io("io");
    Expr base = io * Expr(int64_t(lanes));
    Expr packed;
    for (int64_t t = 0; t < 4; ++t) {
        Expr x = ld(X, {Ramp::make(base * Expr(int64_t(4)) + Expr(t), Expr(int64_t(4)), lanes)});
        Expr byte = Cast::make(DataType::uint8().with_lanes(lanes),
                               tir::round(x * Broadcast::make(Expr(2.0f), lanes)));
        Expr term = Cast::make(DataType{DataType::UInt, 32, 1}.with_lanes(lanes), byte);
        if (t > 0)
            term = term * Broadcast::make(tir::make_const(DataType{DataType::UInt, 32, 1}, double(1 << (8 * t))),
                                          lanes);
        packed = packed.defined() ? tir::bitwise_or(packed, term) : term;
    }
    Stmt body = For::make(io, Expr(int64_t(0)), Expr(words / lanes), ForKind::Serial,
                          st(W, tir::reinterpret(DataType::int32(lanes), packed),
                             {Ramp::make(base, Expr(int64_t(1)), lanes)}));
    return PrimFunc(name, {X, W}, body);
}

TEST(LlvmPackedBytes, AQuantizedRowPackedIntoWordsIsReadContiguously) {
    // The four stride-4 reads of each word's bytes are one contiguous read of
    // 4 x lanes floats, and the words are the resulting bytes as they lie in
    // memory: no gather (DynamicQuantizeLinear's pack ran 16 vgatherqps per
    // 32 words, 0.35 ms for a 128 x 3072 row block).
    const int64_t words = 96;
    for (int lanes : {4, 8, 16, 32}) {
        PrimFunc f = packed_row_func("packed_x" + std::to_string(lanes), words, lanes);
        const std::string ir = codegen::emit_llvm_ir({f});
        EXPECT_EQ(ir.find("gather"), std::string::npos) << lanes << " lanes\n" << ir;
        std::mt19937 rng(7);
        std::vector<float> x(size_t(4 * words));
        for (float& v : x) v = float(rng() % 2000) / 16.0f;  // 0 .. 124.9: round(2x) fits a byte
        std::vector<int32_t> got(static_cast<size_t>(words)), interp = got, want = got;
        for (int64_t i = 0; i < words; ++i) {
            uint32_t w = 0;
            for (int t = 0; t < 4; ++t)
                w |= uint32_t(std::nearbyint(x[size_t(4 * i + t)] * 2.0f)) << (8 * t);
            want[size_t(i)] = int32_t(w);
        }
        run_jit(f, {x.data(), got.data()});
        tir::interpret(f, {x.data(), interp.data()});
        EXPECT_EQ(got, want) << lanes << " lanes";
        EXPECT_EQ(interp, want) << lanes << " lanes, interpreter";
    }
}

}  // namespace
}  // namespace tessera::test
