// Tuning options for tests: a few small batches, each candidate timed
// briefly. What such tests check is what the records hold, not how fast the
// kernels are.
#pragma once

#include "engine/autotune/tuner.h"

namespace tessera::autotune::test {

inline TuneOptions quick_tune_options(int trials) {
    TuneOptions o;
    o.trials = trials;
    o.batch = 4;
    o.population = 16;
    o.generations = 1;
    o.measure.timing.min_seconds = 0.001;
    o.measure.timing.min_repeat = 2;
    o.measure.timeout_s = 5;
    return o;
}

/// The same, measuring kernels built at LLVM level `opt_level`.
inline TuneOptions quick_tune_options(int trials, int opt_level) {
    TuneOptions o = quick_tune_options(trials);
    o.measure.opt_level = opt_level;
    return o;
}

}  // namespace tessera::autotune::test
