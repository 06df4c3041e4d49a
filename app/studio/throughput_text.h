// How the studio words a kernel's or a model's throughput, so that no figure
// reads as more than the machine can do: integer dot products are G
// operations/s against the int8 peak, not GFLOP/s against the float peak,
// and a Winograd conv's GFLOP/s of the direct conv's FLOPs are "effective".
#pragma once

#include <QString>

namespace tessera::studio {

/// "12.34 GFLOP/s", "12.34 GOP/s (int8)" or "12.34 GFLOP/s effective
/// (executes 5.67 GFLOP/s)".
inline QString throughputText(double gflops, double workGflops, bool integer) {
    if (integer) return QString("%1 GOP/s (int8)").arg(gflops, 0, 'f', 2);
    if (workGflops > 0)
        return QString("%1 GFLOP/s effective (executes %2 GFLOP/s)")
            .arg(gflops, 0, 'f', 2)
            .arg(workGflops, 0, 'f', 2);
    return QString("%1 GFLOP/s").arg(gflops, 0, 'f', 2);
}

/// The unit of a model's throughput: G operations/s when some of its work
/// is integer dot products, else GFLOP/s; "effective" when some kernel
/// executes fewer FLOPs than its ops define (Winograd: a model's figure may
/// then exceed the float peak).
inline QString modelThroughputUnit(bool anyInteger, bool anyEffective = false) {
    QString unit = anyInteger ? QString("GOP/s (int8 and float operations)") : QString("GFLOP/s");
    if (anyEffective) unit += " effective (Winograd convs counted as direct ones)";
    return unit;
}

}  // namespace tessera::studio
