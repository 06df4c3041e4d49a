// `tessera conformance`: run ONNX test-case folders and count passes.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <regex>

#include "app/cli/cli_common.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"

namespace tessera::cli {

namespace fs = std::filesystem;

CLI::App* add_conformance_command(CLI::App& app, ConformanceOptions& o) {
    CLI::App* cmd = app.add_subcommand("conformance",
                                       "Run ONNX test-case folders (model.onnx + test_data_set_*)");
    cmd->add_option("DIR", o.dirs, "folders of test cases, or case folders themselves")->required();
    cmd->add_option("--filter", o.filter,
                    "only cases whose folder name matches this regex (search)");
    cmd->add_flag("--json", o.json, "print one JSON object as the last line");
    cmd->add_flag("--round-trip", o.round_trip,
                  "save each imported model as ONNX, read it back and check that one");
    return cmd;
}

namespace {

// Case folders under `dir` (or `dir` itself when it holds model.onnx), sorted.
std::vector<fs::path> find_cases(const std::string& dir) {
    TS_USER_CHECK(fs::is_directory(dir)) << "conformance folder '" << dir << "' does not exist";
    fs::path root(dir);
    if (fs::is_regular_file(root / "model.onnx")) return {root};
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(root)) {
        if (e.is_directory() && fs::is_regular_file(e.path() / "model.onnx"))
            cases.push_back(e.path());
    }
    std::sort(cases.begin(), cases.end());
    return cases;
}

}  // namespace

int run_conformance(const ConformanceOptions& o) {
    std::regex filter;
    try {
        filter = std::regex(o.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        throw UserError("--filter '" + o.filter +
                        "' is not a valid regular expression: " + e.what());
    }
    std::vector<fs::path> cases;
    for (const auto& d : o.dirs) {
        for (auto& c : find_cases(d)) cases.push_back(c);
    }
    int passed = 0, failed = 0, skipped = 0;
    nlohmann::json list = nlohmann::json::array();
    for (const fs::path& c : cases) {
        std::string name = c.lexically_normal().filename().string();
        if (name.empty()) name = c.lexically_normal().parent_path().filename().string();
        if (!o.filter.empty() && !std::regex_search(name, filter)) continue;
        driver::ConformanceResult r = driver::run_conformance_case(c.string(), o.round_trip);
        const char* status = "SKIP";
        switch (r.status) {
            case driver::ConformanceResult::Passed:
                ++passed;
                status = "PASS";
                std::cout << "PASS " << name << std::endl;
                break;
            case driver::ConformanceResult::Failed:
                ++failed;
                status = "FAIL";
                std::cout << "FAIL " << name << ": " << r.message << std::endl;
                break;
            case driver::ConformanceResult::Skipped:
                ++skipped;
                std::cout << "SKIP " << name << ": " << r.message << std::endl;
                break;
        }
        list.push_back({{"name", name}, {"status", status}, {"message", r.message}});
    }
    std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped"
              << std::endl;
    if (o.json) {
        print_json_line(
            {{"passed", passed}, {"failed", failed}, {"skipped", skipped}, {"cases", list}});
    }
    return failed ? kCheckFailed : kOk;
}

namespace {
const CommandRegistrar kRegistered{make_command<ConformanceOptions>("conformance", add_conformance_command, run_conformance)};
}  // namespace

}  // namespace tessera::cli
