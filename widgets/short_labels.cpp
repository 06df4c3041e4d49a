#include "widgets/short_labels.h"

namespace tessera::widgets {

int sharedLabelStart(const QStringList& labels) {
    if (labels.size() < 2) return 0;
    int n = int(labels.first().size());
    for (const QString& l : labels) {
        int i = 0;
        while (i < n && i < l.size() && l[i] == labels.first()[i]) ++i;
        n = i;
    }
    // Back to just after a separator, so no label starts inside a word.
    while (n > 0 && labels.first()[n - 1] != '_' && labels.first()[n - 1] != '/') --n;
    // Every label keeps a part of its own.
    for (const QString& l : labels)
        if (l.size() <= n) return 0;
    return n;
}

QString shortLabel(const QString& label, int shared, int max_chars) {
    const QString rest = label.mid(shared);
    const QString shown = rest.size() > max_chars ? rest.left(max_chars - 1) + QChar(0x2026) : rest;
    return shared > 0 ? QChar(0x2026) + shown : shown;
}

}  // namespace tessera::widgets
