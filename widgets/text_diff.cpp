// Line diff by dynamic-programming LCS (texts here are a few hundred lines).
#include "widgets/text_diff.h"

#include <vector>

namespace tessera::widgets {

QString lineDiff(const QString& before, const QString& after) {
    const QStringList a = before.split('\n'), b = after.split('\n');
    const int n = int(a.size()), m = int(b.size());
    // lcs[i][j]: LCS length of a[i..] and b[j..].
    std::vector<std::vector<int>> lcs(size_t(n + 1), std::vector<int>(size_t(m + 1), 0));
    for (int i = n - 1; i >= 0; --i)
        for (int j = m - 1; j >= 0; --j)
            lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    QStringList out;
    int i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[i] == b[j]) {
            out << "  " + a[i++];
            ++j;
        } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
            out << "- " + a[i++];  // removals first, as in unified diffs
        } else {
            out << "+ " + b[j++];
        }
    }
    return out.join('\n');
}

DiffStats diffStats(const QString& diff) {
    DiffStats s;
    for (const QString& line : diff.split('\n')) {
        if (line.startsWith("- ")) ++s.removed;
        if (line.startsWith("+ ")) ++s.added;
    }
    return s;
}

}  // namespace tessera::widgets
