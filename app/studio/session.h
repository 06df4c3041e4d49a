// Session: what the studio saves in a project file (JSON): the model path and
// its sha256, the graph edits, the build settings (pass pipeline, opt level,
// threads), per-op schedule traces, the target and the tuning database path. Also used for autosave and recovery.
//
//   {"format": "tessera-session", "version": 1,
//    "model": {"path": "...", "sha256": "..."},
//    "edits": [{"kind": "set_attribute", "target": "conv1", "key": "strides",
//               "value": {"ints": [2, 2]}}, ...],
//    "pipeline": ["fold_constants", ...], "target": "llvm", "tuning_db": "",
//    "opt_level": 2, "threads": 2,
//    "traces": {"conv1": {"steps": [...]}}}
#pragma once

#include <QMap>
#include <QString>
#include <QStringList>
#include <vector>

#include "engine/graph/graph_edit.h"
#include "engine/schedule/trace.h"

namespace tessera::studio {

struct Session {
    QString modelPath;
    QString modelSha256;
    std::vector<graph::GraphEdit> edits;
    QStringList pipeline;
    QMap<QString, std::vector<schedule::Step>> traces;  // node name -> steps
    QString target = "llvm";
    QString tuningDb;
    int optLevel = 2;
    int threads = 0;  // 0: this machine's default (every core)

    QByteArray toJson() const;
    /// Parses a session; false with `error` set (naming `origin`) on bad input.
    static bool fromJson(const QByteArray& json, const QString& origin, Session* out, QString* error);
    bool save(const QString& path, QString* error) const;
    static bool load(const QString& path, Session* out, QString* error);
};

/// Hex sha256 of a file's bytes (empty if it cannot be read).
QString fileSha256(const QString& path);

}  // namespace tessera::studio
