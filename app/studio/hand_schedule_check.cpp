// HandScheduleCheck from a build's kernel schedules, and its one-line description.
#include "app/studio/hand_schedule_check.h"

#include <set>

namespace tessera::studio {

HandScheduleCheck checkHandSchedules(const driver::CompiledModel& model,
                                     const KernelTraces& traces) {
    HandScheduleCheck check;
    std::set<std::string> notApplied;
    for (const driver::KernelSchedule& ks : model.schedules)
        if (!ks.hand_error.empty() && notApplied.insert(ks.traced_node).second)
            check.failed << QString::fromStdString(ks.traced_node + ": " + ks.hand_error);
    for (const std::string& key : driver::unmatched_traces(model, traces))
        if (notApplied.insert(key).second) check.unmatched << QString::fromStdString(key);
    check.applied = int(traces.size() - notApplied.size());  // counted per key, as Run's status
    return check;
}

QString describeHandSchedules(const HandScheduleCheck& check) {
    auto count = [](int n) { return QString("%1 hand schedule%2").arg(n).arg(n == 1 ? "" : "s"); };
    auto verb = [](int n, const char* one, const char* many) { return n == 1 ? one : many; };
    QStringList parts;
    if (check.applied > 0) parts << count(check.applied);
    if (const int n = int(check.failed.size()); n > 0)
        parts << count(n) + verb(n, " does not apply", " do not apply") +
                     ": the build's own schedule runs";
    if (const int n = int(check.unmatched.size()); n > 0)
        parts << count(n) + verb(n, " matches", " match") + " no kernel of this build";
    return parts.join("; ");
}

}  // namespace tessera::studio
