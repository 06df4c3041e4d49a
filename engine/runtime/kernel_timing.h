// The one way Tessera times a kernel: the tuner (in its measuring workers),
// the profiler (`run --profile`, the studio's Run) and the studio's schedule
// editor all call time_kernel or time_once, so their figures for the same
// kernel are alike: a warm-up, then repeats until a minimum count and time,
// each run after the kernel's buffers were flushed out of the caches (in a
// model a kernel's weights come from memory, as TVM's cache flush assumes).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace tessera::runtime {

/// The calling convention of every kernel: args[i] is the data pointer of the
/// i-th buffer parameter.
using KernelFn = void (*)(void** args);

struct TimingOptions {
    int warmup = 1;
    int min_repeat = 3;
    int max_repeat = 20;
    double min_seconds = 0.05;  // keep repeating until this much time ran
    double slow_seconds = 0.5;  // one run longer than this ends the repeats
    /// Flush the kernel's buffers out of every cache level before each timed run.
    bool flush_cache = true;
    /// Time by the calling thread's CPU time (robust on a shared machine;
    /// only meaningful for single-threaded kernels), else by wall clock.
    bool cpu_clock = false;
};

/// Evicts `bytes` at `p` from every cache level (x86 clflush; a no-op elsewhere).
void flush_from_caches(const void* p, size_t bytes);

/// One timed run of fn(args) in milliseconds, after flushing the buffers
/// args[i] of bytes[i] bytes when o.flush_cache (no warm-up).
double time_once(KernelFn fn, void** args, const std::vector<size_t>& bytes,
                 const TimingOptions& o);

/// o.warmup untimed runs, then time_once until o.min_repeat runs and
/// o.min_seconds have passed, a run was slower than o.slow_seconds, or
/// o.max_repeat runs. `each(ms)` (may be empty) sees every timing; returning
/// false stops. Returns the timings in milliseconds.
std::vector<double> time_kernel(KernelFn fn, void** args, const std::vector<size_t>& bytes,
                                const TimingOptions& o,
                                const std::function<bool(double ms)>& each = {});

/// The median of `ms` (0 when empty).
double median_ms(std::vector<double> ms);

}  // namespace tessera::runtime
