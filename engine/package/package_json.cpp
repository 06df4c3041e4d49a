// JSON members of a package read with clear errors.
#include "engine/package/package_json.h"

#include "engine/core/error.h"
#include "engine/package/package_format.h"
#include "engine/package/sha256.h"

namespace tessera::package {

nlohmann::json parse_member_json(const std::string& text, const std::string& what,
                                 const char* member) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        TS_USER_FAIL() << what << ": member '" << member << "' is not valid JSON (" << e.what()
                       << "); the package is corrupt";
    }
}

graph::DType parse_member_dtype(const std::string& name, const std::string& what) {
    for (int i = 0; i <= int(graph::DType::Bool); ++i)
        if (name == graph::dtype_name(graph::DType(i))) return graph::DType(i);
    TS_USER_FAIL() << what << ": graph.json names an unknown dtype '" << name << "'";
}

void check_version_and_checksums(const nlohmann::json& meta,
                                 const std::map<std::string, const TarMember*>& members,
                                 const std::vector<const char*>& names, const std::string& what) {
    TS_USER_CHECK(meta.is_object() && meta.contains("format_version") &&
                  meta["format_version"].is_number_integer())
        << what << ": meta.json has no integer format_version; the package is corrupt";
    int version = meta["format_version"].get<int>();
    TS_USER_CHECK(version <= kFormatVersion)
        << what << ": package format version " << version << " is newer than this runtime reads ("
        << kFormatVersion << "); load it with a newer Tessera or recompile the model with this one";
    TS_USER_CHECK(version >= 1) << what << ": bad package format version " << version;
    TS_USER_CHECK(meta.contains("members") && meta["members"].is_object())
        << what << ": meta.json lists no member checksums; the package is corrupt";
    for (const char* name : names) {
        TS_USER_CHECK(meta["members"].contains(name) && meta["members"][name].is_string())
            << what << ": meta.json has no sha256 for member '" << name
            << "'; the package is corrupt";
        std::string expected = meta["members"][name].get<std::string>();
        std::string actual = sha256_hex(members.at(name)->data);
        TS_USER_CHECK(actual == expected)
            << what << ": checksum mismatch in member '" << name << "' (sha256 " << actual
            << ", meta.json says " << expected
            << "); the package is corrupt: copy it again or recompile it";
    }
}

}  // namespace tessera::package
