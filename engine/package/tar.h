// A minimal POSIX ustar archive writer and reader (regular files only), the
// container of Tessera packages; readable by GNU tar and libarchive.
#pragma once

#include <string>
#include <vector>

namespace tessera::package {

struct TarMember {
    std::string name;  // at most 100 bytes, no folders needed
    std::string data;
};

/// The archive bytes of `members`, in order, ending with two zero blocks.
std::string write_tar(const std::vector<TarMember>& members);

/// Parses an archive; UserError naming `what` (the file) on a damaged header,
/// a truncated member or a non-regular entry.
std::vector<TarMember> read_tar(const std::string& bytes, const std::string& what);

/// Reads/writes a whole file; UserError naming the path on failure.
std::string read_file_bytes(const std::string& path);
void write_file_bytes(const std::string& path, const std::string& bytes);

}  // namespace tessera::package
