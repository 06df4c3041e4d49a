// runtime::time_kernel, the one timing loop of the tuner, the profiler and
// the studio's schedule editor: warm-up and repeat counts follow the
// options, flushing leaves the buffers' data intact, a callback can stop it.
#include "engine/runtime/kernel_timing.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace tessera::runtime {
namespace {

int g_calls = 0;

// Adds 1 to each of the 1,024 floats of args[0].
void add_one(void** args) {
    ++g_calls;
    float* x = static_cast<float*>(args[0]);
    for (int i = 0; i < 1024; ++i) x[i] += 1.0f;
}

TEST(KernelTiming, WarmUpAndRepeatsFollowTheOptions) {
    std::vector<float> data(1024, 0.5f);
    void* args[] = {data.data()};
    const std::vector<size_t> bytes{data.size() * sizeof(float)};
    TimingOptions o;
    o.warmup = 2;
    o.min_repeat = 3;
    o.min_seconds = 0;
    g_calls = 0;
    std::vector<double> ms = time_kernel(add_one, args, bytes, o);
    EXPECT_EQ(ms.size(), 3u);
    EXPECT_EQ(g_calls, 5);
    for (double t : ms) EXPECT_GE(t, 0.0);
    // Flushing before every run kept the data: 5 calls added 5.
    EXPECT_FLOAT_EQ(data[0], 5.5f);
    EXPECT_FLOAT_EQ(data[1023], 5.5f);

    o.warmup = 0;
    o.min_seconds = 1e9;  // never long enough: max_repeat ends it
    o.max_repeat = 7;
    EXPECT_EQ(time_kernel(add_one, args, bytes, o).size(), 7u);
    o.slow_seconds = 0;  // every run is "slow": one timing is enough
    EXPECT_EQ(time_kernel(add_one, args, bytes, o).size(), 1u);
    o.slow_seconds = 0.5;
    o.cpu_clock = true;
    int seen = 0;
    ms = time_kernel(add_one, args, bytes, o, [&](double) { return ++seen < 2; });
    EXPECT_EQ(ms.size(), 2u);  // the callback stopped it
    EXPECT_EQ(seen, 2);
}

TEST(KernelTiming, MedianOfTimings) {
    EXPECT_DOUBLE_EQ(median_ms({3.0, 1.0, 2.0}), 2.0);
    EXPECT_DOUBLE_EQ(median_ms({}), 0.0);
    std::vector<float> data(16, 1.0f);
    flush_from_caches(data.data(), data.size() * sizeof(float));  // any address, any size
    EXPECT_FLOAT_EQ(std::accumulate(data.begin(), data.end(), 0.0f), 16.0f);
}

}  // namespace
}  // namespace tessera::runtime
