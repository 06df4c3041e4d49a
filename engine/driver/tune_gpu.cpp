// GPU autotuning: random GPU-sketch candidates, NVRTC, event timing on the
// device, every trial recorded as a "cuda" record.
#include "engine/driver/tune_gpu.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "engine/core/error.h"
#include "engine/runtime/cuda_driver.h"
#include "engine/runtime/ndarray.h"
#include "engine/tir/interpreter.h"
#ifdef TESSERA_WITH_CUDA
#include "engine/codegen/cuda/cuda_codegen.h"
#endif

namespace tessera::driver {

namespace {

graph::TensorType type_of(const tir::Buffer& b) {
    graph::TensorType t;
    t.shape = b.const_shape();
    t.dtype = b->dtype == tir::DataType::float32()   ? graph::DType::Float32
              : b->dtype == tir::DataType::int64()   ? graph::DType::Int64
              : b->dtype == tir::DataType::int32()   ? graph::DType::Int32
              : b->dtype == tir::DataType::boolean() ? graph::DType::Bool
              : b->dtype == tir::DataType::float64() ? graph::DType::Float64
              : b->dtype == tir::DataType::uint8()   ? graph::DType::UInt8
                                                     : graph::DType::Int8;
    return t;
}

double now_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

void require_gpu_for_tuning() {
#ifndef TESSERA_WITH_CUDA
    TS_USER_FAIL() << "no CUDA device is available: GPU tuning measures on the device (this "
                      "build has no CUDA support)";
#else
    if (runtime::cuda::available()) return;
    // The reason reads "no CUDA device is available (libcuda.so.1 not found)".
    std::string why = runtime::cuda::unavailable_reason();
    const std::string lead = "no CUDA device is available";
    if (why.rfind(lead, 0) == 0) why = why.substr(lead.size());
    while (!why.empty() && (why[0] == ' ' || why[0] == ':')) why.erase(0, 1);
    TS_USER_FAIL() << lead << ": GPU tuning measures on the device"
                   << (why.empty() ? "" : " " + why);
#endif
}

GpuCandidate build_gpu_candidate(const tir::PrimFunc& func, const autotune::GpuSketch& sketch,
                                 const std::string& arch) {
#ifndef TESSERA_WITH_CUDA
    (void)func, (void)sketch, (void)arch;
    TS_USER_FAIL() << "this build has no CUDA support";
#else
    GpuCandidate c;
    c.func = autotune::generate_gpu(func, sketch).func();
    codegen::CudaOptions o;
    o.arch = arch;
    codegen::CompiledCuda cc = codegen::compile_cuda({c.func}, o);
    TS_CHECK(cc.funcs.size() == 1) << "one function in, " << cc.funcs.size() << " out";
    TS_USER_CHECK(cc.funcs[0].workspaces.empty())
        << func->name << ": the candidate needs device workspaces (not measured by the tuner)";
    c.ptx = cc.ptx;
    c.source = cc.source;
    for (const codegen::CudaKernel& k : cc.funcs[0].kernels) {
        c.kernels.push_back(k.name);
        c.args.push_back(k.args);
        c.shared_bytes.push_back(k.shared_bytes);
        c.grids.push_back(k.grid);
        c.blocks.push_back(k.block);
    }
    return c;
#endif
}

#ifdef TESSERA_WITH_CUDA
namespace {

// Device buffers of a task's parameters, inputs random, and the reference
// outputs from the interpreter (small tasks only; empty otherwise).
struct TaskData {
    std::vector<runtime::NDArray> host;
    std::vector<runtime::cuda::DeviceBuffer> dev;
    std::vector<runtime::NDArray> expected;
};

TaskData task_data(const autotune::TuneTask& t, uint64_t seed) {
    TaskData d;
    const size_t num_inputs = t.func->params.size() - size_t(t.num_outputs);
    for (size_t i = 0; i < t.func->params.size(); ++i) {
        graph::TensorType type = type_of(t.func->params[i]);
        d.host.push_back(i < num_inputs ? runtime::random_ndarray(type, seed + i)
                                        : runtime::NDArray::empty(type));
        d.dev.emplace_back(std::max<size_t>(d.host.back().num_bytes(), 4));
        if (i < num_inputs) d.dev.back().copy_from_host(d.host[i].raw(), d.host[i].num_bytes());
    }
    if (t.flops <= 5e7) {  // the interpreter's reference, where it is quick
        std::vector<void*> ptrs;
        for (const auto& a : d.host) {
            d.expected.push_back(a.copy());
            ptrs.push_back(d.expected.back().raw());
        }
        tir::interpret(t.func, ptrs);
    }
    return d;
}

// Times one candidate; checks its outputs against `d.expected` when present.
std::vector<double> measure(const GpuCandidate& c, const std::string& kernel_prefix, TaskData& d,
                            int repeat, bool check) {
    runtime::cuda::Module module(c.ptx);
    std::vector<std::vector<uint64_t>> args;
    for (const std::vector<int>& ka : c.args) {
        args.emplace_back();
        for (int i : ka) args.back().push_back(d.dev.at(size_t(i)).ptr());
    }
    auto launch_all = [&] {
        for (size_t k = 0; k < c.kernels.size(); ++k)
            module.launch(c.kernels[k], c.grids[k], c.blocks[k], c.shared_bytes[k], args[k]);
    };
    launch_all();
    runtime::cuda::synchronize();
    if (check && !d.expected.empty()) {
        for (size_t p = d.host.size() - d.expected.size(); p < d.host.size(); ++p) {
            runtime::NDArray got = runtime::NDArray::empty(d.host[p].type());
            d.dev[p].copy_to_host(got.raw(), got.num_bytes());
            TS_USER_CHECK(runtime::allclose(got, d.expected[p], 1e-3, 1e-4))
                << kernel_prefix << ": the candidate's output " << p
                << " differs from the interpreter's";
        }
    }
    std::vector<double> times;
    for (int r = 0; r < repeat; ++r) {
        runtime::cuda::Event start, stop;
        start.record();
        launch_all();
        stop.record();
        times.push_back(stop.elapsed_ms_since(start));
    }
    return times;
}

}  // namespace
#endif

GpuTuneResult tune_gpu(const std::vector<autotune::TuneTask>& tasks, autotune::Database& db,
                       const GpuTuneOptions& options,
                       const std::function<void(const GpuTaskResult&)>& progress) {
    require_gpu_for_tuning();
    GpuTuneResult result;
#ifdef TESSERA_WITH_CUDA
    std::vector<const autotune::TuneTask*> tunable;
    for (const autotune::TuneTask& t : tasks) {
        if (autotune::gpu_sketch_block(t.func).empty()) ++result.skipped;
        else tunable.push_back(&t);
    }
    if (tunable.empty()) return result;
    const std::string arch = codegen::default_cuda_arch();
    const std::string machine = autotune::machine_fingerprint();
    std::mt19937_64 rng(options.seed);
    for (size_t ti = 0; ti < tunable.size(); ++ti) {
        const autotune::TuneTask& t = *tunable[ti];
        const int budget = options.trials / int(tunable.size()) +
                           (int(ti) < options.trials % int(tunable.size()) ? 1 : 0);
        GpuTaskResult tr{t.name, t.key, 0, 0, t.flops, 0, ""};
        TaskData data = task_data(t, options.seed);
        bool checked = false;
        for (int trial = 0; trial < budget; ++trial) {
            autotune::TuningRecord rec;
            rec.workload = t.key;
            rec.target = "cuda";
            rec.task = t.name;
            rec.flops = t.flops;
            rec.machine = machine;
            rec.threads = 1;
            try {
                autotune::GpuSketch s = autotune::sample_gpu(t.func, rng);
                rec.decisions = s.to_json();
                schedule::Schedule sch = autotune::generate_gpu(t.func, s);
                rec.trace = sch.trace();
                GpuCandidate c = build_gpu_candidate(t.func, s, arch);
                rec.times_ms = measure(c, t.name, data, options.repeat, !checked);
                checked = true;
                const double ms = rec.median_ms();
                if (tr.best_ms == 0 || ms < tr.best_ms) {
                    tr.best_ms = ms;
                    tr.best = rec.decisions;
                }
            } catch (const std::exception& e) {
                rec.error = e.what();
                ++tr.errors;
            }
            rec.timestamp = now_s();
            db.append(rec);
            ++tr.trials;
            ++result.measured;
            if (progress) progress(tr);
        }
        result.tasks.push_back(tr);
    }
#else
    (void)tasks, (void)db, (void)options, (void)progress;
#endif
    return result;
}

}  // namespace tessera::driver
