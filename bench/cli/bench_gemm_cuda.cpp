// The CUDA GEMM benchmark: our default-scheduled SGEMM (shared-memory tiles,
// register tiles) and cublasSgemm on the same buffers, timed with events.
#include "bench/cli/bench_gemm_cuda.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/cli/cli_cuda.h"
#include "engine/autotune/search_gpu.h"
#include "engine/autotune/task.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/driver/tune_gpu.h"
#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/runtime/cuda_driver.h"
#include "engine/te/tensor.h"
#include "engine/topi/gpu/schedule_gpu.h"

namespace tessera::cli {

namespace {

namespace cuda = runtime::cuda;

tir::PrimFunc gemm_func(int64_t m, int64_t n, int64_t k) {
    te::Tensor a = te::placeholder({m, k}, tir::DataType::float32(), "A");
    te::Tensor b = te::placeholder({k, n}, tir::DataType::float32(), "B");
    tir::IterVar r = te::reduce_axis(k, "k");
    te::Tensor c = te::compute(
        {m, n},
        [&](const std::vector<tir::Var>& i) {
            return te::sum(a(i[0], r.var) * b(r.var, i[1]), {r});
        },
        "C");
    return te::create_prim_func({a, b, c}, "sgemm");
}

// cuBLAS v2 entry points, found at run time.
struct Cublas {
    void* lib = nullptr;
    int (*create)(void**) = nullptr;
    int (*destroy)(void*) = nullptr;
    int (*sgemm)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                 const float*, float*, int) = nullptr;
    std::string error;

