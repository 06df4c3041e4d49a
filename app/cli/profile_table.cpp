// Formatting of the per-kernel profile table.
#include "app/cli/profile_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/graph/graph.h"

namespace tessera::cli {

std::vector<ProfileRow> profile_rows(const std::vector<runtime::KernelProfile>& prof,
                                     const std::vector<std::string>& node_names,
                                     const std::vector<std::string>& node_ops) {
    std::vector<ProfileRow> rows;
    for (const auto& p : prof) {
        ProfileRow r{p.kernel, {}, p.calls, p.seconds, p.flops, p.bytes, p.work_flops};
        for (int n : p.nodes) {
            r.nodes.push_back(n >= 0 && size_t(n) < node_names.size() ? node_names[size_t(n)]
                                                                       : "#" + std::to_string(n));
            if (n >= 0 && size_t(n) < node_ops.size())
                r.integer = r.integer || graph::is_integer_gemm(node_ops[size_t(n)]);
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

namespace {
std::string clip(const std::string& s, size_t width) {
    return s.size() > width ? s.substr(0, width - 3) + "..." : s;
}
}  // namespace

nlohmann::json print_profile(std::vector<ProfileRow> rows, std::ostream& os) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
    double total = 0, flops = 0, bytes = 0;
    int calls = 0;
    for (const auto& r : rows) {
        total += r.seconds;
        flops += r.flops;
        bytes += r.bytes;
        calls += r.calls;
    }
    char line[512];
    std::snprintf(line, sizeof line, "%-32s %-24s %5s %10s %6s %9s %8s", "kernel", "nodes",
                  "calls", "time ms", "%", "GFLOP/s", "GB/s");
    os << "\n" << line << "\n";
    nlohmann::json arr = nlohmann::json::array();
    bool any_effective = false, any_integer = false;
    for (const auto& r : rows) {
        std::string nodes;
        for (const auto& n : r.nodes) nodes += (nodes.empty() ? "" : ",") + n;
        double pct = total > 0 ? 100.0 * r.seconds / total : 0;
        double gf = r.seconds > 0 ? r.flops / r.seconds / 1e9 : 0;
        double gb = r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0;
        // A Winograd kernel executes other work than its op's FLOPs: its
        // GFLOP/s are "effective" (marked *).
        const bool effective = runtime::executes_other_work(r.flops, r.work_flops);
        any_effective |= effective;
        any_integer |= r.integer;
        std::snprintf(line, sizeof line, "%-32s %-24s %5d %10.4f %6.1f %9.2f%s %7.2f",
                      clip(r.kernel, 32).c_str(), clip(nodes, 24).c_str(), r.calls, r.seconds * 1e3,
                      pct, gf,
                      effective   ? "*"
                      : r.integer ? "i"
                                  : " ",
                      gb);
        os << line << "\n";
        arr.push_back({{"kernel", r.kernel},
                       {"nodes", r.nodes},
                       {"calls", r.calls},
                       {"time_ms", r.seconds * 1e3},
                       {"percent", pct},
                       {"gflops", gf},
                       {"gbps", gb},
                       {"flops", r.flops},
                       {"work_flops", r.work_flops > 0 ? r.work_flops : r.flops},
                       {"integer", r.integer},
                       {"bytes", r.bytes}});
    }
    std::snprintf(line, sizeof line, "%-32s %-24s %5d %10.4f %6.1f %9.2f %8.2f", "total",
                  (std::to_string(rows.size()) + " kernels").c_str(), calls, total * 1e3,
                  total > 0 ? 100.0 : 0.0, total > 0 ? flops / total / 1e9 : 0.0,
                  total > 0 ? bytes / total / 1e9 : 0.0);
    os << line << "\n";
    os << "each kernel timed alone, its buffers flushed from the caches first (as the tuner "
          "and the studio's editor time it): together they take longer than the latency, "
          "where a kernel reads what the one before left in cache\n";
    if (any_effective)
        os << "* effective GFLOP/s: the op's FLOPs (the direct convolution's); the Winograd "
              "kernel executes other work (work_flops in --json)\n";
    if (any_integer)
        os << "i G operations/s of 8-bit integer dot products (int8): their roof is the CPU's "
              "int8 dot-product peak, not its float peak; the total counts both kinds\n";
    return arr;
}

}  // namespace tessera::cli
