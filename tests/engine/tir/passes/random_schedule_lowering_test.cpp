// Random valid schedules (the schedule tests' generator) through the default
// lowering pipeline: the lowered function computes what the scheduled one
// does under the interpreter. TESSERA_RANDOM_SCHEDULES=N runs N per workload.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/tir/passes/pass_manager.h"
#include "engine/tir/printer.h"
// The generator lives with the schedule tests; it is compiled into this
// program as well so that both suites share one definition of the workloads.
#include "tests/engine/schedule/random_schedule.cpp"

namespace tessera::schedule::test {
namespace {

int lowerings_per_workload() {
    const char* env = std::getenv("TESSERA_RANDOM_SCHEDULES");
    return env ? std::max(1, std::atoi(env)) : 12;
}

TEST(RandomScheduleLowering, DefaultPipelineKeepsResults) {
    int n = lowerings_per_workload();
    std::vector<Workload> ws = workloads();
    for (size_t wi = 0; wi < ws.size(); ++wi) {
        for (int i = 0; i < n; ++i) {
            uint64_t seed = wi * 7919 + uint64_t(i) + 500;
            Schedule s = random_schedule(ws[wi].func, seed, 4 + i % 9);
            SCOPED_TRACE(ws[wi].name + " seed " + std::to_string(seed) + "\n" +
                         tir::print(s.func()));
            std::vector<std::vector<float>> want = run_interpreted(s.func(), 1), got;
            tir::PrimFunc lowered;
            try {
                lowered = tir::lower_for_codegen(s.func());
                got = run_interpreted(lowered, 1);
            } catch (const std::exception& e) {
                FAIL() << e.what();
            }
            ASSERT_LE(max_rel_diff(got, want), 1e-4) << tir::print(lowered);
        }
    }
}

}  // namespace
}  // namespace tessera::schedule::test
