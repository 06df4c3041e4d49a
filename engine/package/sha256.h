// SHA-256 (FIPS 180-4) for package member checksums; no external library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::package {

/// Lower-case hex SHA-256 digest of `size` bytes.
std::string sha256_hex(const void* data, size_t size);
inline std::string sha256_hex(const std::string& s) { return sha256_hex(s.data(), s.size()); }

}  // namespace tessera::package
