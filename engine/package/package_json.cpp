// JSON members of a package read with clear errors.
#include "engine/package/package_json.h"

#include "engine/core/error.h"

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

}  // namespace tessera::package
