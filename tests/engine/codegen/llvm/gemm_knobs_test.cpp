// The matmul rule's tunable knobs (topi::matmul_knobs, issue 7): the first
// choice of every knob is the default schedule, and random combinations of
// choices (register tile, cache blocks, packing of A and B, parallel) on odd
// shapes -- tails in M, N and K, K = 1, N = 1, transposed B with a bias
// epilogue -- compile and compute what the interpreter computes on the
// unscheduled loop nest, on 1 and 2 threads. Nothing is timed.
#include "tests/engine/codegen/llvm/codegen_test_util.h"

#include <algorithm>
#include <map>
#include <random>
#include <sstream>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/runtime/ndarray.h"
#include "engine/tir/passes/pass_manager.h"
#include "engine/tir/printer.h"
#include "engine/topi/cpu/schedule_cpu.h"
#include "engine/topi/topi.h"

namespace tessera::test {
namespace {

graph::Graph matmul(int64_t m, int64_t k, int64_t n) {
    return one_node("nn.matmul", {{m, k}, {k, n}}, {m, n});
}

topi::CpuScheduleOptions options(int threads) {
    topi::CpuScheduleOptions o;
    o.threads = threads;
    o.vector_lanes = codegen::host_vector_lanes();
    return o;
}

std::string describe(const std::map<std::string, int64_t>& knobs) {
    std::string s;
    for (const auto& [k, v] : knobs) s += k + "=" + std::to_string(v) + " ";
    return s;
}

/// Schedules node 0 with `knobs`, runs it through the JIT and compares with
/// the interpreter on the default loop nest (random inputs).
void check_knobs(const graph::Graph& g, const std::map<std::string, int64_t>& knobs, int threads) {
    tir::PrimFunc f = topi::lower_node(g, 0);
    topi::CpuScheduleOptions o = options(threads);
    o.knobs = knobs;
    tir::PrimFunc s = topi::schedule_cpu_default(f, g.nodes[0], o);
    std::vector<runtime::NDArray> arrays;
    std::vector<void*> args, ref_args;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        arrays.push_back(runtime::random_ndarray(g.values[size_t(g.inputs[i])].type, 40 + i));
        args.push_back(arrays.back().raw());
        ref_args.push_back(arrays.back().raw());
    }
    runtime::NDArray out = runtime::NDArray::empty(g.values[size_t(g.outputs[0])].type);
    runtime::NDArray want = runtime::NDArray::empty(out.type());
    args.push_back(out.raw());
    ref_args.push_back(want.raw());
    codegen::LlvmOptions lo;
    lo.threads = threads;
    auto module = codegen::jit_compile({s}, lo);
    module->lookup(s->name)(args.data());
    tir::interpret(f, ref_args);
    const float* got = out.data<float>();
    const float* ref = want.data<float>();
    int bad = 0;
    for (int64_t i = 0; i < out.num_elements() && bad < 3; ++i) {
        if (!(std::fabs(got[i] - ref[i]) <= 1e-4 * (1 + std::fabs(ref[i])))) {
            ADD_FAILURE() << "threads " << threads << " knobs " << describe(knobs) << "element "
                          << i << ": got " << got[i] << ", want " << ref[i];
            ++bad;
        }
    }
}

const topi::CpuKnob* find_knob(const std::vector<topi::CpuKnob>& ks, const std::string& name) {
    for (const topi::CpuKnob& k : ks)
        if (k.name == name) return &k;
    return nullptr;
}

TEST(GemmKnobs, FirstChoicesAreTheDefaultSchedule) {
    for (const graph::Graph& g : {matmul(200, 300, 150), matmul(7, 9, 5), matmul(1, 64, 1000)}) {
        tir::PrimFunc f = topi::lower_node(g, 0);
        for (int threads : {1, 0}) {
            topi::CpuScheduleOptions o = options(threads);
            std::vector<topi::CpuKnob> ks = topi::cpu_schedule_knobs(f, g.nodes[0], o);
            ASSERT_NE(find_knob(ks, "matmul.mr"), nullptr);
            ASSERT_NE(find_knob(ks, "matmul.nr_vectors"), nullptr);
            for (const topi::CpuKnob& k : ks) {
                ASSERT_FALSE(k.choices.empty()) << k.name;
                o.knobs[k.name] = k.choices.front();
            }
            EXPECT_EQ(tir::print(topi::schedule_cpu_default(f, g.nodes[0], o)),
                      tir::print(topi::schedule_cpu_default(f, g.nodes[0], options(threads))));
        }
    }
    // A product large enough to be blocked offers the cache-block knobs.
    graph::Graph big = matmul(200, 300, 150);
    auto ks = topi::cpu_schedule_knobs(topi::lower_node(big, 0), big.nodes[0], options(1));
    for (const char* name : {"matmul.kc", "matmul.mc", "matmul.nc", "matmul.pack_a", "matmul.pack_b"})
        EXPECT_NE(find_knob(ks, name), nullptr) << name;
}

// Every KC the tuner may try divides K: another leaves a tail guard inside
// the k loop of every register tile (K = 768 at KC 512 ran 2.4x slower), a
// trial that cannot win. K = 768 and 300 offer only divisors; 1024 many.
TEST(GemmKnobs, TheKcChoicesDivideK) {
    for (int64_t k : {768, 300, 1024}) {
        graph::Graph g = matmul(128, k, 768);
        auto ks = topi::cpu_schedule_knobs(topi::lower_node(g, 0), g.nodes[0], options(1));
        const topi::CpuKnob* kc = find_knob(ks, "matmul.kc");
        ASSERT_NE(kc, nullptr) << k;
        for (int64_t v : kc->choices) EXPECT_EQ(k % v, 0) << "KC " << v << " of K " << k;
        if (k == 768) {
            EXPECT_GE(kc->choices.size(), 4u);
        }
    }
}

// A few rows against a B beyond L2 (a transformer's projection at sequence
// 128): each KC block of a panel prefetches the next one (a software_prefetch
// annotation on the KC loop) unless the knob turns it off; both compute the
// product, also where the last block's prefetch points past the panel.
TEST(GemmKnobs, AFewRowsAgainstALargeBPrefetchTheNextKcBlock) {
    graph::Graph g = matmul(32, 768, 1024);  // 3 MB of B, beyond any L2 of 2 MB or less
    tir::PrimFunc f = topi::lower_node(g, 0);
    auto ks = topi::cpu_schedule_knobs(f, g.nodes[0], options(1));
    const topi::CpuKnob* knob = find_knob(ks, "matmul.prefetch_block");
    ASSERT_NE(knob, nullptr);
    ASSERT_EQ(knob->choices.front(), 1);  // the default
    const std::string on = tir::print(topi::schedule_cpu_default(f, g.nodes[0], options(1)));
    EXPECT_NE(on.find(tir::kPrefetchAnnotation), std::string::npos) << on;
    topi::CpuScheduleOptions off = options(1);
    off.knobs["matmul.prefetch_block"] = 0;
    EXPECT_EQ(tir::print(topi::schedule_cpu_default(f, g.nodes[0], off)).find(tir::kPrefetchAnnotation),
              std::string::npos);
    check_knobs(g, {}, 1);
    check_knobs(g, {{"matmul.prefetch_block", 0}}, 1);
    check_knobs(g, {}, 2);
    // A B that fits in L2 prefetches nothing.
    graph::Graph small = matmul(32, 128, 256);
    EXPECT_EQ(tir::print(topi::schedule_cpu_default(topi::lower_node(small, 0), small.nodes[0],
                                                    options(1)))
                  .find(tir::kPrefetchAnnotation),
              std::string::npos);
}

// A knob the options set (the driver's choice for the kernel's context: a B
// computed at run time is not packed) is the first choice, so the tuner's
// default candidate schedules the kernel the driver builds.
TEST(GemmKnobs, AKnobTheOptionsSetIsTheFirstChoice) {
    graph::Graph g = matmul(200, 300, 150);
    tir::PrimFunc f = topi::lower_node(g, 0);
    const topi::CpuKnob* pack = nullptr;
    std::vector<topi::CpuKnob> plain = topi::cpu_schedule_knobs(f, g.nodes[0], options(1));
    pack = find_knob(plain, "matmul.pack_b");
    ASSERT_NE(pack, nullptr);
    ASSERT_GE(pack->choices.size(), 2u);
    topi::CpuScheduleOptions set = options(1);
    set.knobs["matmul.pack_b"] = pack->choices[1];  // not the rule's own default
    std::vector<topi::CpuKnob> ks = topi::cpu_schedule_knobs(f, g.nodes[0], set);
    ASSERT_EQ(ks.size(), plain.size());
    topi::CpuScheduleOptions first = options(1);
    for (size_t i = 0; i < ks.size(); ++i) {
        EXPECT_EQ(ks[i].name, plain[i].name);
        std::vector<int64_t> a = ks[i].choices, b = plain[i].choices;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        EXPECT_EQ(a, b) << ks[i].name << ": the same choices";
        first.knobs[ks[i].name] = ks[i].choices.front();
    }
    EXPECT_EQ(find_knob(ks, "matmul.pack_b")->choices.front(), pack->choices[1]);
    EXPECT_EQ(tir::print(topi::schedule_cpu_default(f, g.nodes[0], first)),
              tir::print(topi::schedule_cpu_default(f, g.nodes[0], set)));
}

// On 2 threads the rule splits the rows when A is the larger operand and B
// fits in L2 (an integer conv's weights [512, K] against a 7x7 plane's 49
// windows: each thread reads half of A), into as many MC blocks per thread;
// a B larger than A (a dense layer's weights) keeps splitting the columns
// (BLIS order 1, or order 2 for a B beyond L2). Both compute the product.
TEST(GemmKnobs, TwoThreadsSplitTheLargerOperand) {
    auto defaults = [](const graph::Graph& g) {
        std::map<std::string, int64_t> d;
        for (const topi::CpuKnob& k :
             topi::cpu_schedule_knobs(topi::lower_node(g, 0), g.nodes[0], options(2)))
            d[k.name] = k.choices.front();
        return d;
    };
    graph::Graph tall = matmul(512, 576, 49), wide = matmul(128, 384, 1536);
    std::map<std::string, int64_t> t = defaults(tall), w = defaults(wide);
    EXPECT_EQ(t.at("matmul.order"), 0);
    const int64_t blocks = (512 + t.at("matmul.mc") - 1) / t.at("matmul.mc");
    EXPECT_EQ(blocks % 2, 0) << "mc " << t.at("matmul.mc");
    EXPECT_LE(t.at("matmul.mc"), 72);
    EXPECT_NE(w.at("matmul.order"), 0);
    check_knobs(tall, {}, 2);
    check_knobs(wide, {}, 2);
}

TEST(GemmKnobs, EveryChoiceAloneComputesTheProduct) {
    // Tails everywhere: 37 = 4 * 8 + 5 rows, 45 columns, K = 131 (prime).
    graph::Graph g = matmul(37, 131, 45);
    tir::PrimFunc f = topi::lower_node(g, 0);
    std::vector<topi::CpuKnob> ks = topi::cpu_schedule_knobs(f, g.nodes[0], options(0));
    for (const topi::CpuKnob& k : ks)
        for (size_t c = 1; c < k.choices.size(); c += 2)  // every other non-default choice
            check_knobs(g, {{k.name, k.choices[c]}}, 0);
}

TEST(GemmKnobs, EdgeTilesLeaveTheMainBodyUnguarded) {
    // MR = 6 over 134 rows (a 2-row last tile) and 3 vectors of columns over
    // 96 (+ 100: a masked column tail): the partial row tile keeps only its
    // valid rows (no guarded loop over the missing tiles), and the 3-vector
    // width is emitted as single vectors (LLVM scalarizes 48-lane vectors).
    const int lanes = codegen::host_vector_lanes();
    for (int64_t n : {6 * int64_t(lanes), 6 * int64_t(lanes) + 4}) {
        graph::Graph g = matmul(134, 200, n);
        std::map<std::string, int64_t> knobs = {{"matmul.mr", 6}, {"matmul.nr_vectors", 3}};
        for (int64_t blocked : {0, 1}) {
            knobs["matmul.blocked"] = blocked;
            knobs["matmul.pack_b"] = blocked;
            topi::CpuScheduleOptions o = options(1);
            o.knobs = knobs;
            tir::PrimFunc f = topi::lower_node(g, 0);
            std::string text = tir::print(
                tir::lower_for_codegen(topi::schedule_cpu_default(f, g.nodes[0], o)));
            std::istringstream lines(text);
            for (std::string line; std::getline(lines, line);) {
                if (line.find("T_matmul") != std::string::npos) {  // (not B's packing copy)
                    EXPECT_EQ(line.find(", " + std::to_string(3 * lanes) + ")"), std::string::npos)
                        << line;
                }
            }
            if (n % lanes == 0) {
                EXPECT_EQ(text.find("if "), std::string::npos) << text;
            }
            check_knobs(g, knobs, 1);
        }
    }
}

TEST(GemmKnobs, GemvPrefetchAndPackingComputeTheProduct) {
    // One row of A: B packed into panels by default (a column tail at 1000
    // and 237), the software prefetch of B on and off, 1 and 2 threads.
    for (const graph::Graph& g : {matmul(1, 300, 1000), matmul(1, 131, 237)}) {
        tir::PrimFunc f = topi::lower_node(g, 0);
        std::vector<topi::CpuKnob> ks = topi::cpu_schedule_knobs(f, g.nodes[0], options(1));
        const topi::CpuKnob* pf = find_knob(ks, "matmul.prefetch");
        ASSERT_NE(pf, nullptr);
        EXPECT_EQ(pf->choices.front(), 0);
        // The default packs B (its panel copy is a block of its own).
        const std::string text = tir::print(topi::schedule_cpu_default(f, g.nodes[0], options(1)));
        EXPECT_NE(text.find("_packed"), std::string::npos) << text;
        // The knob's prefetches reach the code generator's input.
        topi::CpuScheduleOptions o = options(1);
        o.knobs["matmul.prefetch"] = pf->choices.back();
        const std::string lowered =
            tir::print(tir::lower_for_codegen(topi::schedule_cpu_default(f, g.nodes[0], o)));
        EXPECT_NE(lowered.find("tir.prefetch"), std::string::npos) << lowered;
        for (int threads : {1, 2})
            for (int64_t prefetch : pf->choices)
                for (int64_t pack : {1, 0})
                    check_knobs(g, {{"matmul.prefetch", prefetch}, {"matmul.pack_b", pack}}, threads);
    }
}

TEST(GemmKnobs, RandomCombinationsOnOddShapes) {
    std::vector<graph::Graph> shapes = {
        matmul(37, 131, 45),  // tails in M, N, K
        matmul(70, 523, 33),  // K above the default KC, prime
        matmul(19, 1, 40),    // K = 1
        matmul(45, 60, 1),    // N = 1
        matmul(1, 70, 100),   // GEMV-like
        // B transposed (N x K) with alpha and a bias: the packing transposes,
        // the epilogue runs at the tile loop.
        one_node("nn.gemm", {{41, 150}, {100, 150}, {100}}, {41, 100},
                 {{"transB", int64_t(1)}, {"alpha", 0.5}}),
    };
    std::mt19937_64 rng(7);
    for (size_t si = 0; si < shapes.size(); ++si) {
        const graph::Graph& g = shapes[si];
        tir::PrimFunc f = topi::lower_node(g, 0);
        for (int round = 0; round < 4; ++round) {
            const int threads = round % 2 ? 1 : 0;
            std::vector<topi::CpuKnob> ks = topi::cpu_schedule_knobs(f, g.nodes[0], options(threads));
            std::map<std::string, int64_t> knobs;
            for (const topi::CpuKnob& k : ks)
                knobs[k.name] =
                    k.choices[std::uniform_int_distribution<size_t>(0, k.choices.size() - 1)(rng)];
            if (round == 0 && find_knob(ks, "matmul.blocked")) {
                knobs["matmul.blocked"] = 1;  // the cache-blocked path with both operands packed
                if (find_knob(ks, "matmul.pack_a")) knobs["matmul.pack_a"] = 1;
                if (find_knob(ks, "matmul.pack_b")) knobs["matmul.pack_b"] = 1;
            }
            SCOPED_TRACE("shape " + std::to_string(si) + " threads " + std::to_string(threads));
            check_knobs(g, knobs, threads);
        }
    }
}

}  // namespace
}  // namespace tessera::test
