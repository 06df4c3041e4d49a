// HandScheduleCheck: what a build made of the hand schedules (the schedule
// editor's traces): how many scheduled their kernel, which did not apply
// (the kernel runs the build's own schedule) and which matched no kernel.
// Run's first log line counts from it.
#pragma once

#include <QString>
#include <QStringList>

#include "app/studio/build_settings.h"
#include "engine/driver/driver.h"

namespace tessera::studio {

struct HandScheduleCheck {
    int applied = 0;        // scheduled their kernel
    QStringList failed;     // why each did not apply (its kernel ran the build's own schedule)
    QStringList unmatched;  // keys no node or kernel of the build has
};

/// What `model` (built with `traces` and report_failing_traces) made of them.
HandScheduleCheck checkHandSchedules(const driver::CompiledModel& model,
                                     const KernelTraces& traces);

/// "2 hand schedules; 1 hand schedule does not apply: the build's own schedule
/// runs": those that apply counted apart from those that do not (empty
/// without hand schedules).
QString describeHandSchedules(const HandScheduleCheck& check);

}  // namespace tessera::studio
