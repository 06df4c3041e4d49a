// Fork/join overhead of the parallel runtime our JIT uses (GOMP_parallel):
// an empty parallel region and a tiny kernel, median per call.
#include <omp.h>

#include <cstdio>

#include "bench/lib/bench.h"

extern "C" void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);

namespace {
void empty_body(void* p) { static_cast<volatile int*>(p)[omp_get_thread_num() * 16] = 1; }
}  // namespace

int main() {
    alignas(64) volatile int slots[64 * 16] = {};
    for (int threads : {1, 2}) {
        auto m = tessera::bench::measure(
            [&] { GOMP_parallel(empty_body, const_cast<int*>(slots), unsigned(threads), 0); }, 0.2,
            1000);
        std::printf("GOMP_parallel, %d thread(s): median %.2f us, min %.2f us per fork/join\n",
                    threads, m.median_ms * 1e3, m.min_ms * 1e3);
    }
    return 0;
}
