// The CUDA driver API, loaded with dlopen("libcuda.so.1") at run time: no
// link-time dependency on a GPU driver, so everything runs (and reports why
// there is no GPU) on a machine without one.
//
//   if (!cuda::available()) std::cerr << cuda::unavailable_reason();
//   cuda::DeviceBuffer a(bytes); a.copy_from_host(p);
//   cuda::Module m(ptx); m.launch("k_kernel", grid, block, 0, {a.ptr()});
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace tessera::runtime::cuda {

/// True when libcuda loads, cuInit succeeds and there is at least one device.
bool available();

/// Why available() is false ("no CUDA device is available (libcuda.so.1 not
/// found)"); empty when it is true.
std::string unavailable_reason();

/// Facts about device 0 (throws UserError with unavailable_reason() when none).
struct DeviceInfo {
    std::string name;              // "NVIDIA H100 80GB HBM3"
    int cc_major = 0, cc_minor = 0;
    int multiprocessors = 0;
    int64_t max_threads_per_block = 0;
    int64_t max_shared_per_block = 0;  // bytes, without opt-in
    int64_t registers_per_block = 0;
    int64_t total_memory = 0;          // bytes
    int driver_version = 0;            // 13000 for CUDA 13.0
};
const DeviceInfo& device_info();

/// Throws UserError naming what failed when no device is available.
void require_available(const std::string& what);

/// A kernel faulted (illegal address, illegal instruction, misaligned
/// access, ...): CUDA's context is unusable for the rest of the process (a
/// "sticky" error: no reset brings it back). Every later call that needs the
/// device throws DeviceFault too. Work that may fault (tuning candidates)
/// runs in a child process (driver/gpu_measure_worker.h).
struct DeviceFault : UserError {
    using UserError::UserError;
};

/// True after a DeviceFault in this process.
bool faulted();

/// Device global memory (cuMemAlloc), freed on destruction.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& o) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    uint64_t ptr() const { return m_ptr; }
    size_t size() const { return m_bytes; }
    void copy_from_host(const void* src, size_t bytes);
    void copy_to_host(void* dst, size_t bytes) const;

private:
    uint64_t m_ptr = 0;
    size_t m_bytes = 0;
};

/// A module loaded from PTX (or cubin) text with its kernels.
class Module {
public:
    explicit Module(const std::string& image);
    ~Module();
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;

    /// Launches kernel `name` with device pointers as arguments (asynchronous).
    void launch(const std::string& name, const std::array<int64_t, 3>& grid,
                const std::array<int64_t, 3>& block, int64_t shared_bytes,
                const std::vector<uint64_t>& args);

private:
    void* function(const std::string& name);
    void* m_module = nullptr;
    std::vector<std::pair<std::string, void*>> m_functions;
};

/// Waits for all work on the device.
void synchronize();

/// A CUDA event for timing kernels on the device.
class Event {
public:
    Event();
    ~Event();
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    void record();
    /// Milliseconds between `start` and this event (waits for this one).
    float elapsed_ms_since(const Event& start) const;

private:
    void* m_event = nullptr;
};

}  // namespace tessera::runtime::cuda
