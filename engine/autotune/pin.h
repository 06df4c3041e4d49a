// Hybrid manual + automatic scheduling: the user fixes some of a kernel's
// knob values (its default rule's decisions, topi::cpu_schedule_knobs), or
// the first steps of its trace, and the tuner searches only the rest. A pin
// file is JSON, either
//   {"knobs": {"conv2d.oc_block": 16, "conv2d.unroll_kw": 1}}
// or a trace's steps (what the schedule editor saves; `workload` optional)
//   {"steps": [{"op": "split", ...}, ...]}
// `tessera tune MODEL --op NODE --pin PINS.json` and the studio's "Tune the
// rest" read it. With knobs, the records hold the knob values, which expand
// into the rule's trace deterministically (autotune::best_schedule); with
// steps, the search schedules what the steps leave (PinnedPrefixSpace) and
// every record's trace starts with them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/autotune/task.h"

namespace tessera::autotune {

struct KnobPins {
    std::map<std::string, int64_t> knobs;
    std::vector<schedule::Step> steps;  // a pinned trace prefix (instead of knobs)

    std::string to_json() const;
    /// UserError naming `origin` and the entry when the text is not a pin file.
    static KnobPins from_json(const std::string& text, const std::string& origin = "pins");
    static KnobPins load(const std::string& path);
};

/// `t` restricted to its unpinned decisions: each pinned knob keeps only its
/// pinned value, the search samples the knobbed rule only, and the baseline
/// (default_func / default_trace) becomes the pinned configuration, so the
/// tuned kernel is measured against the pinned one and never recorded as
/// better when it is not. UserError naming the knob when the task has no
/// such knob or the value is not one of its legal choices (listed). Pinned
/// steps become TuneTask::pinned and the baseline is those steps alone;
/// UserError naming the step when they do not replay on the kernel.
void pin_task(TuneTask& t, const KnobPins& pins);

}  // namespace tessera::autotune
