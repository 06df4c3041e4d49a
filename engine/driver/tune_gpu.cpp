// GPU autotuning: the GPU-sketch search (autotune/search_gpu.h) measuring
// with NVRTC and event timing on the device, every trial a "cuda" record.
#include "engine/driver/tune_gpu.h"

#include <algorithm>
#include <memory>
#include <random>

#include "engine/autotune/cost_model.h"
#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
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

// Device buffers of a task's parameters, inputs random, and the reference
// outputs from the interpreter (small tasks only; empty otherwise).
struct TaskData {
    std::vector<runtime::NDArray> host;
    std::vector<runtime::cuda::DeviceBuffer> dev;
    std::vector<runtime::NDArray> expected;  // every parameter, outputs computed
    size_t first_output = 0;
};

TaskData task_data(const autotune::TuneTask& t, uint64_t seed) {
    TaskData d;
    const size_t num_inputs = t.func->params.size() - size_t(t.num_outputs);
    d.first_output = num_inputs;
    for (size_t i = 0; i < t.func->params.size(); ++i) {
        graph::TensorType type = topi::tensor_type_of(t.func->params[i]);
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
                            int repeat) {
    runtime::cuda::Module module(c.ptx);
    std::vector<runtime::cuda::DeviceBuffer> ws;  // intermediate global buffers
    for (int64_t bytes : c.workspace_bytes) ws.emplace_back(std::max<size_t>(size_t(bytes), 4));
    std::vector<std::vector<uint64_t>> args;
    for (const std::vector<int>& ka : c.args) {
        args.emplace_back();
        for (int i : ka)
            args.back().push_back(size_t(i) < d.dev.size() ? d.dev[size_t(i)].ptr()
                                                           : ws.at(size_t(i) - d.dev.size()).ptr());
    }
    auto launch_all = [&] {
        for (size_t k = 0; k < c.kernels.size(); ++k)
            module.launch(c.kernels[k], c.grids[k], c.blocks[k], c.shared_bytes[k], args[k]);
    };
    const size_t first_output = d.first_output;
    for (size_t p = first_output; p < d.host.size() && !d.expected.empty(); ++p) {
        // Outputs zeroed: a candidate that skips elements cannot pass on an earlier one's.
        runtime::NDArray zero = runtime::NDArray::empty(d.host[p].type());
        d.dev[p].copy_from_host(zero.raw(), zero.num_bytes());
    }
    launch_all();
    runtime::cuda::synchronize();
    if (!d.expected.empty()) {
        for (size_t p = first_output; p < d.host.size(); ++p) {
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
    // Device buffers and the reference outputs of a task, made when it is first measured.
    std::vector<std::unique_ptr<TaskData>> data(tunable.size());
    auto measure_fn = [&](size_t i, const tir::PrimFunc& scheduled) {
        if (!data[i]) data[i] = std::make_unique<TaskData>(task_data(*tunable[i], options.seed));
        GpuCandidate c = compile_candidate(scheduled, arch);
        return autotune::GpuTrial{measure(c, tunable[i]->name, *data[i], options.repeat), ""};
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
