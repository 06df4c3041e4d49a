// The tir pass registry (one list of named passes with one-line descriptions)
// and a PassManager that runs a pipeline by name with instruments: print the
// IR after each pass that changed it, time each pass, verify after each pass.
// TESSERA_DEBUG=2 prints the IR after each pass to stderr.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::tir {

using PassFunction = std::function<PrimFunc(const PrimFunc&)>;

/// One registered pass: a pure function PrimFunc -> PrimFunc.
struct PassInfo {
    std::string name;
    std::string description;  // one line, shown by the studio
    PassFunction run;
};

/// Every tir pass, in the order of the default pipeline where they appear in it.
const std::vector<PassInfo>& tir_pass_registry();

/// The registered pass called `name`; throws UserError naming the known passes.
const PassInfo& find_tir_pass(const std::string& name);

/// The passes run before code generation: lower_blocks, compact_local_buffers,
/// loop_partition, flatten_buffers, vectorize_loops, unroll_loops, simplify,
/// inject_prefetch, storage_rewrite, remove_no_op.
std::vector<std::string> default_lowering_pipeline();

/// The passes the CUDA back end runs before it splits a function into
/// kernels: compact_thread_private, lower_blocks, compact_shared_buffers,
/// flatten_buffers, simplify (then insert_shared_syncs on each kernel).
std::vector<std::string> cuda_lowering_pipeline();

/// What one pass did: its name, whether it changed the function, wall time.
struct PassRecord {
    std::string name;
    bool changed = false;
    double milliseconds = 0;
};

/// Runs passes by name, in order, with instruments.
class PassManager {
public:
    /// Called after each pass with its name, the function after it and whether it changed.
    using AfterPass =
        std::function<void(const std::string& pass, const PrimFunc& after, bool changed)>;

    explicit PassManager(std::vector<std::string> passes);

    /// Runs tir::verify after each pass (default on); a failure names the pass.
    void set_verify(bool on) { m_verify = on; }
    /// Adds an instrument called after every pass.
    void add_after_pass(AfterPass callback) { m_after.push_back(std::move(callback)); }
    /// Prints the IR after each pass that changed it to stderr (what
    /// TESSERA_DEBUG=2 turns on).
    void set_print_ir(bool on) { m_print = on; }

    /// Runs the pipeline on `f`. Records of the last run: records().
    PrimFunc run(const PrimFunc& f);
    const std::vector<PassRecord>& records() const { return m_records; }

private:
    std::vector<std::string> m_passes;
    std::vector<AfterPass> m_after;
    std::vector<PassRecord> m_records;
    bool m_verify = true;
    bool m_print = false;
};

/// A lowering pipeline (default: the CPU one) on `f`: the entry point of code
/// generators. Prints the IR after each pass when TESSERA_DEBUG is 2 or more.
PrimFunc lower_for_codegen(const PrimFunc& f,
                           const std::vector<std::string>& pipeline = default_lowering_pipeline());

}  // namespace tessera::tir