    bool load() {
        // The loader's path first, then the toolkit's folder (often not in
        // ld.so.conf, as for NVRTC).
        std::vector<std::string> folders = {""};
        if (const char* home = std::getenv("CUDA_HOME")) folders.push_back(std::string(home) + "/lib64/");
        folders.push_back("/usr/local/cuda/lib64/");
        for (const std::string& folder : folders) {
            for (const char* name :
                 {"libcublas.so", "libcublas.so.13", "libcublas.so.12", "libcublas.so.11"})
                if ((lib = dlopen((folder + name).c_str(), RTLD_NOW | RTLD_LOCAL))) break;
            if (lib) break;
        }
        if (!lib)
            return error =
                       "libcublas.so cannot be loaded (is the CUDA toolkit's cuBLAS installed?)",
                   false;
        create = reinterpret_cast<decltype(create)>(dlsym(lib, "cublasCreate_v2"));
        destroy = reinterpret_cast<decltype(destroy)>(dlsym(lib, "cublasDestroy_v2"));
        sgemm = reinterpret_cast<decltype(sgemm)>(dlsym(lib, "cublasSgemm_v2"));
        if (!create || !destroy || !sgemm)
            return error = "libcublas.so lacks cublasSgemm_v2", false;
        return true;
    }
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int run_gemm_cuda_bench(const CudaGemmBench& b) {
    if (!b.compare.empty() && b.compare != "cublas") {
        std::cerr << "tessera bench gemm --target cuda: unknown --compare '" << b.compare
                  << "' (use cublas)\n";
        return kUserError;
    }
    tir::PrimFunc f;
    if (!b.records.empty()) {
        // The task `tessera tune --target cuda --gemm MxNxK` records (same key).
        driver::BuildOptions bo;
        bo.target = "cuda";
        std::vector<autotune::TuneTask> tasks = autotune::extract_tasks(
            driver::optimize(autotune::gemm_graph(b.m, b.n, b.k), bo), "cuda", 1);
        TS_CHECK(tasks.size() == 1) << "the GEMM graph gave " << tasks.size() << " tasks";
        autotune::Database records(b.records, /*read_only=*/true);
        f = autotune::apply_best_gpu(tasks[0].func, records);
        driver::GpuRecordsUse use;
        use.kernels = 1;
        use.tuned = f.defined() ? 1 : 0;
        std::cerr << driver::gpu_records_note(records, use) << "\n";
        if (!f.defined()) f = topi::schedule_gpu_default(tasks[0].func);
    } else {
        f = topi::schedule_gpu_default(gemm_func(b.m, b.n, b.k));
    }
    codegen::CompiledCuda c = codegen::compile_cuda({f});
    const codegen::CudaKernel& kern = c.funcs[0].kernels[0];
    TS_CHECK(c.funcs[0].kernels.size() == 1 && c.funcs[0].workspaces.empty() &&
             kern.args.size() == 3)
        << "the GEMM kernel must be one launch on A, B and C";
    std::printf("gemm m=%lld n=%lld k=%lld fp32, cuda (%s)\n", (long long)b.m, (long long)b.n,
                (long long)b.k, c.arch.c_str());
    std::printf(
        "  kernel %s grid (%lld, %lld, %lld) block (%lld, %lld, %lld), %lld B shared, %zu B PTX\n",
        kern.name.c_str(), (long long)kern.grid[0], (long long)kern.grid[1],
        (long long)kern.grid[2], (long long)kern.block[0], (long long)kern.block[1],
        (long long)kern.block[2], (long long)kern.shared_bytes, c.ptx.size());
    if (!cuda::available()) {
        std::cerr << "tessera bench gemm --target cuda: " << cuda::unavailable_reason()
                  << "; the kernel compiled but cannot run here\n";
        return kUserError;
    }
    Cublas blas;
    if (b.compare == "cublas" && !blas.load()) {
        std::cerr << "tessera bench gemm --target cuda --compare cublas: " << blas.error << "\n";
        return kUserError;
    }
    size_t na = size_t(b.m * b.k), nb = size_t(b.k * b.n), nc = size_t(b.m * b.n);
    std::vector<float> ha(na), hb(nb), ours(nc), theirs(nc);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (float& x : ha) x = dist(rng);
    for (float& x : hb) x = dist(rng);
    cuda::DeviceBuffer da(na * 4), db(nb * 4), dc(nc * 4), dc2(nc * 4);
    da.copy_from_host(ha.data(), na * 4);
    db.copy_from_host(hb.data(), nb * 4);
    cuda::Module mod(c.ptx);
    std::printf("  device: %s\n", cuda::device_info().name.c_str());
    void* handle = nullptr;
    if (b.compare == "cublas" && blas.create(&handle) != 0) {
        std::cerr << "tessera bench gemm: cublasCreate failed\n";
        return kUserError;
    }
    auto time_ms = [&](const auto& launch) {
        launch();  // warm-up
        cuda::synchronize();
        cuda::Event start, stop;
        int reps = 10;
        start.record();
        for (int i = 0; i < reps; ++i) launch();
        stop.record();
        return double(stop.elapsed_ms_since(start)) / reps;
    };
    auto run_ours = [&] {
        const uint64_t params[3] = {da.ptr(), db.ptr(), dc.ptr()};  // A, B, C
        mod.launch(kern.name, kern.grid, kern.block, 0,
                   {params[kern.args[0]], params[kern.args[1]], params[kern.args[2]]});
    };
    const float one = 1.f, zero = 0.f;
    auto run_theirs = [&] {
        // Row-major C = A B is column-major C^T = B^T A^T.
        blas.sgemm(handle, 0, 0, int(b.n), int(b.m), int(b.k), &one,
                   reinterpret_cast<const float*>(db.ptr()), int(b.n),
                   reinterpret_cast<const float*>(da.ptr()), int(b.k), &zero,
                   reinterpret_cast<float*>(dc2.ptr()), int(b.n));
    };
    std::vector<double> t_ours, t_theirs;
    for (int r = 0; r < std::max(1, b.rounds); ++r) {
        t_ours.push_back(time_ms(run_ours));
        if (handle) t_theirs.push_back(time_ms(run_theirs));
    }
    cuda::synchronize();
    double flops = 2.0 * double(b.m) * double(b.n) * double(b.k);
    double mo = median(t_ours);
    std::printf("  tessera : %9.4f ms  %8.1f GFLOP/s  (median of %d)\n", mo, flops / mo / 1e6,
                int(t_ours.size()));
    if (handle) {
        dc.copy_to_host(ours.data(), nc * 4);
        dc2.copy_to_host(theirs.data(), nc * 4);
        double err = 0;
        for (size_t i = 0; i < nc; ++i) err = std::max(err, double(std::fabs(ours[i] - theirs[i])));
        double mt = median(t_theirs);
        std::printf("  cublas  : %9.4f ms  %8.1f GFLOP/s  (cublasSgemm)\n", mt, flops / mt / 1e6);
        std::printf("  ratio (their time / our time): %.3f   max abs err %.2e\n", mt / mo, err);
        blas.destroy(handle);
    }
    return kOk;
}

}  // namespace tessera::cli
