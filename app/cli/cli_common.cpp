// Shared helpers of the `tessera` command line.
#include "app/cli/cli_common.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "engine/core/error.h"
#include "engine/driver/driver.h"

namespace tessera::cli {

namespace fs = std::filesystem;

ModelPath resolve_model_path(const std::string& arg) {
    ModelPath p;
    fs::path path(arg);
    if (fs::is_directory(path)) {
        TS_USER_CHECK(fs::is_regular_file(path / "model.onnx"))
            << "folder '" << arg
            << "' holds no model.onnx; pass an .onnx file or an ONNX test-case folder";
        p.file = (path / "model.onnx").string();
        if (fs::is_directory(path / "test_data_set_0"))
            p.default_input_dir = (path / "test_data_set_0").string();
        return p;
    }
    TS_USER_CHECK(fs::exists(path)) << "model file '" << arg << "' does not exist";
    p.file = arg;
    return p;
}

graph::Graph load(const ModelPath& p) { return driver::load_model(p.file); }

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string sci(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

void print_json_line(const nlohmann::json& j) {
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

std::string node_list(const graph::Graph& g, size_t limit) {
    std::string s;
    for (size_t i = 0; i < g.nodes.size() && i < limit; ++i) {
        if (i) s += ", ";
        s += g.nodes[i].name;
    }
    if (g.nodes.size() > limit) s += ", ...";
    return s;
}

}  // namespace tessera::cli

namespace tessera::cli {
std::vector<CommandDef>& command_table() {
    static std::vector<CommandDef> table;
    return table;
}
}  // namespace tessera::cli
