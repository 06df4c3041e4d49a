// Which threads may run heavy engine work. A GUI forbids its UI thread (engine
// work there freezes the window): the heavy driver entry points (build,
// kernel rebuilds, model loading, tuning, kernel measurement, package export)
// call assert_engine_work_allowed first, which counts a call on a forbidden
// thread and, in strict mode, throws InternalError naming it. Tests read the
// count to prove that a flow keeps the engine off the UI thread.
#pragma once

#include <string>

namespace tessera {

/// Forbids (true) or allows again (false) heavy engine work on the calling thread.
void forbid_engine_work_on_this_thread(bool forbidden);
/// Whether the calling thread is forbidden heavy engine work.
bool engine_work_forbidden_on_this_thread();

/// Called at the entry of heavy engine work (`what` names it, e.g.
/// "driver::build"). On a forbidden thread the violation is counted and the
/// first `what` kept; in strict mode it also throws InternalError.
void assert_engine_work_allowed(const char* what);

/// In strict mode a violation throws instead of only being counted.
void set_engine_work_strict(bool strict);

/// Violations since the last reset: how many, and what the first one was.
struct EngineWorkViolations {
    int count = 0;
    std::string first;
};
EngineWorkViolations engine_work_violations();
void reset_engine_work_violations();

}  // namespace tessera
