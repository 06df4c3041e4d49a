// Helpers for tir pass tests: random non-zero data and running a function
// before and after a pass with the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/tir/interpreter.h"
#include "engine/tir/stmt.h"

namespace tessera::tir::testing {

/// Uniform in +-[0.5, 1.5]: never zero.
inline std::vector<float> random_data(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> mag(0.5f, 1.5f);
    std::bernoulli_distribution sign(0.5);
    std::vector<float> v(n);
    for (float& x : v) x = sign(rng) ? mag(rng) : -mag(rng);
    return v;
}

/// Runs `reference` and `lowered` (same float32 params) on the same random
/// inputs and expects the same outputs. The last `outputs` params are outputs.
inline void expect_same_results(const PrimFunc& reference, const PrimFunc& lowered,
                                size_t outputs = 1, unsigned seed = 7) {
    ASSERT_EQ(reference->params.size(), lowered->params.size());
    std::vector<std::vector<float>> a, b;
    for (size_t p = 0; p < reference->params.size(); ++p) {
        size_t n = size_t(reference->params[p].num_elements());
        bool out = p + outputs >= reference->params.size();
        a.push_back(out ? std::vector<float>(n, 0.25f) : random_data(n, seed + unsigned(p)));
        b.push_back(a.back());
    }
    std::vector<void*> pa, pb;
    for (auto& v : a) pa.push_back(v.data());
    for (auto& v : b) pb.push_back(v.data());
    interpret(reference, pa);
    interpret(lowered, pb);
    for (size_t p = reference->params.size() - outputs; p < a.size(); ++p)
        for (size_t i = 0; i < a[p].size(); ++i)
            ASSERT_NEAR(a[p][i], b[p][i], 1e-5f * (1 + std::fabs(a[p][i])))
                << "param " << p << " element " << i;
}

}  // namespace tessera::tir::testing
