// Trace <-> JSON, and replay of a trace on a fresh function.
#include "engine/schedule/trace.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/core/error.h"
#include "engine/schedule/schedule.h"

namespace tessera::schedule {

namespace {

// The JSON name of a step's integer arguments.
const char* ints_key(const std::string& op) {
    if (op == "split" || op == "tile") return "factors";
    if (op == "cache_read" || op == "cache_write") return "index";
    if (op == "rfactor") return "factor_axis";
    if (op == "transform_layout") return "permutation";
    return "ints";
}

// The JSON name of a step's `key` string.
const char* key_key(const std::string& op) {
    if (op == "bind") return "thread";
    if (op == "cache_read" || op == "cache_write") return "scope";
    if (op == "pack_operand" || op == "transform_layout") return "buffer";
    return "key";
}

bool single_int(const std::string& op) {
    return op == "cache_read" || op == "cache_write" || op == "rfactor";
}

nlohmann::json step_to_json(const Step& s) {
    nlohmann::json j;
    j["op"] = s.op;
    if (!s.block.empty()) j["block"] = s.block;
    if (s.loops.size() == 1 && s.op != "fuse" && s.op != "reorder") {
        j["loop"] = s.loops[0];
    } else if (!s.loops.empty()) {
        j["loops"] = s.loops;
    }
    if (!s.ints.empty()) {
        if (single_int(s.op) && s.ints.size() == 1) {
            j[ints_key(s.op)] = s.ints[0];
        } else {
            j[ints_key(s.op)] = s.ints;
        }
    }
    if (!s.key.empty()) j[key_key(s.op)] = s.key;
    if (!s.value.empty() || s.op == "annotate") j["value"] = s.value;
    if (!s.outputs.empty()) j["out"] = s.outputs;
    if (!s.enabled) j["enabled"] = false;
    return j;
}

Step step_from_json(const nlohmann::json& j, const std::string& where) {
    TS_USER_CHECK(j.is_object()) << where << ": a step must be a JSON object";
    auto str = [&](const char* k, std::string& out) {
        if (!j.contains(k)) return;
        TS_USER_CHECK(j[k].is_string()) << where << ": \"" << k << "\" must be a string";
        out = j[k].get<std::string>();
    };
    auto strs = [&](const char* k, std::vector<std::string>& out) {
        if (!j.contains(k)) return;
        TS_USER_CHECK(j[k].is_array()) << where << ": \"" << k << "\" must be a list of names";
        for (const auto& x : j[k]) {
            TS_USER_CHECK(x.is_string()) << where << ": \"" << k << "\" must be a list of names";
            out.push_back(x.get<std::string>());
        }
    };
    Step s;
    TS_USER_CHECK(j.contains("op") && j["op"].is_string()) << where << ": missing \"op\"";
    s.op = j["op"].get<std::string>();
    str("block", s.block);
    if (j.contains("loop")) {
        std::string l;
        str("loop", l);
        s.loops.push_back(l);
    }
    strs("loops", s.loops);
    const char* ik = ints_key(s.op);
    if (j.contains(ik)) {
        const auto& v = j[ik];
        if (v.is_number_integer()) {
            s.ints.push_back(v.get<int64_t>());
        } else {
            TS_USER_CHECK(v.is_array()) << where << ": \"" << ik << "\" must be integers";
            for (const auto& x : v) {
                TS_USER_CHECK(x.is_number_integer())
                    << where << ": \"" << ik << "\" must be integers";
                s.ints.push_back(x.get<int64_t>());
            }
        }
    }
    str(key_key(s.op), s.key);
    str("value", s.value);
    strs("out", s.outputs);
    if (j.contains("enabled")) {
        TS_USER_CHECK(j["enabled"].is_boolean()) << where << ": \"enabled\" must be true or false";
        s.enabled = j["enabled"].get<bool>();
    }
    return s;
}

}  // namespace

std::string Trace::to_json() const {
    nlohmann::json j;
    j["workload"] = workload;
    j["target"] = target;
    j["steps"] = nlohmann::json::array();
    for (const Step& s : steps) j["steps"].push_back(step_to_json(s));
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

Trace Trace::from_json(const std::string& text, const std::string& origin) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        TS_USER_FAIL() << origin << ": not valid JSON: " << e.what();
    }
    Trace t;
    if (j.is_array()) j = nlohmann::json{{"steps", j}};
    TS_USER_CHECK(j.is_object()) << origin << ": a trace must be a JSON object with \"steps\"";
    TS_USER_CHECK(j.contains("steps") && j["steps"].is_array())
        << origin << ": a trace needs a \"steps\" list";
    if (j.contains("workload") && j["workload"].is_string()) t.workload = j["workload"];
    if (j.contains("target") && j["target"].is_string()) t.target = j["target"];
    int i = 0;
    for (const auto& s : j["steps"]) {
        t.steps.push_back(step_from_json(s, origin + ": step " + std::to_string(i + 1)));
        ++i;
    }
    return t;
}

Trace Trace::load(const std::string& path) {
    std::ifstream in(path);
    TS_USER_CHECK(in.good()) << path << ": cannot open the trace file";
    std::stringstream ss;
    ss << in.rdbuf();
    return from_json(ss.str(), path);
}

void Trace::save(const std::string& path) const {
    std::ofstream out(path);
    TS_USER_CHECK(out.good()) << path << ": cannot write the trace file";
    out << to_json() << "\n";
}

Schedule Trace::apply(const tir::PrimFunc& func) const {
    Schedule s(func);
    for (const Step& step : steps) s.apply(step);
    return s;
}

}  // namespace tessera::schedule
