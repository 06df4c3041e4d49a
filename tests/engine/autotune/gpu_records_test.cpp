// "cuda" tuning records applied when compiling for the GPU, without a device:
// a record for a GEMM task changes the kernel's launch dimensions and source,
// NVRTC compiles it, the applied schedule computes what the interpreter
// computes; tasks without a record keep the default GPU schedule.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "engine/autotune/search_gpu.h"
#include "engine/autotune/task.h"
#include "engine/driver/cuda_model.h"
#include "engine/driver/driver.h"
#include "engine/driver/tune_gpu.h"
#include "engine/tir/printer.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"
#include "tests/engine/codegen/cuda/gpu_tune_util.h"

namespace tessera {
namespace {

autotune::TuningRecord cuda_record(const autotune::TuneTask& t, const autotune::GpuSketch& s,
                                   double ms) {
    autotune::TuningRecord r = test::gpu_record(t, s, ms);
    r.flops = t.flops;
    r.machine = autotune::machine_fingerprint();
    r.threads = 1;
    return r;
}

TEST(GpuRecords, TheBestRecordSchedulesTheGemmKernel) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph og = test::optimized_for_cuda(autotune::gemm_graph(64, 96, 48));
    std::vector<autotune::TuneTask> tasks = autotune::extract_tasks(og, "cuda", 1);
    ASSERT_EQ(tasks.size(), 1u);
    const autotune::TuneTask& t = tasks[0];
    std::shared_ptr<driver::CudaModel> dflt = driver::build_cuda(og);
    ASSERT_EQ(dflt->calls.size(), 1u);
    const runtime::CudaLaunch& d = dflt->calls[0].launches.at(0);
    // A sampled sketch whose launch differs from the default schedule's.
    std::mt19937_64 rng(9);
    autotune::GpuSketch best, worse;
    driver::GpuCandidate want;
    for (int i = 0; i < 50; ++i) {
        best = autotune::sample_gpu(t.func, rng);
        want = driver::build_gpu_candidate(t.func, best, "compute_90");
        if (want.grids[0] != d.grid || want.blocks[0] != d.block) break;
    }
    ASSERT_TRUE(want.grids[0] != d.grid || want.blocks[0] != d.block);
    do worse = autotune::sample_gpu(t.func, rng);
    while (worse == best);

    const std::string path =
        (std::filesystem::temp_directory_path() / "tessera_gpu_records_test.jsonl").string();
    std::filesystem::remove(path);
    {
        autotune::Database db(path);
        db.append(cuda_record(t, worse, 2.0));
        db.append(cuda_record(t, best, 1.0));
        autotune::TuningRecord cpu = cuda_record(t, worse, 0.5);  // a CPU record never applies
        cpu.target = "llvm";
        db.append(cpu);
    }
    autotune::Database db(path, /*read_only=*/true);
    driver::GpuRecordsUse use;
    std::shared_ptr<driver::CudaModel> m = driver::build_cuda_with_records(og, db, &use);
    EXPECT_EQ(use.kernels, 1);
    EXPECT_EQ(use.tuned, 1);
    ASSERT_EQ(m->calls.size(), 1u);
    ASSERT_EQ(m->calls[0].launches.size(), want.kernels.size());
    const runtime::CudaLaunch& l = m->calls[0].launches[0];
    EXPECT_EQ(l.grid, want.grids[0]);
    EXPECT_EQ(l.block, want.blocks[0]);
    EXPECT_NE(m->compiled.source, dflt->compiled.source);
    EXPECT_NE(m->compiled.ptx.find(".entry " + l.kernel), std::string::npos);  // NVRTC compiled
    EXPECT_NE(driver::gpu_records_note(db, use).find("1 of 1 kernels tuned"), std::string::npos);

