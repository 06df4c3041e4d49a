// The seeds' GEMM ladder (Day 32: naive -> +tiling -> +reorder -> +vectorize
// -> +parallel -> +unroll): each rung is the previous Trace plus one idea,
// applied with the Schedule API to the default loop nest and JIT-compiled.
#include <cmath>
#include <cstring>
#include <functional>

#include "bench/lib/bench.h"
#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/runtime/graph_executor.h"
#include "engine/runtime/ndarray.h"
#include "engine/schedule/schedule.h"
#include "engine/te/tensor.h"
#include "engine/tir/interpreter.h"

namespace tessera::bench {

namespace {

tir::PrimFunc matmul_func(int64_t n) {
    te::Tensor a = te::placeholder({n, n}, tir::DataType::float32(), "A");
    te::Tensor b = te::placeholder({n, n}, tir::DataType::float32(), "B");
    tir::IterVar k = te::reduce_axis(n, "k");
    te::Tensor c = te::compute(
        {n, n},
        [&](const std::vector<tir::Var>& i) { return te::sum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
        "C", "matmul");
    return te::create_prim_func({a, b, c}, "matmul_ladder");
}

}  // namespace

std::vector<LadderRow> gemm_ladder(int64_t n, int threads) {
    TS_USER_CHECK(n >= 32 && n % 32 == 0) << "bench gemm --ladder: size must be a multiple of 32";
    const tir::PrimFunc base = matmul_func(n);
    using Rung = std::function<void(schedule::Schedule&, std::vector<std::string>&)>;
    // loops: the names the rungs refer to, updated as they split.
    std::vector<std::pair<std::string, Rung>> rungs = {
        {"naive", [](schedule::Schedule&, std::vector<std::string>&) {}},
        {"+tiling (32x32)",
         [](schedule::Schedule& s, std::vector<std::string>& l) {
             auto t = s.tile(l[0], l[1], 32, 32);  // io, jo, ii, ji ; k innermost
             l = {t[0], t[1], t[2], t[3], l[2]};
         }},
        {"+reorder (k split 4)",
         [](schedule::Schedule& s, std::vector<std::string>& l) {
             auto k = s.split(l[4], {-1, 4});
             s.reorder({l[0], l[1], k[0], l[2], k[1], l[3]});  // io jo ko ii ki ji
             l = {l[0], l[1], k[0], l[2], k[1], l[3]};
         }},
        {"+vectorize (ji)", [](schedule::Schedule& s, std::vector<std::string>& l) { s.vectorize(l[5]); }},
        {"+parallel (io)", [](schedule::Schedule& s, std::vector<std::string>& l) { s.parallel(l[0]); }},
        {"+unroll (ki)", [](schedule::Schedule& s, std::vector<std::string>& l) { s.unroll(l[4]); }},
    };

    graph::TensorType t{graph::DType::Float32, {n, n}};
    runtime::NDArray A = runtime::random_ndarray(t, 1), B = runtime::random_ndarray(t, 2);
    runtime::NDArray C = runtime::NDArray::empty(t), ref = runtime::NDArray::empty(t);
    if (auto set = runtime::default_thread_setter()) set(threads > 0 ? threads : 1);
    std::vector<LadderRow> rows;
    schedule::Schedule s(base);
    std::vector<std::string> loops = s.get_loops(s.blocks().back());
    for (auto& [name, rung] : rungs) {
        rung(s, loops);
        codegen::LlvmOptions options;
        options.threads = threads;
        auto module = codegen::jit_compile({s.func()}, options);
        runtime::KernelFn fn = module->lookup(s.func()->name);
        std::vector<void*> args = {A.raw(), B.raw(), C.raw()};
        LadderRow row;
        row.name = name;
        row.trace = s.trace();
        // The naive rung at 1024^3 takes seconds: a few runs are enough.
        row.m = measure([&] { fn(args.data()); }, rows.empty() ? 0.0 : 0.3, rows.empty() ? 3 : 7);
        row.gflops = gflops(2.0 * double(n) * double(n) * double(n), row.m.median_ms);
        row.speedup = rows.empty() ? 1.0 : rows.front().m.median_ms / row.m.median_ms;
        if (rows.empty()) {
            std::memcpy(ref.raw(), C.raw(), ref.num_bytes());
        } else {
            const float* c = C.data<float>();
            const float* r = ref.data<float>();
            for (int64_t i = 0; i < n * n; ++i)
                TS_CHECK(std::fabs(c[i] - r[i]) <= 1e-3f * (1.f + std::fabs(r[i])))
                    << "ladder rung '" << name << "' differs from the naive result at " << i;
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace tessera::bench
