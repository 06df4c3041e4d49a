// The registry of tir passes and the PassManager.
#include "engine/tir/passes/pass_manager.h"

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "engine/core/error.h"
#include "engine/tir/passes/compact_local_buffers.h"
#include "engine/tir/passes/compact_shared.h"
#include "engine/tir/passes/compact_thread_private.h"
#include "engine/tir/passes/flatten_buffers.h"
#include "engine/tir/passes/infer_regions.h"
#include "engine/tir/passes/inject_prefetch.h"
#include "engine/tir/passes/insert_shared_syncs.h"
#include "engine/tir/passes/loop_partition.h"
#include "engine/tir/passes/lower_blocks.h"
#include "engine/tir/passes/remove_no_op.h"
#include "engine/tir/passes/storage_rewrite.h"
#include "engine/tir/passes/unroll_loops.h"
#include "engine/tir/passes/vectorize_loops.h"
#include "engine/tir/passes/simplify.h"
#include "engine/tir/printer.h"
#include "engine/tir/verify.h"

namespace tessera::tir {

const std::vector<PassInfo>& tir_pass_registry() {
    using F = PrimFunc (*)(const PrimFunc&);
    static const std::vector<PassInfo> passes = {
        {"infer_regions", "recompute block read/write regions from the accesses in their bodies",
         F(infer_regions)},
        {"lower_blocks",
         "replace blocks by plain loops, predicates by ifs, init by a guarded store",
         F(lower_blocks)},
        {"compact_local_buffers",
         "move local buffers into the loop holding their accesses, shrunk to the tile they touch",
         F(compact_local_buffers)},
        {"loop_partition",
         "split loops with a tail condition into an unconditional main part and a tail",
         F(loop_partition)},
        {"flatten_buffers", "turn multi-dimensional buffer accesses into row-major 1-D indices",
         F(flatten_buffers)},
        {"vectorize_loops",
         "turn vectorized loops into Ramp/Broadcast vector IR (serial if impossible)",
         F(vectorize_loops)},
        {"unroll_loops", "copy the body of unrolled loops once per iteration", F(unroll_loops)},
        {"simplify", "fold constants, canonical index arithmetic, drop unit loops and constant ifs",
         F(simplify)},
        {"inject_prefetch",
         "software prefetches of loads a few iterations ahead where loops ask for them",
         F(inject_prefetch)},
        {"storage_rewrite", "hoist allocations and reuse the memory of dead temporaries",
         F(storage_rewrite)},
        {"remove_no_op", "remove self-stores, empty loops, false branches and zero-extent loops",
         F(remove_no_op)},
        {"compact_thread_private",
         "drop the thread dimension of per-thread register arrays shared by sibling thread loops (GPU)",
         F(compact_thread_private)},
        {"compact_shared_buffers",
         "shrink shared buffers to the tile one thread block stages at a time (GPU)",
         F(compact_shared_buffers)},
        {"insert_shared_syncs",
         "insert barriers between shared-memory writes and later reads in each kernel (GPU)",
         F(insert_shared_syncs)},
    };
    return passes;
}

const PassInfo& find_tir_pass(const std::string& name) {
    std::string known;
    for (const PassInfo& p : tir_pass_registry()) {
        if (p.name == name) return p;
        known += (known.empty() ? "" : ", ") + p.name;
    }
    TS_USER_FAIL() << "unknown tir pass '" << name << "'; known passes: " << known;
}

std::vector<std::string> default_lowering_pipeline() {
    // simplify before vectorize_loops too: a fused reshape chain's index
    // ((i * 508 + j) // 508 * 508 + (i * 508 + j) % 508 with j < 508) is
    // linear in the vector lane only once simplified in the partitioned loop's
    // range (magika's unpacked conv output ran scalar at 0.5 GB/s).
    return {"lower_blocks",   "compact_local_buffers", "loop_partition", "flatten_buffers",
            "simplify",       "vectorize_loops",       "unroll_loops",   "simplify",
            "inject_prefetch", "storage_rewrite",      "remove_no_op"};
}

std::vector<std::string> cuda_lowering_pipeline() {
    return {"compact_thread_private", "lower_blocks", "compact_shared_buffers", "flatten_buffers",
            "simplify"};
}

PassManager::PassManager(std::vector<std::string> passes) : m_passes(std::move(passes)) {
    for (const std::string& p : m_passes) find_tir_pass(p);  // fail early on a typo
}

PrimFunc PassManager::run(const PrimFunc& f) {
    m_records.clear();
    PrimFunc cur = f;
    for (const std::string& name : m_passes) {
        const PassInfo& pass = find_tir_pass(name);
        auto t0 = std::chrono::steady_clock::now();
        PrimFunc next = pass.run(cur);
        auto t1 = std::chrono::steady_clock::now();
        bool changed = next.get() != cur.get();
        m_records.push_back(
            {name, changed, std::chrono::duration<double, std::milli>(t1 - t0).count()});
        if (m_verify) {
            try {
                verify(next);
            } catch (const InternalError& e) {
                TS_FAIL() << "IR invalid after tir pass '" << name << "': " << e.what();
            }
        }
        if (m_print && changed)
            std::cerr << "// ---- IR after tir pass " << name << " ("
                      << m_records.back().milliseconds << " ms)\n"
                      << print(next) << "\n";
        for (const AfterPass& cb : m_after) cb(name, next, changed);
        cur = next;
    }
    return cur;
}

PrimFunc lower_for_codegen(const PrimFunc& f, const std::vector<std::string>& pipeline) {
    PassManager pm(pipeline);
    const char* dbg = std::getenv("TESSERA_DEBUG");
    pm.set_print_ir(dbg && std::atoi(dbg) >= 2);
    return pm.run(f);
}

}  // namespace tessera::tir
