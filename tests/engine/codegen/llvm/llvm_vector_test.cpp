// Vector accesses (Ramp / Broadcast / gathers), loop kinds, several functions
// per module, and the IR / assembly text outputs.
#include <algorithm>
#include <cstring>

#include "engine/core/error.h"
#include "tests/engine/codegen/llvm/codegen_test_util.h"

namespace tessera::test {
namespace {

TEST(LlvmVector, RampLoadStoreWithBroadcast) {
    const int64_t N = 64;
    Buffer A = float_buffer("A", {N}), B = float_buffer("B", {N}), C = float_buffer("C", {N});
    Var io("io");
    Expr idx = Ramp::make(io * Expr(8), Expr(1), 8);
    Expr value = ld(A, {idx}) * ld(B, {idx}) + Broadcast::make(Expr(0.25f), 8);
    Stmt body = For::make(io, Expr(0), Expr(N / 8), ForKind::Serial, st(C, value, {idx}));
    PrimFunc f("vec_fma", {A, B, C}, body);
    auto a = random_floats(N, 20), b = random_floats(N, 21);
    std::vector<float> c(N, 0.f), interp(N, 0.f);
    run_jit(f, {a.data(), b.data(), c.data()});
    std::vector<float> want(N);
    for (int64_t k = 0; k < N; ++k) want[k] = a[k] * b[k] + 0.25f;
    expect_close(c, want, 1e-6);
    interpret(f, {a.data(), b.data(), interp.data()});
    expect_close(c, interp, 1e-6, "interpreter");
}

TEST(LlvmVector, RampInLastDimensionOfTwoDimensionalBuffer) {
    const int64_t M = 5, N = 16;
    Buffer A = float_buffer("A", {M, N}), C = float_buffer("C", {M, N});
    Var i("i"), jo("jo");
    Expr idx = Ramp::make(jo * Expr(4), Expr(1), 4);
    Stmt body = For::make(
        i, Expr(0), Expr(M), ForKind::Serial,
        For::make(jo, Expr(0), Expr(N / 4), ForKind::Vectorized,
                  st(C, exp(ld(A, {i, idx})) + Broadcast::make(Expr(1.0f), 4), {i, idx})));
    PrimFunc f("vec_2d", {A, C}, body);
    auto a = random_floats(M * N, 22);
    std::vector<float> c(M * N, 0.f), want(M * N);
    run_jit(f, {a.data(), c.data()});
    for (int64_t k = 0; k < M * N; ++k) want[k] = std::exp(a[k]) + 1.f;
    expect_close(c, want, 2e-6);
}

TEST(LlvmVector, StridedRampLoadAndScatter) {
    const int64_t N = 32;
    Buffer A = float_buffer("A", {N}), C = float_buffer("C", {N});
    Var io("io");
    // C[2k + 1] = tanh(A[2k]) for k in a group of 4 lanes.
    Expr even = Ramp::make(io * Expr(8), Expr(2), 4);
    Expr odd = Ramp::make(io * Expr(8) + Expr(1), Expr(2), 4);
    Stmt body = For::make(io, Expr(0), Expr(N / 8), ForKind::Serial, st(C, tanh(ld(A, {even})), {odd}));
    PrimFunc f("gather", {A, C}, body);
    auto a = random_floats(N, 23);
    std::vector<float> c(N, 7.f);
    run_jit(f, {a.data(), c.data()});
    for (int64_t k = 0; k < N; k += 2) {
        EXPECT_FLOAT_EQ(c[k], 7.f) << k;
        EXPECT_NEAR(c[k + 1], std::tanh(a[k]), 2e-6) << k;
    }
}

// A stride-2..4 read of 16 lanes is one load of the span the lanes cover
// and a shuffle, not a gather (a gather of bytes is one load per lane): a
// stride-2 conv's windows along a row. The buffer ends at the last lane.
TEST(LlvmVector, AStridedRampReadsItsSpanWithoutAGather) {
    for (const int64_t s : {2, 3, 4})
        for (const DataType t : {DataType::float32(), DataType::uint8()}) {
            const int64_t lanes = 16, N = s * (lanes - 1) + 1 + 5;
            Buffer A("A", t, {Expr(N)}, "global"), C = float_buffer("C", {lanes});
            Expr v = ld(A, {Ramp::make(Expr(int64_t(5)), Expr(s), lanes)});
            if (t != DataType::float32()) v = Cast::make(DataType::float32().with_lanes(lanes), v);
            Stmt body = st(C, v * Broadcast::make(Expr(0.5f), lanes),
                           {Ramp::make(Expr(int64_t(0)), Expr(int64_t(1)), lanes)});
            PrimFunc f("strided", {A, C}, body);
            std::vector<float> a = random_floats(size_t(N), 40);
            std::vector<uint8_t> bytes(static_cast<size_t>(N));
            for (int64_t k = 0; k < N; ++k) bytes[size_t(k)] = uint8_t(k * 37 % 256);
            std::vector<float> c(size_t(lanes), 0.f), want(static_cast<size_t>(lanes));
            void* in = t == DataType::float32() ? static_cast<void*>(a.data()) : bytes.data();
            run_jit(f, {in, c.data()});
            for (int64_t k = 0; k < lanes; ++k) {
                const size_t i = size_t(5 + k * s);
                want[size_t(k)] = 0.5f * (t == DataType::float32() ? a[i] : float(bytes[i]));
            }
            const std::string what = "stride " + std::to_string(s) + " " + t.str();
            expect_close(c, want, 0, what);
            EXPECT_EQ(codegen::emit_llvm_ir({f}).find("masked.gather"), std::string::npos) << what;
        }
}

TEST(LlvmVector, APaddedReadClampedInItsFirstLaneOnlyIsAShuffleNotAGather) {
    // A pool's window row clamped into the row, max(min(base + s * lane,
    // N - 1), 0), for bases -3..7 at strides 1 and 2 over bytes and floats:
    // unclamped (a plain or strided read), only the first lane clamped (x[0]
    // then the others' read: a padded row's first vector), or more lanes
    // clamped (the gather), each against the serial reading.
    for (const int64_t s : {1, 2})
        for (const DataType t : {DataType::float32(), DataType::uint8()}) {
            const int64_t lanes = 16, N = s * (lanes - 1) + 4, rows = 11;
            Buffer A("A", t, {Expr(N)}, "global"), C = float_buffer("C", {rows * lanes});
            Var r("r");
            Expr first = r - Expr(int64_t(3));
            Expr idx = Max::make(
                Min::make(Ramp::make(first, Expr(s), lanes), Broadcast::make(Expr(N - 1), lanes)),
                Broadcast::make(Expr(int64_t(0)), lanes));
            Expr v = ld(A, {idx});
            if (t != DataType::float32()) v = Cast::make(DataType::float32().with_lanes(lanes), v);
            Stmt body = For::make(r, Expr(0), Expr(rows), ForKind::Serial,
                                  st(C, v, {Ramp::make(r * Expr(lanes), Expr(int64_t(1)), lanes)}));
            PrimFunc f("clamped", {A, C}, body);
            std::vector<float> a = random_floats(size_t(N), 41);
            std::vector<uint8_t> bytes(static_cast<size_t>(N));
            for (int64_t k = 0; k < N; ++k) bytes[size_t(k)] = uint8_t(k * 53 % 256);
            std::vector<float> c(size_t(rows * lanes), 0.f), want(c.size());
            void* in = t == DataType::float32() ? static_cast<void*>(a.data()) : bytes.data();
            run_jit(f, {in, c.data()});
            for (int64_t row = 0; row < rows; ++row)
                for (int64_t k = 0; k < lanes; ++k) {
                    const size_t i = size_t(std::clamp<int64_t>(row - 3 + k * s, 0, N - 1));
                    want[size_t(row * lanes + k)] =
                        t == DataType::float32() ? a[i] : float(bytes[i]);
                }
            const std::string what = "stride " + std::to_string(s) + " " + t.str();
            expect_close(c, want, 0, what);
            // The codegen's branches before LLVM's passes (which may merge them).
            codegen::LlvmOptions unoptimized;
            unoptimized.opt_level = 0;
            EXPECT_NE(codegen::emit_llvm_ir({f}, unoptimized).find("load.head_clamped"),
                      std::string::npos)
                << what;
        }
}

// A contiguous run of lanes that is no power of two (a 7 x 7 plane's row)
// is read and written as one masked vector where the CPU has AVX-512 masks
// (LLVM split 7 bytes into stores of 4 + 2 + 1), whole 512-bit vectors
// first where the run is longer (14 doubles: 8 + a masked 6). The lanes
// past each run keep their values; results against the serial reading.
TEST(LlvmVector, AnOddRunOfLanesIsOneMaskedVectorWithAvx512) {
    struct Case {
        DataType in, out;
        int64_t lanes;
    };
    for (const Case c : {Case{DataType::float32(), DataType::uint8(), 7},
                         Case{DataType::uint8(), DataType::float32(), 14},
                         Case{DataType::float64(), DataType::float64(), 14},
                         Case{DataType::float32(), DataType::float32(), 16}}) {
        const int64_t rows = 5, stride = c.lanes + 3, N = rows * stride;
        Buffer A("A", c.in, {Expr(N)}, "global"), C("C", c.out, {Expr(N)}, "global");
        Var r("r");
        Expr at = Ramp::make(r * Expr(stride), Expr(int64_t(1)), int(c.lanes));
        Expr x = Cast::make(DataType::float64().with_lanes(int(c.lanes)), ld(A, {at}));
        Expr y = x * Broadcast::make(FloatImm::make(DataType::float64(), 0.5), int(c.lanes)) +
                 Broadcast::make(FloatImm::make(DataType::float64(), 3.0), int(c.lanes));
        Stmt body = For::make(r, Expr(0), Expr(rows), ForKind::Serial,
                              st(C, Cast::make(c.out.with_lanes(int(c.lanes)), y), {at}));
        PrimFunc f("odd_run", {A, C}, body);
        std::vector<double> a(size_t(N), 0.0), want(size_t(N), 0.0), got(size_t(N), 0.0);
        for (int64_t k = 0; k < N; ++k) a[size_t(k)] = double(k * 29 % 200);
        auto to = [&](DataType t, const std::vector<double>& v) {
            std::vector<uint8_t> bytes(size_t(N) * size_t(t.bytes()));
            for (int64_t k = 0; k < N; ++k) {
                if (t == DataType::uint8()) bytes[size_t(k)] = uint8_t(v[size_t(k)]);
                if (t == DataType::float32()) {
                    const float x = float(v[size_t(k)]);
                    std::memcpy(&bytes[size_t(k) * 4], &x, 4);
                }
                if (t == DataType::float64()) std::memcpy(&bytes[size_t(k) * 8], &v[size_t(k)], 8);
            }
            return bytes;
        };
        std::vector<double> sentinel(size_t(N), 77.0);
        std::vector<uint8_t> in = to(c.in, a), out = to(c.out, sentinel);
        run_jit(f, {in.data(), out.data()});
        for (int64_t k = 0; k < N; ++k) {
            const bool written = k % stride < c.lanes;
            want[size_t(k)] = written ? a[size_t(k)] * 0.5 + 3.0 : 77.0;
            if (c.out == DataType::uint8()) got[size_t(k)] = out[size_t(k)];
            if (c.out == DataType::float32()) {
                float x;
                std::memcpy(&x, &out[size_t(k) * 4], 4);
                got[size_t(k)] = x;
                if (written) want[size_t(k)] = float(want[size_t(k)]);
            }
            if (c.out == DataType::float64()) std::memcpy(&got[size_t(k)], &out[size_t(k) * 8], 8);
            if (c.out == DataType::uint8() && written)
                want[size_t(k)] = double(uint8_t(want[size_t(k)]));
        }
        const std::string what =
            std::to_string(c.lanes) + " lanes " + c.in.str() + " -> " + c.out.str();
        EXPECT_EQ(got, want) << what;
        codegen::LlvmOptions avx512;
        avx512.cpu = "znver4";
        avx512.features = "+avx512f,+avx512vl,+avx512bw";
        const std::string ir = codegen::emit_llvm_ir({f}, avx512);
        const bool pow2 = (c.lanes & (c.lanes - 1)) == 0;
        EXPECT_EQ(ir.find("llvm.masked.store") != std::string::npos, !pow2) << what;
        EXPECT_EQ(ir.find("llvm.masked.load") != std::string::npos, !pow2) << what;
        codegen::LlvmOptions avx2;
        avx2.cpu = "haswell";
        avx2.features = "+avx2,+fma";
        EXPECT_EQ(codegen::emit_llvm_ir({f}, avx2).find("llvm.masked."), std::string::npos) << what;
    }
}

// floordiv / floormod of a Ramp by a constant (a gather's index over rows
// of a padded plane, (q // 14) * 16 + q % 14): the base's quotient once and
// the lanes' small rest divided as 32-bit lanes (a vector of 64-bit
// divisions is a scalar multiply per lane). Negative bases, strides 1 and
// 2, divisors 3, 7, 14, 40; against the interpreter.
TEST(LlvmVector, ARampDividedByAConstantDividesItsLanesIn32Bits) {
    for (const int64_t d : {3, 7, 14, 40})
        for (const int64_t s : {1, 2}) {
            const int64_t lanes = 16, rows = 6, N = 4096;
            Buffer A = float_buffer("A", {N}), C = float_buffer("C", {rows * lanes});
            Var r("r");
            Expr q = Ramp::make(r * Expr(lanes) - Expr(int64_t(37)), Expr(s), int(lanes));
            Expr dd = Broadcast::make(Expr(d), int(lanes));
            Expr idx = FloorDiv::make(q, dd) * Broadcast::make(Expr(d + 2), int(lanes)) +
                       FloorMod::make(q, dd) + Broadcast::make(Expr(int64_t(2000)), int(lanes));
            Stmt body = For::make(
                r, Expr(0), Expr(rows), ForKind::Serial,
                st(C, ld(A, {idx}), {Ramp::make(r * Expr(lanes), Expr(int64_t(1)), int(lanes))}));
            PrimFunc f("ramp_div", {A, C}, body);
            auto a = random_floats(size_t(N), 42);
            std::vector<float> c(size_t(rows * lanes), 0.f), interp(c.size(), 0.f);
            run_jit(f, {a.data(), c.data()});
            interpret(f, {a.data(), interp.data()});
            const std::string what =
                "divisor " + std::to_string(d) + " stride " + std::to_string(s);
            expect_close(c, interp, 0, what);
            const std::string ir = codegen::emit_llvm_ir({f});
            EXPECT_NE(ir.find("udiv <16 x i32>"), std::string::npos) << what;
            EXPECT_EQ(ir.find("div <16 x i64>"), std::string::npos) << what;
        }
}

TEST(LlvmVector, LoopKindsRunEveryIteration) {
    const int64_t N = 24;
    for (ForKind kind : {ForKind::Serial, ForKind::Parallel, ForKind::Vectorized, ForKind::Unrolled}) {
        Buffer A = float_buffer("A", {N}), C = float_buffer("C", {N});
        Var i("i");
        Stmt body = For::make(i, Expr(0), Expr(N), kind, st(C, ld(A, {i}) * ld(A, {i}), {i}));
        PrimFunc f(std::string("kind_") + for_kind_name(kind), {A, C}, body);
        auto a = random_floats(N, 24);
        std::vector<float> c(N, 0.f), want(N);
        run_jit(f, {a.data(), c.data()});
        for (int64_t k = 0; k < N; ++k) want[k] = a[k] * a[k];
        expect_close(c, want, 0, for_kind_name(kind));
    }
}

TEST(LlvmVector, LetAndLetStmt) {
    const int64_t N = 10;
    Buffer A = float_buffer("A", {N}), C = float_buffer("C", {N});
    Var i("i"), t("t", DataType::float32()), j("j");
    Expr sq = Let::make(t, ld(A, {i}) + Expr(1.0f), t * t);
    Stmt body = For::make(i, Expr(0), Expr(N), ForKind::Serial,
                          LetStmt::make(j, Expr(N - 1) - i, st(C, sq, {j})));
    PrimFunc f("lets", {A, C}, body);
    auto a = random_floats(N, 25);
    std::vector<float> c(N, 0.f);
    run_jit(f, {a.data(), c.data()});
    for (int64_t k = 0; k < N; ++k) EXPECT_FLOAT_EQ(c[N - 1 - k], (a[k] + 1.f) * (a[k] + 1.f));
}

// A serial loop that folds a row into one element (a lowered block's init
// guarded by the first iteration, then acc = max(acc, x) or acc + x) is one
// vector reduced as a tree; widths that are no power of two stay loops. The
// results match the interpreter (sums within reassociation's rounding).
TEST(LlvmVector, ARowFoldedIntoOneElementIsATreeReduction) {
    for (const bool is_max : {true, false})
        for (const int64_t W : {32, 24}) {
            const int64_t R = 5;
            Buffer A = float_buffer("A", {R * W}), C = float_buffer("C", {R});
            Var r("r"), k("k");
            Expr acc = ld(C, {r});
            Expr x = exp(ld(A, {r * Expr(W) + k}));
            Stmt init = st(C, is_max ? Expr(-1e30f) : Expr(0.0f), {r});
            Stmt update = st(C, is_max ? tir::max(acc, x) : acc + x, {r});
            Stmt body = SeqStmt::make({IfThenElse::make(EQ::make(k, Expr(0)), init), update});
            Stmt loops = For::make(r, Expr(0), Expr(R), ForKind::Serial,
                                   For::make(k, Expr(0), Expr(W), ForKind::Serial, body));
            PrimFunc f(is_max ? "row_max" : "row_sum", {A, C}, loops);
            auto a = random_floats(R * W, 30);
            std::vector<float> c(R, 7.f), interp(R, 7.f);
            run_jit(f, {a.data(), c.data()});
            interpret(f, {a.data(), interp.data()});
            expect_close(c, interp, 1e-5, is_max ? "max" : "sum");
            const std::string ir = codegen::emit_llvm_ir({f});
            const bool tree = ir.find(is_max ? "llvm.vector.reduce.fmax" : "llvm.vector.reduce.fadd") !=
                              std::string::npos;
            EXPECT_EQ(tree, W == 32) << (is_max ? "max" : "sum") << " of " << W;
        }
}

TEST(LlvmModule, HoldsSeveralFunctions) {
    const int64_t N = 16;
    Buffer A = float_buffer("A", {N}), C = float_buffer("C", {N});
    Var i("i");
    PrimFunc twice("twice", {A, C},
                   For::make(i, Expr(0), Expr(N), ForKind::Serial, st(C, ld(A, {i}) * Expr(2.0f), {i})));
    Var k("k");
    PrimFunc neg("negate", {A, C},
                 For::make(k, Expr(0), Expr(N), ForKind::Serial, st(C, -ld(A, {k}), {k})));
    auto module = codegen::jit_compile({twice, neg});
    auto a = random_floats(N, 26);
    std::vector<float> c1(N), c2(N);
    std::vector<void*> args1{a.data(), c1.data()}, args2{a.data(), c2.data()};
    module->lookup("twice")(args1.data());
    module->lookup("negate")(args2.data());
    for (int64_t n = 0; n < N; ++n) {
        EXPECT_EQ(c1[n], a[n] * 2.f);
        EXPECT_EQ(c2[n], -a[n]);
    }
    EXPECT_THROW(module->lookup("missing"), InternalError);
}

PrimFunc small_func(const std::string& name) {
    const int64_t N = 32;
    Buffer A = float_buffer("A", {N}), C = float_buffer("C", {N});
    Var i("i");
    return PrimFunc(name, {A, C},
                    For::make(i, Expr(0), Expr(N), ForKind::Serial,
                              st(C, ld(A, {i}) + Expr(1.0f), {i})));
}

TEST(LlvmModule, EmitsLlvmIrWithTheFunction) {
    std::string ir = codegen::emit_llvm_ir({small_func("my_kernel")});
    EXPECT_NE(ir.find("define"), std::string::npos) << ir;
    EXPECT_NE(ir.find("@my_kernel("), std::string::npos) << ir;
    // The optimized add loop is vectorized on the host (AVX2 here: 8 lanes; at least SSE).
    EXPECT_NE(ir.find("fadd <"), std::string::npos) << ir;
}

TEST(LlvmModule, EmitsAssembly) {
    std::string asm_text = codegen::emit_assembly({small_func("asm_kernel")});
    EXPECT_NE(asm_text.find("asm_kernel:"), std::string::npos) << asm_text;
    EXPECT_NE(asm_text.find("ret"), std::string::npos);
}

TEST(LlvmModule, HostTargetDescriptionNamesTripleAndCpu) {
    std::string d = codegen::host_target_description();
    EXPECT_NE(d.find("x86_64"), std::string::npos) << d;
    EXPECT_NE(d.find("+sse2"), std::string::npos) << d;
}

TEST(LlvmModule, RejectsUnloweredReduce) {
    const int64_t N = 4;
    Buffer A = float_buffer("A", {N}), C = float_buffer("C", {1});
    IterVar k{Var("k"), Range{Expr(0), Expr(N)}, IterKind::Reduce, ""};
    Expr r = Reduce::make(ReduceKind::Sum, ld(A, {k.var}), {k});
    PrimFunc f("bad", {A, C}, st(C, r, {Expr(0)}));
    EXPECT_THROW(codegen::jit_compile({f}), InternalError);
}

}  // namespace
}  // namespace tessera::test
