// Ansor's task scheduler, shared by the CPU tuner (tuner.cpp) and the GPU
// tuner (search_gpu.cpp): which task gets the next round of trials, by its
// weight, its current latency and the gain of its last round.
#pragma once

#include <vector>

namespace tessera::autotune {

/// What the scheduler knows about a task.
struct ScheduledTask {
    int weight = 1;         // occurrences in the model
    int trials = 0;         // recorded for the task (resumed ones included)
    double best_ms = 0;     // the best measured candidate (0 = none yet)
    double default_ms = 0;  // the default schedule (0 = not measured)
    /// Relative improvement of the task's last round (round_gain); < 0: the
    /// task's space is exhausted and it gets no more rounds.
    double gain = 1;
};

/// The task to run the next round of: the first one without a trial (every
/// task gets a first round), else the one maximizing weight x latency x
/// (gain + 0.05) / sqrt(1 + trials). Tasks with gain < 0 are skipped; 0 when
/// every task is (check for that before calling).
int pick_task(const std::vector<ScheduledTask>& tasks);

/// The gain of a round: the relative improvement of the task's best time
/// from `best_before` to `best_after` (>= 0); 1 when either is unknown (0).
double round_gain(double best_before, double best_after);

}  // namespace tessera::autotune
