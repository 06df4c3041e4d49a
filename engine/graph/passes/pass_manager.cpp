// The pass registry (expanded from pass_list.def), pipeline resolution and the
// PassManager with its instruments.
#include "engine/graph/passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "engine/core/error.h"
#include "engine/graph/passes/convert_layout.h"
#include "engine/graph/passes/dead_code_elimination.h"
#include "engine/graph/passes/eliminate_common_subexpr.h"
#include "engine/graph/passes/fold_constants.h"
#include "engine/graph/passes/fold_scale_axis.h"
#include "engine/graph/passes/fuse_attention.h"
#include "engine/graph/passes/fuse_gelu.h"
#include "engine/graph/passes/fuse_layer_norm.h"
#include "engine/graph/passes/fuse_ops.h"
#include "engine/graph/passes/simplify_inference.h"
#include "engine/graph/passes/sink_reshapes.h"
#include "engine/graph/passes/winograd.h"
#include "engine/tir/interpreter.h"
#include "engine/topi/topi.h"

namespace tessera::passes {

std::vector<runtime::NDArray> evaluate_node(const graph::Graph& g, int node,
                                            const std::vector<runtime::NDArray>& inputs,
                                            const PassContext& ctx) {
    if (ctx.evaluator) return ctx.evaluator(g, node, inputs);
    const graph::Node& n = g.nodes[size_t(node)];
    tir::PrimFunc f = topi::lower_node(g, node);
    std::vector<runtime::NDArray> outs;
    std::vector<void*> args;
    for (const auto& a : inputs) args.push_back(a.raw());
    for (int v : n.outputs) {
        outs.push_back(runtime::NDArray::empty(g.values[size_t(v)].type));
        args.push_back(outs.back().raw());
    }
    tir::interpret(f, args);
    return outs;
}

const std::vector<PassInfo>& all_passes() {
    static const std::vector<PassInfo> list = {
#define TS_PASS(name, level, desc) PassInfo{#name, desc, level, &name},
#include "engine/graph/passes/pass_list.def"
#undef TS_PASS
    };
    return list;
}

const PassInfo* find_pass(const std::string& name) {
    for (const PassInfo& p : all_passes())
        if (p.name == name) return &p;
    return nullptr;
}

namespace {

std::string known_passes() {
    std::string s;
    for (const PassInfo& p : all_passes()) s += (s.empty() ? "" : ", ") + p.name;
    return s;
}

const PassInfo& checked_pass(const std::string& name) {
    const PassInfo* p = find_pass(name);
    TS_USER_CHECK(p != nullptr) << "unknown pass '" << name << "'; passes are: " << known_passes();
    return *p;
}

int registry_index(const std::string& name) {
    const auto& list = all_passes();
    for (size_t i = 0; i < list.size(); ++i)
        if (list[i].name == name) return int(i);
    return -1;
}

}  // namespace

std::vector<std::string> default_pipeline(int opt_level) {
    TS_USER_CHECK(opt_level >= 0 && opt_level <= 3) << "opt level must be 0..3, got " << opt_level;
    std::vector<std::string> out;
    for (const PassInfo& p : all_passes())
        if (p.opt_level <= opt_level) out.push_back(p.name);
    return out;
}

std::vector<std::string> resolve_pipeline(const std::vector<std::string>& spec, int opt_level) {
    std::vector<std::string> items;
    for (const std::string& s : spec) {
        std::stringstream ss(s);
        std::string item;
        while (std::getline(ss, item, ',')) {
            item.erase(0, item.find_first_not_of(" \t"));
            item.erase(item.find_last_not_of(" \t") + 1);
            if (!item.empty()) items.push_back(item);
        }
    }
    bool relative = !items.empty() && std::all_of(items.begin(), items.end(), [](const auto& i) {
        return i[0] == '+' || i[0] == '-';
    });
    if (items.empty()) return default_pipeline(opt_level);
    std::vector<std::string> out;
    if (relative) {
        out = default_pipeline(opt_level);
        for (const std::string& item : items) {
            std::string name = item.substr(1);
            checked_pass(name);
            auto it = std::find(out.begin(), out.end(), name);
            if (item[0] == '-') {
                if (it != out.end()) out.erase(it);
            } else if (it == out.end()) {
                out.push_back(name);
                std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
                    return registry_index(a) < registry_index(b);
                });
            }
        }
        return out;
    }
    for (const std::string& item : items) {
        if (item == "none") continue;
        TS_USER_CHECK(item[0] != '+' && item[0] != '-')
            << "pass list '" << item << "': mix either plain names (the exact pipeline) or "
            << "+name/-name edits of the default pipeline, not both";
        out.push_back(checked_pass(item).name);
    }
    return out;
}

PassManager::PassManager(int opt_level) {
    m_ctx.opt_level = opt_level;
    m_pipeline = default_pipeline(opt_level);
}

void PassManager::set_pipeline(const std::vector<std::string>& names) {
    for (const std::string& n : names) checked_pass(n);
    m_pipeline = names;
}

void PassManager::enable(const std::string& name) {
    checked_pass(name);
    if (std::find(m_pipeline.begin(), m_pipeline.end(), name) != m_pipeline.end()) return;
    m_pipeline.push_back(name);
    std::stable_sort(m_pipeline.begin(), m_pipeline.end(), [](const auto& a, const auto& b) {
        return registry_index(a) < registry_index(b);
    });
}

void PassManager::disable(const std::string& name) {
    checked_pass(name);
    m_pipeline.erase(std::remove(m_pipeline.begin(), m_pipeline.end(), name), m_pipeline.end());
}

graph::Graph PassManager::run(const graph::Graph& input) {
    m_records.clear();
    graph::verify(input);
    const char* debug = std::getenv("TESSERA_DEBUG");
    bool debug_print = debug && std::atoi(debug) >= 2;
    graph::Graph g = input;
    for (const std::string& name : m_pipeline) {
        const PassInfo& p = checked_pass(name);
        PassRecord rec;
        rec.name = name;
        rec.nodes_before = int(g.nodes.size());
        std::string before = graph::print(g);
        auto t0 = std::chrono::steady_clock::now();
        graph::Graph next = p.fn(g, m_ctx);
        rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        try {
            graph::verify(next);
        } catch (const UserError& e) {
            TS_FAIL() << "pass " << name << " produced an invalid graph: " << e.what();
        }
        TS_CHECK(next.inputs.size() == g.inputs.size() && next.outputs.size() == g.outputs.size())
            << "pass " << name << " changed the number of graph inputs or outputs";
        rec.nodes_after = int(next.nodes.size());
        rec.changed = graph::print(next) != before;
        g = std::move(next);
        m_records.push_back(rec);
        if (m_print_after) m_print_after(name, g);
        if (debug_print)
            std::cerr << "// ---- graph after " << name << " (" << rec.seconds * 1e3 << " ms)\n"
                      << graph::print(g);
    }
    return g;
}

}  // namespace tessera::passes
