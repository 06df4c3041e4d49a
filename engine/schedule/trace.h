// A Trace: the list of schedule steps applied to one PrimFunc, as data.
// JSON form (DESIGN.md, "Files users keep"):
//   {"workload": KEY, "target": "llvm", "steps": [
//     {"op": "split", "loop": "i", "factors": [32, 32], "out": ["i_0", "i_1"]},
//     {"op": "vectorize", "loop": "j_1"}, ...]}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::schedule {

class Schedule;

/// One primitive application with its arguments. Which fields are used
/// depends on `op`; unused ones stay empty.
struct Step {
    std::string op;                    // "split", "fuse", "reorder", "parallel", ...
    std::string block;                 // block argument
    std::vector<std::string> loops;    // loop arguments
    std::vector<int64_t> ints;         // split factors, buffer index, rfactor axis
    std::string key;                   // scope, thread axis, annotation key
    std::string value;                 // annotation value
    std::vector<std::string> outputs;  // loops/blocks the step created
    bool enabled = true;               // a disabled step is kept but skipped on replay

    bool operator==(const Step& o) const = default;
};

struct Trace {
    std::string workload;  // structural key of the function (empty if unknown)
    std::string target = "llvm";
    std::vector<Step> steps;

    std::string to_json() const;
    /// Parses the JSON form; throws UserError naming `origin` and the step.
    static Trace from_json(const std::string& text, const std::string& origin = "trace");
    static Trace load(const std::string& path);
    void save(const std::string& path) const;

    /// Replays every enabled step on `func`; throws ScheduleError naming the
    /// failing step.
    Schedule apply(const tir::PrimFunc& func) const;
};

}  // namespace tessera::schedule