    // The applied schedule computes the GEMM (interpreter, random data).
    const size_t num_inputs = t.func->params.size() - size_t(t.num_outputs);
    std::vector<runtime::NDArray> args = test::random_args(t.func, num_inputs, 21);
    std::vector<runtime::NDArray> ref = test::interpret_copy(t.func, args);
    std::vector<runtime::NDArray> got = test::interpret_copy(m->kernels[0], args);
    for (size_t p = num_inputs; p < args.size(); ++p)
        EXPECT_TRUE(runtime::allclose(got[p], ref[p], 1e-4, 1e-5));
    std::filesystem::remove(path);
}

TEST(GpuRecords, KernelsWithoutARecordKeepTheDefaultSchedule) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    // Two tasks (GEMM, then relu); a record for the GEMM only; a record of
    // another GEMM shape matches no task.
    graph::Graph g = autotune::gemm_graph(32, 32, 32);
    {
        graph::Value v;
        v.name = "D";
        v.type = g.values[size_t(g.outputs[0])].type;
        const int out = g.add_value(v);
        graph::Node relu;
        relu.op = "nn.relu";
        relu.name = "relu";
        relu.inputs = {g.outputs[0]};
        relu.outputs = {out};
        g.add_node(relu);
        g.outputs = {out};
    }
    driver::BuildOptions bo;
    bo.passes = {"none"};  // no fusion: two kernels
    graph::Graph og = driver::optimize(g, bo);
    std::vector<autotune::TuneTask> tasks = autotune::extract_tasks(og, "cuda", 1);
    ASSERT_EQ(tasks.size(), 2u);
    graph::Graph other = test::optimized_for_cuda(autotune::gemm_graph(32, 32, 16));
    std::vector<autotune::TuneTask> other_tasks = autotune::extract_tasks(other, "cuda", 1);
    std::mt19937_64 rng(4);
    autotune::Database db;
    db.append(cuda_record(tasks[0], autotune::sample_gpu(tasks[0].func, rng), 1.0));
    db.append(cuda_record(other_tasks[0], autotune::sample_gpu(other_tasks[0].func, rng), 1.0));
    driver::GpuRecordsUse use;
    std::shared_ptr<driver::CudaModel> m = driver::build_cuda_with_records(og, db, &use);
    std::shared_ptr<driver::CudaModel> dflt = driver::build_cuda(og);
    EXPECT_EQ(use.kernels, 2);
    EXPECT_EQ(use.tuned, 1);
    ASSERT_EQ(m->calls.size(), 2u);
    EXPECT_EQ(tir::print(m->kernels[1]), tir::print(dflt->kernels[1]));  // relu: default
    EXPECT_NE(tir::print(m->kernels[0]), tir::print(dflt->kernels[0]));  // GEMM: the record
    EXPECT_NE(driver::gpu_records_note(db, use).find(
                  "1 of 2 kernels tuned, 1 use the default GPU schedule"),
              std::string::npos)
        << driver::gpu_records_note(db, use);
    // And an empty database changes nothing.
    autotune::Database empty;
    m = driver::build_cuda_with_records(og, empty, &use);
    EXPECT_EQ(use.tuned, 0);
    EXPECT_EQ(m->compiled.source, dflt->compiled.source);
}

TEST(GpuRecords, ARecordOverTheThreadLimitFallsBackToTheDefault) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph og = test::optimized_for_cuda(autotune::gemm_graph(64, 96, 48));
    std::vector<autotune::TuneTask> tasks = autotune::extract_tasks(og, "cuda", 1);
    ASSERT_EQ(tasks.size(), 1u);
    std::mt19937_64 rng(2);
    autotune::GpuSketch s = autotune::sample_gpu(tasks[0].func, rng);
    for (auto& f : s.tiles)  // every output element its own thread: 6144 threads per block
        if (f.size() == 5) f = {1, 1, f[0] * f[1] * f[2] * f[3] * f[4], 1, 1};
    tir::PrimFunc over = autotune::generate_gpu(tasks[0].func, s).func();
    EXPECT_THROW(driver::check_gpu_candidate(over), UserError);
    autotune::Database db;
    db.append(cuda_record(tasks[0], s, 0.1));
    driver::GpuRecordsUse use;
    std::shared_ptr<driver::CudaModel> m = driver::build_cuda_with_records(og, db, &use);
    EXPECT_EQ(use.tuned, 0);
    EXPECT_EQ(m->compiled.source, driver::build_cuda(og)->compiled.source);
}

TEST(GpuRecords, RecordsForEveryTaskOfAModelApplyAndComputeTheSame) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph og = test::optimized_for_cuda(driver::load_model(
        std::string(TESSERA_SOURCE_DIR) + "/resources/models/small_cnn/model.onnx"));
    std::vector<autotune::TuneTask> tasks = autotune::extract_tasks(og, "cuda", 1);
    std::mt19937_64 rng(17);
    autotune::Database db;
    int tunable = 0;
    for (const autotune::TuneTask& t : tasks) {
        if (autotune::gpu_sketch_block(t.func).empty()) continue;  // no reduction to tile
        ++tunable;
        db.append(cuda_record(t, autotune::sample_gpu(t.func, rng), 1.0));
    }
    ASSERT_GE(tunable, 2);  // the convolutions and the dense layer
    driver::GpuRecordsUse use;
    std::shared_ptr<driver::CudaModel> m = driver::build_cuda_with_records(og, db, &use);
    std::shared_ptr<driver::CudaModel> dflt = driver::build_cuda(og);
    EXPECT_EQ(use.kernels, int(m->calls.size()));
    // Every group of a recorded task is tuned (a task may occur more than once).
    int occurrences = 0;
    for (const autotune::TuneTask& t : tasks)
        if (!autotune::gpu_sketch_block(t.func).empty()) occurrences += t.weight;
    EXPECT_EQ(use.tuned, occurrences);
    EXPECT_FALSE(m->compiled.ptx.empty());
    ASSERT_EQ(m->kernels.size(), dflt->kernels.size());
    for (size_t i = 0; i < m->kernels.size(); ++i) {  // tuned kernels compute what default ones do
        const tir::PrimFunc& f = dflt->kernels[i];
        const size_t num_inputs = f->params.size() - 1;
        std::vector<runtime::NDArray> args = test::random_args(f, num_inputs, 31 + i);
        std::vector<runtime::NDArray> want = test::interpret_copy(f, args);
        std::vector<runtime::NDArray> got = test::interpret_copy(m->kernels[i], args);
        EXPECT_TRUE(runtime::allclose(got.back(), want.back(), 1e-4, 1e-5)) << f->name;
    }
}

}  // namespace
}  // namespace tessera
