// A line diff (longest common subsequence) for the code views' "diff with the
// previous schedule step".
#pragma once

#include <QString>
#include <QStringList>

namespace tessera::widgets {

/// Unified-style diff of two texts: every line of the result starts with
/// "  " (unchanged), "- " (only in `before`) or "+ " (only in `after`).
QString lineDiff(const QString& before, const QString& after);

/// Counts of removed and added lines in a lineDiff() result.
struct DiffStats {
    int removed = 0;
    int added = 0;
};
DiffStats diffStats(const QString& diff);

}  // namespace tessera::widgets
