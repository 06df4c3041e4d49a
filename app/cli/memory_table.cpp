// Formatting of the executor's memory plan.
#include "app/cli/memory_table.h"

#include <algorithm>
#include <cstdio>

namespace tessera::cli {

namespace {

std::string value_name(const graph::Graph& g, const runtime::GraphExecutor& ex, int v) {
    return g.values.size() == ex.value_types().size() ? g.values[size_t(v)].name
                                                      : "%" + std::to_string(v);
}

std::vector<runtime::BufferInfo> planned(const runtime::GraphExecutor& ex) {
    std::vector<runtime::BufferInfo> out;
    for (const auto& b : ex.buffers())
        if (b.kind == runtime::BufferInfo::Planned) out.push_back(b);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.first_use != b.first_use ? a.first_use < b.first_use : a.offset < b.offset;
    });
    return out;
}

}  // namespace

std::string memory_table(const runtime::GraphExecutor& ex, const graph::Graph& g) {
    std::string text;
    char line[256];
    std::snprintf(line, sizeof line, "%-32s %12s %12s %11s\n", "value", "offset", "bytes",
                  "live calls");
    text += line;
    for (const auto& b : planned(ex)) {
        std::string name = value_name(g, ex, b.value);
        if (name.size() > 32) name = name.substr(0, 29) + "...";
        std::snprintf(line, sizeof line, "%-32s %12lld %12lld %5d..%-4d\n", name.c_str(),
                      static_cast<long long>(b.offset), static_cast<long long>(b.bytes),
                      b.first_use, b.last_use);
        text += line;
    }
    std::snprintf(line, sizeof line,
                  "peak %lld bytes (arena), %lld bytes without reuse (%.1f%% saved), "
                  "%lld bytes of parameters, %zu kernel calls\n",
                  static_cast<long long>(ex.peak_bytes()), static_cast<long long>(ex.naive_bytes()),
                  ex.naive_bytes() > 0 ? 100.0 * double(ex.naive_bytes() - ex.peak_bytes()) /
                                             double(ex.naive_bytes())
                                       : 0.0,
                  static_cast<long long>(ex.param_bytes()), ex.calls().size());
    text += line;
    return text;
}

nlohmann::json memory_json(const runtime::GraphExecutor& ex, const graph::Graph& g) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& b : planned(ex))
        arr.push_back({{"value", value_name(g, ex, b.value)},
                       {"offset", b.offset},
                       {"bytes", b.bytes},
                       {"first_call", b.first_use},
                       {"last_call", b.last_use}});
    return {{"peak_bytes", ex.peak_bytes()},
            {"naive_bytes", ex.naive_bytes()},
            {"param_bytes", ex.param_bytes()},
            {"buffers", arr}};
}

}  // namespace tessera::cli
