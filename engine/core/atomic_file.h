// Files written whole or not at all: the bytes go to a temporary file beside
// the target, are synced, and replace the target with one rename(). A crash
// or a full disk mid-write leaves the previous file (package, model, tuning
// export) intact.
#pragma once

#include <string>

namespace tessera {

/// Writes `bytes` to `path` atomically. UserError naming the path (and the
/// system's reason) when it cannot be written; the old file stays.
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace tessera
