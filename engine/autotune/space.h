// The design space: rules applied to each block of a kernel (Ansor sketches
// for CPU) with their random decisions. A Candidate holds the decisions; it
// generates a Schedule whose Trace is what gets stored and replayed.
//   - reduction blocks: multi-level tiling "SSRSRS" (4 spatial, 2 reduction
//     levels; tile sizes by perfect factorization), init decomposed,
//     innermost spatial loop vectorized, inner tiles unrolled, outer tiles
//     fused and parallel (threads != 1); sometimes (more often without an
//     epilogue) cache_write: accumulation in a local tile buffer written
//     back at the S1 tiles;
//   - elementwise producers of a reduction inlined, consumers (epilogues)
//     computed at a tile loop of the reduction;
//   - other elementwise blocks: fused, split for a vector, parallel outer.
// Besides these free-form sketches, the "knobbed default" rule: the kernel's
// default CPU schedule (topi::schedule_cpu_default, with its operand packing
// and layout steps that a Trace does not hold) with sampled values of the
// rule's knobs (topi::cpu_schedule_knobs), MetaSchedule-style.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/autotune/search.h"
#include "engine/graph/graph.h"
#include "engine/schedule/schedule.h"
#include "engine/topi/cpu/schedule_cpu.h"

namespace tessera::autotune {

struct SpaceOptions {
    int threads = 1;       // 1 = no parallel loops
    int vector_lanes = 8;  // fp32 lanes of one native vector
    /// The knobbed-default rule (off when null): the node whose default rule
    /// schedules the kernel, that rule's options (threads, lanes) and knobs.
    const graph::Node* anchor = nullptr;
    topi::CpuScheduleOptions cpu;
    std::vector<topi::CpuKnob> knobs;
    double knob_share = 0.5;  // share of sampled candidates from that rule (when it has knobs)
};

/// The decisions for one block.
struct BlockDecision {
    enum Rule { Keep = 0, Tile = 1, Injective = 2, Inline = 3, ComputeAt = 4 };
    std::string block;
    int rule = Keep;
    /// Tile: factors per loop of the block (get_loops order; 4 for spatial
    /// loops, 2 for reduction ones). Injective: {vector factor}.
    std::vector<std::vector<int64_t>> tiles;
    int par_depth = 0;      // Tile: number of outer S0 loops fused and made parallel
    bool vectorize = true;  // innermost spatial loop vectorized
    bool unroll_s = true;   // Tile: inner spatial tile loops (but the vector one) unrolled
    bool unroll_r = false;  // Tile: inner reduction tile loops unrolled
    int order = 0;          // Tile: bit 0 / bit 1 reverse the spatial loops of level S1 / S2
    /// Tile: Ansor's cache_write rule: the block accumulates into a "local"
    /// buffer (cache_write) whose write-back block is computed at the S1
    /// tiles, so each tile's accumulators live in a tile-sized buffer
    /// (tir::compact_local_buffers) written back to the output once.
    bool cache_write = false;
    int at_level = 1;       // ComputeAt: 0 = under the S0 tiles, 1 = under the S1 tiles
    std::string target;     // ComputeAt: the tiled block

