// The graph pass registry (pass_list.def) and the PassManager that runs a
// pipeline of passes with instruments: timing, graph::verify after every
// pass, and a print-after callback (the studio's "IR after each pass" view,
// `--print-after-all`, TESSERA_DEBUG=2).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

struct PassInfo {
    std::string name;
    std::string description;  // one line
    int opt_level = 0;        // lowest -O that runs it by default; 4 = only when named
    PassFn fn = nullptr;
};

/// Every registered pass, in default pipeline order.
const std::vector<PassInfo>& all_passes();
/// nullptr when no pass has this name.
const PassInfo* find_pass(const std::string& name);

/// Names of the passes that opt level `opt_level` (0..3) runs, in order.
std::vector<std::string> default_pipeline(int opt_level);

/// Resolves a user's pass list against the default pipeline of `opt_level`.
/// Entries are comma-separated (or given as separate strings). Plain names
/// give the exact pipeline, in that order; "+name" adds a pass to the default
/// pipeline (at its registry position), "-name" removes one; "none" is the
/// empty pipeline. Throws UserError naming an unknown pass and listing the
/// known ones.
std::vector<std::string> resolve_pipeline(const std::vector<std::string>& spec, int opt_level);

struct PassRecord {
    std::string name;
    double seconds = 0;
    bool changed = false;  // printed text of the graph differs
    int nodes_before = 0, nodes_after = 0;
};

class PassManager {
public:
    /// The default pipeline of `opt_level`.
    explicit PassManager(int opt_level = 2);

    /// Replaces the pipeline by `names` (each must be registered).
    void set_pipeline(const std::vector<std::string>& names);
    const std::vector<std::string>& pipeline() const { return m_pipeline; }
    /// Adds a pass at its registry position (no-op when already there).
    void enable(const std::string& name);
    /// Removes a pass from the pipeline (no-op when absent).
    void disable(const std::string& name);

    /// Called after each pass with its name and result (print-after-all).
    void set_print_after(std::function<void(const std::string&, const graph::Graph&)> f) {
        m_print_after = std::move(f);
    }
    void set_evaluator(NodeEvaluator e) { m_ctx.evaluator = std::move(e); }
    int opt_level() const { return m_ctx.opt_level; }

    /// Verifies `g` (UserError if the input is invalid), runs the pipeline and
    /// verifies after each pass (InternalError naming the pass if it broke the
    /// graph). Records timings in records().
    graph::Graph run(const graph::Graph& g);
    const std::vector<PassRecord>& records() const { return m_records; }

private:
    PassContext m_ctx;
    std::vector<std::string> m_pipeline;
    std::function<void(const std::string&, const graph::Graph&)> m_print_after;
    std::vector<PassRecord> m_records;
};

}  // namespace tessera::passes
