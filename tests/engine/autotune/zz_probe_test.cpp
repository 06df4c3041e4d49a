// TEMPORARY probe (to be deleted).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <time.h>
#include <cstdlib>
#include "engine/autotune/tuner.h"
#include "engine/driver/driver.h"
namespace tessera::autotune {
static double cpu_ms() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
TEST(Probe, Gemm1024) {
    const char* db_path = std::getenv("PROBE_DB");
    if (!db_path) GTEST_SKIP();
    auto tasks = extract_tasks(gemm_graph(1024, 1024, 1024));
    Database db(db_path, true);
    tir::PrimFunc f = apply_best(tasks[0].func, db, "llvm");
    MeasureOptions mo;
    mo.min_seconds = 0.3;
    mo.max_repeat = 30;
    TaskMeasurer m(tasks[0], mo);
    auto bt = m.build({tasks[0].default_func, f});
    void* h = dlopen("libopenblas.so.0", RTLD_NOW);
    ASSERT_TRUE(h);
    using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
    auto sgemm = (Sgemm)dlsym(h, "cblas_sgemm");
    auto setn = (void (*)(int))dlsym(h, "openblas_set_num_threads");
    setn(1);
    std::vector<float> A(1 << 20, 0.5f), B(1 << 20, 0.25f), C(1 << 20);
    for (int round = 0; round < 3; ++round) {
        auto d = m.run(bt[0].fn), t = m.run(bt[1].fn);
        std::vector<double> ob;
        for (int i = 0; i < 8; ++i) {
            double c0 = cpu_ms();
            sgemm(101, 111, 111, 1024, 1024, 1024, 1.f, A.data(), 1024, B.data(), 1024, 0.f, C.data(), 1024);
            ob.push_back(cpu_ms() - c0);
        }
        std::sort(ob.begin(), ob.end());
        double fl = 2.0 * 1024 * 1024 * 1024 / 1e6;
        std::printf("round %d cpu-time medians: default %.2f ms (%.1f GF/s) tuned %.2f ms (%.1f GF/s) openblas %.2f ms (%.1f GF/s) %s\n",
                    round, d.median_ms(), fl / d.median_ms(), t.median_ms(), fl / t.median_ms(), ob[4], fl / ob[4], t.error.c_str());
    }
}
}
