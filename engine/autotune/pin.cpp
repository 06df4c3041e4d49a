// Knob pins (see pin.h).
#include "engine/autotune/pin.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/core/error.h"
#include "engine/topi/cpu/schedule_cpu.h"

namespace tessera::autotune {

std::string KnobPins::to_json() const {
    if (!steps.empty()) {
        schedule::Trace t;
        t.steps = steps;
        return t.to_json();
    }
    return nlohmann::json{{"knobs", knobs}}.dump();
}

KnobPins KnobPins::from_json(const std::string& text, const std::string& origin) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw UserError(origin + ": not JSON: " + e.what());
    }
    TS_USER_CHECK(j.is_object() && !(j.contains("knobs") && j.contains("steps")))
        << origin << ": a pin file pins knob values or trace steps, not both";
    KnobPins pins;
    if (j.is_object() && j.contains("steps")) {
        pins.steps = schedule::Trace::from_json(text, origin).steps;
        TS_USER_CHECK(!pins.steps.empty()) << origin << ": no steps to pin";
        return pins;
    }
    TS_USER_CHECK(j.is_object() && j.contains("knobs") && j["knobs"].is_object())
        << origin << ": a pin file is {\"knobs\": {\"NAME\": VALUE, ...}} or a trace's {\"steps\": [...]}";
    for (const auto& [name, value] : j["knobs"].items()) {
        TS_USER_CHECK(value.is_number_integer())
            << origin << ": knob '" << name << "' must be an integer, got " << value.dump();
        pins.knobs[name] = value.get<int64_t>();
    }
    return pins;
}

KnobPins KnobPins::load(const std::string& path) {
    std::ifstream in(path);
    TS_USER_CHECK(in.good()) << "cannot read the pin file '" << path << "'";
    std::stringstream ss;
    ss << in.rdbuf();
    return from_json(ss.str(), path);
}

void pin_task(TuneTask& t, const KnobPins& pins) {
    if (!pins.steps.empty()) {
        t.pinned.steps = pins.steps;
        t.pinned.workload = t.key;
        schedule::Schedule s = t.pinned.apply(t.func);  // ScheduleError naming the step
        t.default_func = s.func();
        t.default_trace = s.trace();
        t.default_trace.workload = t.key;
        t.knob_share = 0;
        return;
    }
    TS_USER_CHECK(!t.anchor.op.empty() && !t.knobs.empty())
        << "kernel '" << t.name << "' has no default-rule knobs to pin";
    for (const auto& pin : pins.knobs) {
        const std::string& name = pin.first;
        const int64_t value = pin.second;
        auto knob = std::find_if(t.knobs.begin(), t.knobs.end(),
                                 [&](const topi::CpuKnob& k) { return k.name == name; });
        if (knob == t.knobs.end()) {
            std::string names;
            for (const topi::CpuKnob& k : t.knobs) names += (names.empty() ? "" : ", ") + k.name;
            throw UserError("kernel '" + t.name + "' has no knob '" + name + "' (its knobs: " +
                            names + ")");
        }
        if (std::find(knob->choices.begin(), knob->choices.end(), value) == knob->choices.end()) {
            std::string legal;
            for (int64_t c : knob->choices) legal += (legal.empty() ? "" : ", ") + std::to_string(c);
            throw UserError("knob '" + name + "' of kernel '" + t.name + "' cannot be " +
                            std::to_string(value) + " (legal: " + legal + ")");
        }
        knob->choices = {value};
    }
    t.knob_share = 1.0;
    topi::CpuScheduleOptions cpu = t.cpu;
    for (const auto& [name, value] : pins.knobs) cpu.knobs[name] = value;
    schedule::Schedule s = topi::cpu_default_schedule(t.func, t.anchor, cpu);
    t.default_func = s.func();
    t.default_trace = s.trace();
}

}  // namespace tessera::autotune
