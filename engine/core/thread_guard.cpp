// The engine-work thread guard: a per-thread flag and a process-wide record.
#include "engine/core/thread_guard.h"

#include <atomic>
#include <mutex>

#include "engine/core/error.h"

namespace tessera {
namespace {

thread_local bool t_forbidden = false;
std::atomic<bool> g_strict{false};

struct Record {
    std::mutex mutex;
    EngineWorkViolations violations;
};

Record& record() {
    static Record r;
    return r;
}

}  // namespace

void forbid_engine_work_on_this_thread(bool forbidden) { t_forbidden = forbidden; }

bool engine_work_forbidden_on_this_thread() { return t_forbidden; }

void assert_engine_work_allowed(const char* what) {
    if (!t_forbidden) return;
    {
        Record& r = record();
        std::lock_guard<std::mutex> lock(r.mutex);
        if (r.violations.count++ == 0) r.violations.first = what;
    }
    TS_CHECK(!g_strict.load()) << what << " ran on a thread that must not run engine work "
                               << "(the UI thread): run it in a job";
}

void set_engine_work_strict(bool strict) { g_strict = strict; }

EngineWorkViolations engine_work_violations() {
    Record& r = record();
    std::lock_guard<std::mutex> lock(r.mutex);
    return r.violations;
}

void reset_engine_work_violations() {
    Record& r = record();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.violations = {};
}

}  // namespace tessera
