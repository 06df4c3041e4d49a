// Ansor-style task scheduler (see task_scheduler.h).
#include "engine/autotune/task_scheduler.h"

#include <algorithm>
#include <cmath>

namespace tessera::autotune {

int pick_task(const std::vector<ScheduledTask>& tasks) {
    int best = -1;
    double best_score = -1e300;
    for (size_t i = 0; i < tasks.size(); ++i) {
        const ScheduledTask& t = tasks[i];
        if (t.gain < 0) continue;
        if (t.trials == 0) return int(i);
        double lat = t.best_ms > 0 ? t.best_ms : std::max(t.default_ms, 1e-3);
        double score = t.weight * lat * (t.gain + 0.05) / std::sqrt(1.0 + t.trials);
        if (score > best_score) best_score = score, best = int(i);
    }
    return best < 0 ? 0 : best;
}

double round_gain(double best_before, double best_after) {
    if (best_before > 0 && best_after > 0)
        return std::max(0.0, (best_before - best_after) / best_before);
    return 1;
}

}  // namespace tessera::autotune
