// time_kernel / time_once: the one kernel timing loop (kernel_timing.h).
#include "engine/runtime/kernel_timing.h"

#include <time.h>

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tessera::runtime {

void flush_from_caches(const void* p, size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
    const char* c = static_cast<const char*>(p);
    for (size_t off = 0; off < bytes; off += 64) _mm_clflush(c + off);
    if (bytes) _mm_clflush(c + bytes - 1);
    _mm_mfence();
#else
    (void)p;
    (void)bytes;
#endif
}

double time_once(KernelFn fn, void** args, const std::vector<size_t>& bytes,
                 const TimingOptions& o) {
    if (o.flush_cache)
        for (size_t a = 0; a < bytes.size(); ++a)
            if (args[a]) flush_from_caches(args[a], bytes[a]);
    if (o.cpu_clock) {
        timespec c0{}, c1{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        fn(args);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        return double(c1.tv_sec - c0.tv_sec) * 1e3 + double(c1.tv_nsec - c0.tv_nsec) * 1e-6;
    }
    const auto t0 = std::chrono::steady_clock::now();
    fn(args);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<double> time_kernel(KernelFn fn, void** args, const std::vector<size_t>& bytes,
                                const TimingOptions& o, const std::function<bool(double ms)>& each) {
    for (int i = 0; i < o.warmup; ++i) fn(args);
    std::vector<double> times;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < o.max_repeat; ++i) {
        const double ms = time_once(fn, args, bytes, o);
        times.push_back(ms);
        if (each && !each(ms)) break;
        const double ran =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (i + 1 >= o.min_repeat && ran >= o.min_seconds) break;
        if (ms > 1000.0 * o.slow_seconds) break;  // a slow kernel: one timing is enough
    }
    return times;
}

double median_ms(std::vector<double> ms) {
    if (ms.empty()) return 0;
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return ms[ms.size() / 2];
}

}  // namespace tessera::runtime
