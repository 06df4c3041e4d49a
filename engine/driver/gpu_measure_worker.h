// GPU tuning measures candidates in a child process that owns the device: a
// candidate that faults (illegal address, ...) kills CUDA's context for the
// rest of its process, so it ends the worker, not the tuner. The tuner
// records the trial as failed and the next trial starts a fresh worker.
//
// The worker is the program tessera-gpu-worker (a fresh process: CUDA works
// in it whatever this process did), found through $TESSERA_GPU_WORKER, beside
// this program or in ../bin from it. Without it (or when a worker cannot
// reach the device) tune_gpu measures in its own process.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/cuda_driver.h"
#include "engine/runtime/ndarray.h"

namespace tessera::driver {

/// What a GPU trial launches: PTX, its kernels in order with their launch
/// shapes and arguments, and the workspaces (intermediate global buffers).
struct GpuLaunchPlan {
    std::string ptx;
    std::vector<std::string> kernels;
    std::vector<std::array<int64_t, 3>> grids, blocks;
    std::vector<int64_t> shared_bytes;
    /// Per kernel: indices into the task's arrays, then (from arrays.size()
    /// on) into the workspaces.
    std::vector<std::vector<int>> args;
    std::vector<int64_t> workspace_bytes;
};

/// A task's arrays on the host: inputs random, outputs empty, and the
/// interpreter's reference for every array where it was computed.
struct GpuTaskArrays {
    std::vector<runtime::NDArray> host;
    std::vector<runtime::NDArray> expected;  // empty: not checked
    size_t first_output = 0;
};

/// The arrays of a task on the device (uploaded once per process).
struct GpuTaskBuffers {
    std::vector<runtime::cuda::DeviceBuffer> dev;
    explicit GpuTaskBuffers(const GpuTaskArrays& a);
};

/// Runs `plan` once, checks the outputs against the reference (UserError
/// naming `name` when they differ), then times up to `repeat` launches with
/// CUDA events; after a first timed launch above `cutoff_ms` it stops there.
/// In this process: throws runtime::cuda::DeviceFault when a kernel faults.
std::vector<double> measure_launch_plan(const GpuLaunchPlan& plan, const std::string& name,
                                        const GpuTaskArrays& arrays, GpuTaskBuffers& buffers,
                                        int repeat, double cutoff_ms);

/// The worker's loop on a connected socket: task arrays and launch plans in,
/// times or errors out; ends the process when the socket closes or a kernel
/// faults. tessera-gpu-worker's main runs it on file descriptor 3.
[[noreturn]] void gpu_measure_worker_main(int fd);

/// The worker program's path ("" when none is found).
std::string gpu_worker_program();

/// The worker process. Not thread-safe: one tuner uses it.
class GpuMeasureWorker {
public:
    /// A worker, or null when no worker program is found.
    static std::unique_ptr<GpuMeasureWorker> start();
    ~GpuMeasureWorker();
    GpuMeasureWorker(const GpuMeasureWorker&) = delete;
    GpuMeasureWorker& operator=(const GpuMeasureWorker&) = delete;

    struct Result {
        std::vector<double> times;
        std::string error;         // a UserError in the worker (outputs differ, no device, ...)
        bool worker_died = false;  // a fault or signal ended it; `error` says which
    };
    /// measure_launch_plan in the worker for task `task` (its arrays sent
    /// the first time). After worker_died, this object is dead: start another.
    Result measure(size_t task, const GpuTaskArrays& arrays, const GpuLaunchPlan& plan,
                   const std::string& name, int repeat, double cutoff_ms);
    bool alive() const { return m_pid > 0; }
    int pid() const { return m_pid; }

private:
    GpuMeasureWorker() = default;
    std::string reap();  // waits for the child; says how it ended
    int m_pid = -1;
    int m_to = -1, m_from = -1;  // pipes to and from the child
    std::vector<bool> m_sent;    // tasks whose arrays the child holds
};

}  // namespace tessera::driver
