// GPU autotuning: the GPU-sketch search (autotune/search_gpu.h) measuring
// with NVRTC and event timing on the device, every trial a "cuda" record.
#include "engine/driver/tune_gpu.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <random>

#include "engine/autotune/cost_model.h"
#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
#include "engine/driver/gpu_measure_worker.h"
#include "engine/runtime/cuda_driver.h"
#include "engine/runtime/ndarray.h"
#include "engine/tir/interpreter.h"
#include "engine/topi/topi.h"

namespace tessera::driver {

void require_gpu_for_tuning() {
    if (runtime::cuda::available()) return;
    // The reason reads "no CUDA device is available (libcuda.so.1 not found)".
    std::string why = runtime::cuda::unavailable_reason();
    const std::string lead = "no CUDA device is available";
    if (why.rfind(lead, 0) == 0) why = why.substr(lead.size());
    while (!why.empty() && (why[0] == ' ' || why[0] == ':')) why.erase(0, 1);
    TS_USER_FAIL() << lead << ": GPU tuning measures on the device"
                   << (why.empty() ? "" : " " + why);
}

namespace {

// A candidate whose first timed run is this many times the task's best
// median so far is timed only once.
constexpr double kSlowCandidateFactor = 4.0;

// How runtime::cuda says that it found no usable device.
constexpr const char* kNoDevice = "no CUDA device is available";

// A scheduled candidate compiled with NVRTC, with its launches and workspaces.
GpuCandidate compile_candidate(const tir::PrimFunc& scheduled, const std::string& arch) {
    GpuCandidate c;
    c.func = scheduled;
    codegen::CudaOptions o;
    o.arch = arch;
    codegen::CompiledCuda cc = codegen::compile_cuda({c.func}, o);
    TS_CHECK(cc.funcs.size() == 1) << "one function in, " << cc.funcs.size() << " out";
    for (const tir::Buffer& w : cc.funcs[0].workspaces)
        c.workspace_bytes.push_back(w.num_elements() * w->dtype.bytes());
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
}

}  // namespace

void check_gpu_candidate(const tir::PrimFunc& scheduled) {
    codegen::CompiledCuda cc = codegen::lower_cuda({scheduled});
    TS_CHECK(cc.funcs.size() == 1) << "one function in, " << cc.funcs.size() << " out";
}

GpuCandidate build_gpu_candidate(const tir::PrimFunc& func, const autotune::GpuSketch& sketch,
                                 const std::string& arch) {
    return compile_candidate(autotune::generate_gpu(func, sketch).func(), arch);
}

namespace {

// A task's arrays: inputs random, and the interpreter's reference outputs
// (small tasks only; empty otherwise).
GpuTaskArrays task_arrays(const autotune::TuneTask& t, uint64_t seed) {
    GpuTaskArrays d;
    const size_t num_inputs = t.func->params.size() - size_t(t.num_outputs);
    d.first_output = num_inputs;
    for (size_t i = 0; i < t.func->params.size(); ++i) {
        graph::TensorType type = topi::tensor_type_of(t.func->params[i]);
        d.host.push_back(i < num_inputs ? runtime::random_ndarray(type, seed + i)
                                        : runtime::NDArray::empty(type));
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

}  // namespace

namespace {

GpuTaskResult task_result(const autotune::GpuSearchState& st) {
    GpuTaskResult tr;
    tr.name = st.name;
    tr.key = st.key;
    tr.trials = st.trials;
    tr.resumed = st.resumed;
    tr.errors = st.errors;
    tr.weight = st.weight;
    tr.flops = st.flops;
    tr.best_ms = st.best_ms;
    tr.default_ms = st.default_ms;
    tr.best = st.best;
    tr.confirmed = st.confirmed;
    return tr;
}

}  // namespace

GpuTuneResult tune_gpu(const std::vector<autotune::TuneTask>& tasks, autotune::Database& db,
                       const GpuTuneOptions& options,
                       const std::function<void(const GpuTaskResult&)>& progress) {
    assert_engine_work_allowed("driver::tune_gpu");
    require_gpu_for_tuning();
    GpuTuneResult result;
    std::vector<const autotune::TuneTask*> tunable;
    for (const autotune::TuneTask& t : tasks) {
        if (autotune::gpu_sketch_block(t.func).empty())
            ++result.skipped;
        else
            tunable.push_back(&t);
    }
    if (tunable.empty()) return result;
    const std::string arch = codegen::default_cuda_arch();
    autotune::GpuTuneLoopOptions lo;
    lo.trials = options.trials;
    lo.seed = options.seed;
    lo.search = options.search;
    if (!lo.search.check) lo.search.check = check_gpu_candidate;  // the verifier, before a trial
    lo.search.device = autotune::gpu_fingerprint();
    lo.confirm_top = options.confirm_top;
    lo.confirm_rounds = options.confirm_rounds;
    // Each task's arrays (and, measuring here, its device buffers), made
    // when it is first measured.
    std::vector<std::optional<GpuTaskArrays>> arrays(tunable.size());
    std::vector<std::unique_ptr<GpuTaskBuffers>> buffers(tunable.size());
    // Measured in a worker process (tessera-gpu-worker): a faulting
    // candidate ends the worker, not the tuner.
    std::unique_ptr<GpuMeasureWorker> worker;
    bool isolated = true;
    // The fastest median so far per task: slower samples are cut short.
    std::vector<double> best(tunable.size(), std::numeric_limits<double>::infinity());
    auto measure_fn = [&](size_t i, const tir::PrimFunc& scheduled) {
        GpuCandidate c = compile_candidate(scheduled, arch);
        if (!arrays[i]) arrays[i] = task_arrays(*tunable[i], options.seed);
        const double cutoff = kSlowCandidateFactor * best[i];
        autotune::GpuTrial trial;
        if (isolated && !worker) {
            worker = GpuMeasureWorker::start();
            isolated = worker != nullptr;  // no worker program: measure here from now on
        }
        bool measured = false;
        if (worker) {
            GpuMeasureWorker::Result r = worker->measure(i, *arrays[i], c,
                                                         tunable[i]->name, options.repeat, cutoff);
            if (r.worker_died) worker.reset();  // the next trial starts a fresh one
            if (r.error.rfind(kNoDevice, 0) == 0) {
                // The worker cannot reach the device this process sees: measure here.
                worker.reset();
                isolated = false;
            } else {
                trial = autotune::GpuTrial{r.times, r.error};
                measured = true;
                result.isolated = true;
            }
        }
        if (!measured) {
            if (!buffers[i]) buffers[i] = std::make_unique<GpuTaskBuffers>(*arrays[i]);
            trial = autotune::GpuTrial{measure_launch_plan(c, tunable[i]->name,
                                                           *arrays[i], *buffers[i],
                                                           options.repeat, cutoff),
                                       ""};
        }
        std::vector<double> sorted = trial.times_ms;
        std::sort(sorted.begin(), sorted.end());
        if (!sorted.empty()) best[i] = std::min(best[i], sorted[sorted.size() / 2]);
        return trial;
    };
    autotune::GpuTuneLoopResult r = autotune::tune_gpu_tasks(
        tunable, db, lo, measure_fn, [&](size_t, const autotune::GpuSearchState& st) {
            if (progress) progress(task_result(st));
        });
    result.measured = r.measured;
    for (const autotune::GpuSearchState& st : r.tasks) result.tasks.push_back(task_result(st));
    return result;
}

GpuScheduleFn gpu_record_schedule(const autotune::Database& db, const std::string& device,
                                  GpuRecordsUse* use) {
    if (use) use->device = device;
    return [&db, device, use](const tir::PrimFunc& f, const std::vector<int>&) {
        if (use) ++use->kernels;
        tir::PrimFunc s = autotune::apply_best_gpu(f, db, &device);
        try {  // a record over this device's limits (or stale) falls back to the default
            if (s.defined()) check_gpu_candidate(s);
        } catch (const UserError&) {
            s = tir::PrimFunc();
        }
        if (s.defined() && use) {
            ++use->tuned;
            use->tuned_kernels.push_back(f->name);
        }
        return s;
    };
}

std::shared_ptr<CudaModel> build_cuda_with_records(const graph::Graph& g,
                                                   const autotune::Database& db,
                                                   GpuRecordsUse* use,
                                                   const std::string* device) {
    GpuRecordsUse u;
    std::shared_ptr<CudaModel> m = build_cuda(
        g, {}, gpu_record_schedule(db, device ? *device : autotune::gpu_fingerprint(), &u));
    if (use) *use = u;
    return m;
}

std::string gpu_records_note(const autotune::Database& db, const GpuRecordsUse& use) {
    const std::string device = use.device ? *use.device : autotune::gpu_fingerprint();
    std::string note = "tuning records '" + db.path() + "': " + std::to_string(use.tuned) + " of " +
                       std::to_string(use.kernels) + " kernels tuned";
    if (use.tuned < use.kernels)
        note += ", " + std::to_string(use.kernels - use.tuned) +
                " use the default GPU schedule (no \"cuda\" record applies)";
    // "cuda" records are keyed to their GPU: say which ones this build leaves out or trusts.
    int cuda = 0, other_gpu = 0, unknown = 0;
    std::string other, named;
    for (const autotune::TuningRecord& r : db.records()) {
        if (r.target != "cuda") continue;
        ++cuda;
        if (r.device.empty()) {
            if (autotune::gpu_record_applies(r, device)) ++unknown;
        } else if (!autotune::gpu_record_applies(r, device)) {
            ++other_gpu;
            if (other.empty()) other = r.device;
        } else if (named.empty()) {
            named = r.device;
        }
    }
    if (other_gpu > 0)
        note += "\ntuning records '" + db.path() + "': " + std::to_string(other_gpu) + " of " +
                std::to_string(cuda) + " \"cuda\" records were measured on another GPU (" + other +
                ") and are not applied; this GPU is " + device;
    if (unknown > 0)
        note += "\ntuning records '" + db.path() + "': " + std::to_string(unknown) +
                " \"cuda\" records name no GPU (written before records held one) and apply as if "
                "measured on this one";
    if (device.empty() && !named.empty())
        note += "\ntuning records '" + db.path() + "': no CUDA device here to check them against: "
                "records of " + named + " apply";
    const std::string foreign = autotune::foreign_records_note(db);
    if (!foreign.empty()) note += "\n" + foreign;
    return note;
}

}  // namespace tessera::driver