    bool operator==(const BlockDecision& o) const = default;
};

struct Candidate {
    std::vector<BlockDecision> blocks;
    /// The knobbed default rule: the default schedule with these knob values
    /// (all of the rule's knobs, by name) instead of `blocks`.
    bool knobbed = false;
    std::map<std::string, int64_t> knobs;
    std::string to_json() const;
    static Candidate from_json(const std::string& text);
    bool operator==(const Candidate& o) const = default;
};

/// Builds the schedule a candidate describes on `func` (throws ScheduleError
/// when a decision does not apply). For a knobbed candidate: the default
/// rule's schedule with the knob values, operand packing included.
schedule::Schedule generate(const tir::PrimFunc& func, const Candidate& c, const SpaceOptions& o);

/// A candidate's kernel and the trace of its schedule.
struct Realized {
    tir::PrimFunc func;
    schedule::Trace trace;
    /// A knobbed candidate's knob values (what the studio's knob panel
    /// shows for a tuned kernel); empty for a free-form one.
    std::map<std::string, int64_t> knobs;
};
/// The kernel a candidate describes: generate()'s for free-form candidates;
/// for knobbed ones topi::schedule_cpu_default with the knob values (packing
/// included). Throws UserError when a knob or value is not one of o.knobs.
Realized realize(const tir::PrimFunc& func, const Candidate& c, const SpaceOptions& o);

/// The knobbed default with every knob at its first (the rule's own) choice:
/// the default schedule. Requires o.anchor.
Candidate default_candidate(const SpaceOptions& o);

/// A random candidate that generates without errors (falls back to simpler
/// decisions, in the end to the unscheduled loops); with o.anchor and knobs,
/// a share o.knob_share of them are knobbed defaults with random knob values.
Candidate sample(const tir::PrimFunc& func, const SpaceOptions& o, std::mt19937_64& rng);

/// A neighbour of `c`: one tile size factor moved between levels, or an
/// unroll / vectorize / parallel / compute-at / cache-write decision changed; for a
/// knobbed candidate, one knob set to another of its choices. Returns a
/// candidate that generates (or `c` itself when no mutation applied).
Candidate mutate(const tir::PrimFunc& func, const Candidate& c, const SpaceOptions& o,
                 std::mt19937_64& rng);

/// The CPU design space of one kernel as the search driver sees it
/// (search.h): decisions are Candidate JSON; the first point is the default
/// rule's (with an anchor). `func` and `o` must outlive it.
class CpuDesignSpace final : public DesignSpace {
public:
    CpuDesignSpace(const tir::PrimFunc& func, const SpaceOptions& o) : m_func(func), m_o(o) {}
    std::optional<SpacePoint> realize(const std::string& decisions) const override;
    std::optional<std::string> sample(std::mt19937_64& rng) const override;
    std::string mutate(const std::string& decisions, std::mt19937_64& rng) const override;
    std::string first() const override;

private:
    const tir::PrimFunc& m_func;
    const SpaceOptions& m_o;
};

/// The CPU space after a pinned trace prefix: candidates schedule what the
/// prefix's steps leave (free-form sketches; the default rule starts from
/// the unscheduled kernel, so it is not part of it), and each point's trace
/// is the prefix followed by the candidate's steps, which replays on the
/// unscheduled kernel. The first point is the prefix alone. UserError naming
/// the step when the prefix does not replay on `func`.
class PinnedPrefixSpace final : public DesignSpace {
public:
    PinnedPrefixSpace(const tir::PrimFunc& func, const schedule::Trace& prefix,
                      const SpaceOptions& o);
    std::optional<SpacePoint> realize(const std::string& decisions) const override;
    std::optional<std::string> sample(std::mt19937_64& rng) const override;
    std::string mutate(const std::string& decisions, std::mt19937_64& rng) const override;
    std::string first() const override;

private:
    tir::PrimFunc m_prefixed;  // the kernel after the prefix
    schedule::Trace m_prefix;
    SpaceOptions m_options;  // without the default rule
    CpuDesignSpace m_inner;  // over m_prefixed and m_options
};

/// The design space the CPU tuner searches for task `t`: the pinned prefix's
/// space when the task has pinned steps, else the CPU space.
std::unique_ptr<DesignSpace> cpu_design_space(const tir::PrimFunc& func,
                                              const schedule::Trace& pinned, const SpaceOptions& o);

/// Prime factors of n, ascending (for perfect tile factorization).
std::vector<int64_t> prime_factors(int64_t n);

/// `n` split into `parts` factors whose product is n, drawn at random.
std::vector<int64_t> random_factorization(int64_t n, int parts, std::mt19937_64& rng);

}  // namespace tessera::autotune
