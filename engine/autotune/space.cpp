// Design-space rules, sampling and mutation of candidates (see space.h).
#include "engine/autotune/space.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/autotune/features.h"
#include "engine/core/error.h"
#include "engine/schedule/query.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/topi/cpu/schedule_cpu_util.h"

namespace tessera::autotune {

using schedule::Schedule;
using Names = std::vector<std::string>;

namespace {

constexpr int64_t kMaxVector = 64;         // lanes of a vectorized loop
constexpr int64_t kMaxRegisterTile = 512;  // product of the innermost spatial tiles
constexpr int64_t kMaxInnerReduce = 64;
constexpr int64_t kMaxUnrolledCopies = 64;  // product of the unrolled loop extents

const tir::BlockRealize* find_realize(const tir::PrimFunc& f, const std::string& name) {
    const tir::BlockRealize* found = nullptr;
    tir::post_order_visit(f->body, [&](const tir::Object* o) {
        if (o->node_type == tir::NodeType::BlockRealize) {
            auto* r = static_cast<const tir::BlockRealize*>(o);
            if (r->block_node()->name == name) found = r;
        }
    });
    return found;
}

using schedule::loop_extent;

struct VarNames : tir::IRVisitor {
    std::set<std::string> names;
    using tir::IRVisitor::visit;
    void visit(const tir::Variable* v) override { names.insert(v->name); }
};

bool is_reduction_block(const tir::PrimFunc& f, const std::string& block) {
    const tir::Block* b = schedule::find_block(f, block);
    return b && schedule::is_reduction(b);
}

/// For each loop around `block`: whether it drives a reduction iter var.
std::vector<bool> reduction_loops(const Schedule& s, const std::string& block) {
    Names loops = s.get_loops(block);
    const tir::BlockRealize* r = find_realize(s.func(), block);
    VarNames red;
    if (r) {
        const auto& ivs = r->block_node()->iter_vars;
        for (size_t i = 0; i < ivs.size() && i < r->iter_values.size(); ++i)
            if (ivs[i].kind == tir::IterKind::Reduce) red.visit_expr(r->iter_values[i]);
    }
    std::vector<bool> out;
    for (const std::string& l : loops) out.push_back(red.names.count(l) > 0);
    return out;
}

int64_t product(const std::vector<int64_t>& v) {
    int64_t p = 1;
    for (int64_t x : v) p *= x;
    return p;
}

std::vector<int64_t> divisors(int64_t n) {
    std::vector<int64_t> d;
    for (int64_t i = 1; i <= n; ++i)
        if (n % i == 0) d.push_back(i);
    return d;
}

// ---------------------------------------------------------------- generation

struct TileLoops {
    std::string s0_last, s1_last;
};

void apply_tile(Schedule& s, const BlockDecision& d, const SpaceOptions& o,
                std::map<std::string, TileLoops>& tiled) {
    // The write-back block of a local accumulator buffer (the cache_write rule).
    const std::string write_back = d.cache_write ? s.cache_write(d.block, 0, "local") : "";
    Names loops = s.get_loops(d.block);
    if (loops.size() != d.tiles.size())
        throw schedule::ScheduleError(-1, "tile", "block '" + d.block + "' has another loop count");
    Names lv[6];  // S0 S1 R0 S2 R1 S3 in output order: 0=S0 1=S1 2=R0 3=S2 4=R1 5=S3
    int64_t work = 1;
    for (size_t i = 0; i < loops.size(); ++i) {
        const auto& f = d.tiles[i];
        work *= product(f);
        Names parts = s.split(loops[i], f);
        if (f.size() == 4) {
            lv[0].push_back(parts[0]);
            lv[1].push_back(parts[1]);
            lv[3].push_back(parts[2]);
            lv[5].push_back(parts[3]);
        } else {
            lv[2].push_back(parts[0]);
            lv[4].push_back(parts[1]);
        }
    }
    if (d.order & 1) std::reverse(lv[1].begin(), lv[1].end());
    if (d.order & 2) std::reverse(lv[3].begin(), lv[3].end());
    Names order;
    for (auto& l : lv) order.insert(order.end(), l.begin(), l.end());
    s.reorder(order);
    TileLoops t;
    if (o.threads != 1 && d.par_depth > 0 && work >= topi::kMinParallelWork && !lv[0].empty()) {
        int depth = std::min<int>(d.par_depth, int(lv[0].size()));
        Names outer(lv[0].begin(), lv[0].begin() + depth);
        std::string fused = outer.size() > 1 ? s.fuse(outer) : outer[0];
        s.parallel(fused);
        lv[0].erase(lv[0].begin(), lv[0].begin() + depth);
        lv[0].insert(lv[0].begin(), fused);
    }
    t.s0_last = lv[0].empty() ? "" : lv[0].back();
    t.s1_last = lv[1].empty() ? t.s0_last : lv[1].back();
    tiled[d.block] = t;
    if (!lv[2].empty()) {
        std::string init = s.decompose_reduction(d.block, lv[2][0]);
        Names il = s.get_loops(init);
        if (d.vectorize && !il.empty()) {
            int64_t e = loop_extent(s.func(), il.back());
            if (e >= 2 && e <= kMaxVector && !lv[5].empty()) s.vectorize(il.back());
        }
    }
    // Unrolled copies of the body are bounded (code size and LLVM compile time).
    int64_t copies = 1;
    auto unroll = [&](const std::string& l) {
        const int64_t e = loop_extent(s.func(), l);
        if (e <= 1 || e > 16 || copies * e > kMaxUnrolledCopies) return;
        s.unroll(l);
        copies *= e;
    };
    if (!lv[5].empty()) {
        const std::string& vec = lv[5].back();
        int64_t e = loop_extent(s.func(), vec);
        if (d.vectorize && e >= 2 && e <= kMaxVector) s.vectorize(vec);
        if (d.unroll_s)
            for (size_t i = lv[5].size() - 1; i-- > 0;) unroll(lv[5][i]);
    }
    if (d.unroll_r)
        for (size_t i = lv[4].size(); i-- > 0;) unroll(lv[4][i]);
    if (!write_back.empty()) {
        if (lv[1].empty() && lv[0].empty())
            throw schedule::ScheduleError(-1, "cache_write",
                                          "block '" + d.block + "' has no spatial tile loop");
        s.reverse_compute_at(write_back, t.s1_last);
        Names wl = s.get_loops(write_back);
        if (d.vectorize && !wl.empty() && wl.back() != t.s1_last) {  // its own innermost loop
            const int64_t e = loop_extent(s.func(), wl.back());
            if (e >= 2 && e <= kMaxVector) s.vectorize(wl.back());
        }
    }
}

void apply_injective(Schedule& s, const BlockDecision& d, const SpaceOptions& o) {
    Names loops = s.get_loops(d.block);
    if (loops.empty()) return;
    int64_t w = 1;
    for (const auto& l : loops) w *= std::max<int64_t>(loop_extent(s.func(), l), 1);
    std::string fused = loops.size() > 1 ? s.fuse(loops) : loops[0];
    int64_t v = d.tiles.empty() || d.tiles[0].empty() ? 1 : d.tiles[0][0];
    if (v > 1 && v < w && w % v == 0) {
        Names parts = s.split(fused, {-1, v});
        if (d.vectorize) s.vectorize(parts[1]);
        if (o.threads != 1 && w >= topi::kMinParallelWork) s.parallel(parts[0]);
    } else if (v >= w && w >= 2 && w <= kMaxVector && d.vectorize) {
        s.vectorize(fused);
    } else if (o.threads != 1 && w >= topi::kMinParallelWork) {
        s.parallel(fused);
    }
}

void apply_compute_at(Schedule& s, const BlockDecision& d,
                      const std::map<std::string, TileLoops>& tiled) {
    auto it = tiled.find(d.target);
    if (it == tiled.end())
        throw schedule::ScheduleError(-1, "compute_at", "block '" + d.target + "' is not tiled");
    const std::string& loop = d.at_level == 0 ? it->second.s0_last : it->second.s1_last;
    if (loop.empty()) throw schedule::ScheduleError(-1, "compute_at", "no tile loop");
    s.reverse_compute_at(d.block, loop);
    if (d.vectorize) {
        Names l = s.get_loops(d.block);
        if (!l.empty()) {
            int64_t e = loop_extent(s.func(), l.back());
            if (e >= 2 && e <= kMaxVector) s.vectorize(l.back());
        }
    }
}

// ---------------------------------------------------------------- sampling

std::vector<int64_t> sample_tile(int64_t n, int parts, bool innermost_vector,
                                 std::mt19937_64& rng) {
    for (int attempt = 0; attempt < 32; ++attempt) {
        std::vector<int64_t> f = random_factorization(n, parts, rng);
        if (innermost_vector && f.back() > kMaxVector) continue;
        if (parts == 2 && f.back() > kMaxInnerReduce) continue;
        return f;
    }
    std::vector<int64_t> f(size_t(parts), 1);
    f[0] = n;
    return f;
}

BlockDecision sample_tile_decision(const Schedule& s, const std::string& block,
                                   const SpaceOptions& o, std::mt19937_64& rng) {
    BlockDecision d;
    d.block = block;
    d.rule = BlockDecision::Tile;
    Names loops = s.get_loops(block);
    std::vector<bool> red = reduction_loops(s, block);
    int last_spatial = -1;
    for (size_t i = 0; i < loops.size(); ++i)
        if (!red[i]) last_spatial = int(i);
    for (int attempt = 0; attempt < 16; ++attempt) {
        d.tiles.clear();
        int64_t reg = 1;
        for (size_t i = 0; i < loops.size(); ++i) {
            int64_t e = std::max<int64_t>(loop_extent(s.func(), loops[i]), 1);
            d.tiles.push_back(sample_tile(e, red[i] ? 2 : 4, int(i) == last_spatial, rng));
            if (!red[i]) reg *= d.tiles.back().back();
        }
        if (reg <= kMaxRegisterTile) break;
    }
    int nspatial = int(std::count(red.begin(), red.end(), false));
    d.par_depth = o.threads == 1 || nspatial == 0
                      ? 0
                      : int(std::uniform_int_distribution<int>(1, nspatial)(rng));
    d.vectorize = std::bernoulli_distribution(0.9)(rng);
    d.unroll_s = std::bernoulli_distribution(0.7)(rng);
    d.unroll_r = std::bernoulli_distribution(0.3)(rng);
    d.order = std::uniform_int_distribution<int>(0, 3)(rng);
    return d;
}

BlockDecision sample_injective(const Schedule& s, const std::string& block, const SpaceOptions& o,
                               std::mt19937_64& rng) {
    BlockDecision d;
    d.block = block;
    d.rule = BlockDecision::Injective;
    int64_t w = 1;
    for (const auto& l : s.get_loops(block)) w *= std::max<int64_t>(loop_extent(s.func(), l), 1);
    std::vector<int64_t> choices;
    for (int64_t v : divisors(std::min<int64_t>(w, kMaxVector)))
        if (w % v == 0 && v >= std::min<int64_t>(w, 4)) choices.push_back(v);
    if (choices.empty()) choices.push_back(1);
    d.tiles = {{choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng)]}};
    d.vectorize = std::bernoulli_distribution(0.9)(rng);
    (void)o;
    return d;
}

Candidate sample_once(const tir::PrimFunc& func, const SpaceOptions& o, std::mt19937_64& rng,
                      bool simple) {
    Schedule s(func);
    Candidate c;
    std::set<std::string> tiled;
    Names blocks = s.blocks();
    std::set<std::string> reductions;
    for (const auto& b : blocks)
        if (is_reduction_block(func, b) && !s.get_loops(b).empty()) reductions.insert(b);
    for (const std::string& b : blocks) {
        if (s.get_loops(b).empty()) continue;
        if (reductions.count(b)) {
            c.blocks.push_back(sample_tile_decision(s, b, o, rng));
            // Ansor adds a write cache when no epilogue can be fused at the tiles.
            const std::vector<bool> red = reduction_loops(s, b);
            const bool spatial = std::count(red.begin(), red.end(), false) > 0;
            const bool epilogue = !s.get_consumers(b).empty();
            c.blocks.back().cache_write =
                !simple && spatial && std::bernoulli_distribution(epilogue ? 0.25 : 0.5)(rng);
            tiled.insert(b);
            continue;
        }
        bool feeds_reduction = false;
        for (const auto& cons : s.get_consumers(b))
            if (reductions.count(cons)) feeds_reduction = true;
        std::string after;
        for (const auto& p : s.get_producers(b))
            if (tiled.count(p)) after = p;
        if (!simple && feeds_reduction && std::bernoulli_distribution(0.5)(rng)) {
            BlockDecision d;
            d.block = b;
            d.rule = BlockDecision::Inline;
            c.blocks.push_back(d);
        } else if (!simple && !after.empty() && std::bernoulli_distribution(0.8)(rng)) {
            BlockDecision d;
            d.block = b;
            d.rule = BlockDecision::ComputeAt;
            d.target = after;
            d.at_level = std::uniform_int_distribution<int>(0, 1)(rng);
            d.vectorize = std::bernoulli_distribution(0.8)(rng);
            c.blocks.push_back(d);
        } else {
            c.blocks.push_back(sample_injective(s, b, o, rng));
        }
    }
    return c;
}

bool generates(const tir::PrimFunc& func, const Candidate& c, const SpaceOptions& o) {
    try {
        generate(func, c, o);
        return true;
    } catch (const UserError&) {
        return false;
    }
}

bool has_knobs(const SpaceOptions& o) { return o.anchor != nullptr && !o.knobs.empty(); }

Candidate sample_knobbed(const SpaceOptions& o, std::mt19937_64& rng) {
    Candidate c;
    c.knobbed = true;
    for (const topi::CpuKnob& k : o.knobs)
        if (!k.choices.empty())
            c.knobs[k.name] =
                k.choices[std::uniform_int_distribution<size_t>(0, k.choices.size() - 1)(rng)];
    return c;
}

// The rule options with the candidate's knob values, each checked against the
// kernel's legal choices (a record from another version of the rules may hold others).
topi::CpuScheduleOptions knob_options(const Candidate& c, const SpaceOptions& o) {
    TS_USER_CHECK(o.anchor != nullptr) << "knobbed default candidate without its anchor node";
    for (const auto& knob : c.knobs) {
        const std::string& name = knob.first;  // not a structured binding: the lambda captures it
        const int64_t value = knob.second;
        auto k = std::find_if(o.knobs.begin(), o.knobs.end(),
                              [&](const topi::CpuKnob& x) { return x.name == name; });
        TS_USER_CHECK(k != o.knobs.end())
            << "schedule knob '" << name << "' is not a knob of this kernel's default rule";
        TS_USER_CHECK(std::find(k->choices.begin(), k->choices.end(), value) != k->choices.end())
            << "schedule knob '" << name << "' = " << value << " is not a legal choice";
    }
    topi::CpuScheduleOptions cpu = o.cpu;
    cpu.knobs = c.knobs;
    return cpu;
}

}  // namespace

std::vector<int64_t> prime_factors(int64_t n) {
    std::vector<int64_t> f;
    for (int64_t p = 2; p * p <= n; ++p)
        while (n % p == 0) f.push_back(p), n /= p;
    if (n > 1) f.push_back(n);
    return f;
}

std::vector<int64_t> random_factorization(int64_t n, int parts, std::mt19937_64& rng) {
    std::vector<int64_t> f(size_t(parts), 1);
    std::uniform_int_distribution<int> pick(0, parts - 1);
    for (int64_t p : prime_factors(n)) f[size_t(pick(rng))] *= p;
    return f;
}

Candidate default_candidate(const SpaceOptions& o) {
    TS_USER_CHECK(o.anchor != nullptr) << "the default candidate needs the kernel's anchor node";
    Candidate c;
    c.knobbed = true;
    for (const topi::CpuKnob& k : o.knobs)
        if (!k.choices.empty()) c.knobs[k.name] = k.choices.front();
    return c;
}

Realized realize(const tir::PrimFunc& func, const Candidate& c, const SpaceOptions& o) {
    if (!c.knobbed) {
        Schedule s = generate(func, c, o);
        return {s.func(), s.trace()};
    }
    Schedule s = topi::cpu_default_schedule(func, *o.anchor, knob_options(c, o));
    return {s.func(), s.trace(), c.knobs};
}

Schedule generate(const tir::PrimFunc& func, const Candidate& c, const SpaceOptions& o) {
    if (c.knobbed) {
        return topi::cpu_default_schedule(func, *o.anchor, knob_options(c, o));
    }
    Schedule s(func);
    std::map<std::string, TileLoops> tiled;
    for (const BlockDecision& d : c.blocks) {
        switch (d.rule) {
            case BlockDecision::Tile:
                apply_tile(s, d, o, tiled);
                break;
            case BlockDecision::Injective:
                apply_injective(s, d, o);
                break;
            case BlockDecision::Inline:
                s.compute_inline(d.block);
                break;
            case BlockDecision::ComputeAt:
                apply_compute_at(s, d, tiled);
                break;
            default:
                break;
        }
    }
    return s;
}

Candidate sample(const tir::PrimFunc& func, const SpaceOptions& o, std::mt19937_64& rng) {
    if (has_knobs(o) && std::bernoulli_distribution(o.knob_share)(rng))
        return sample_knobbed(o, rng);
    for (int attempt = 0; attempt < 8; ++attempt) {
        Candidate c = sample_once(func, o, rng, attempt >= 4);
        if (generates(func, c, o)) return c;
    }
    return Candidate{};
}

Candidate mutate(const tir::PrimFunc& func, const Candidate& c, const SpaceOptions& o,
                 std::mt19937_64& rng) {
    if (c.knobbed) {  // one knob to another of its choices
        std::vector<const topi::CpuKnob*> movable;
        for (const topi::CpuKnob& k : o.knobs)
            if (k.choices.size() > 1) movable.push_back(&k);
        if (movable.empty()) return c;
        const topi::CpuKnob& k =
            *movable[std::uniform_int_distribution<size_t>(0, movable.size() - 1)(rng)];
        Candidate m = c;
        auto cur = c.knobs.find(k.name);
        std::vector<int64_t> others;
        for (int64_t v : k.choices)
            if (cur == c.knobs.end() || v != cur->second) others.push_back(v);
        m.knobs[k.name] = others[std::uniform_int_distribution<size_t>(0, others.size() - 1)(rng)];
        return m;
    }
    if (c.blocks.empty()) return c;
    for (int attempt = 0; attempt < 16; ++attempt) {
        Candidate m = c;
        BlockDecision& d =
            m.blocks[std::uniform_int_distribution<size_t>(0, m.blocks.size() - 1)(rng)];
        const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
        if (d.rule == BlockDecision::Tile && kind < 7 && !d.tiles.empty()) {
            auto& f = d.tiles[std::uniform_int_distribution<size_t>(0, d.tiles.size() - 1)(rng)];
            std::uniform_int_distribution<size_t> part(0, f.size() - 1);
            size_t a = part(rng), b = part(rng);
            std::vector<int64_t> primes = prime_factors(f[a]);
            if (a == b || primes.empty()) continue;
            int64_t p = primes[std::uniform_int_distribution<size_t>(0, primes.size() - 1)(rng)];
            f[a] /= p;
            f[b] *= p;
            if (f.size() == 4 && f.back() > kMaxVector) continue;
        } else if (d.rule == BlockDecision::Tile) {
            const int which = std::uniform_int_distribution<int>(0, 5)(rng);
            switch (which) {
                case 5:
                    d.cache_write = !d.cache_write;
                    break;
                case 4:
                    d.order ^= 1 << (kind % 2);
                    break;
                case 0:
                    d.unroll_s = !d.unroll_s;
                    break;
                case 1:
                    d.unroll_r = !d.unroll_r;
                    break;
                case 2:
                    d.vectorize = !d.vectorize;
                    break;
                default:
                    if (o.threads == 1) continue;
                    d.par_depth = std::max(1, d.par_depth + (kind % 2 ? 1 : -1));
            }
        } else if (d.rule == BlockDecision::ComputeAt) {
            if (kind % 2)
                d.at_level = 1 - d.at_level;
            else
                d.vectorize = !d.vectorize;
        } else if (d.rule == BlockDecision::Injective && !d.tiles.empty() && kind < 8) {
            int64_t v = d.tiles[0][0];
            d.tiles[0][0] = kind % 2 ? v * 2 : std::max<int64_t>(1, v / 2);
        } else if (d.rule == BlockDecision::Injective) {
            d.rule = BlockDecision::Inline;  // a producer inlined into its consumer instead
        } else if (d.rule == BlockDecision::Inline) {
            d.rule = BlockDecision::Injective;  // computed in its own loops instead
            d.tiles = {{std::int64_t(std::min(16, 2 * o.vector_lanes))}};
        } else {
            continue;
        }
        if (m == c) continue;
        if (generates(func, m, o)) return m;
    }
    return c;
}

// ---------------------------------------------------------------- JSON

std::string Candidate::to_json() const {
    if (knobbed) {
        nlohmann::json k = nlohmann::json::object();
        for (const auto& [name, value] : knobs) k[name] = value;
        return nlohmann::json{{"rule", "default"}, {"knobs", k}}.dump(
            -1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    nlohmann::json j = nlohmann::json::array();
    for (const BlockDecision& d : blocks) {
        nlohmann::json b = {{"block", d.block}, {"rule", d.rule}};
        if (!d.tiles.empty()) b["tiles"] = d.tiles;
        if (d.rule == BlockDecision::Tile) {
            b["par"] = d.par_depth;
            b["unroll_s"] = d.unroll_s;
            b["unroll_r"] = d.unroll_r;
            b["order"] = d.order;
            if (d.cache_write) b["cache_write"] = true;
        }
        if (d.rule == BlockDecision::ComputeAt) {
            b["target"] = d.target;
            b["level"] = d.at_level;
        }
        b["vec"] = d.vectorize;
        j.push_back(b);
    }
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Candidate Candidate::from_json(const std::string& text) {
    Candidate c;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_object() && j.value("rule", "") == "default") {
        c.knobbed = true;
        const nlohmann::json k = j.value("knobs", nlohmann::json::object());
        TS_USER_CHECK(k.is_object()) << "candidate decisions: 'knobs' must be an object";
        for (const auto& [name, value] : k.items()) {
            TS_USER_CHECK(value.is_number_integer())
                << "candidate decisions: knob '" << name << "' must be an integer";
            c.knobs[name] = value.get<int64_t>();
        }
        return c;
    }
    TS_USER_CHECK(j.is_array()) << "candidate decisions: expected a JSON array";
    for (const auto& b : j) {
        BlockDecision d;
        d.block = b.value("block", "");
        d.rule = b.value("rule", 0);
        if (b.contains("tiles")) d.tiles = b["tiles"].get<std::vector<std::vector<int64_t>>>();
        d.par_depth = b.value("par", 0);
        d.unroll_s = b.value("unroll_s", true);
        d.unroll_r = b.value("unroll_r", false);
        d.order = b.value("order", 0);
        d.cache_write = b.value("cache_write", false);  // absent in older records
        d.target = b.value("target", "");
        d.at_level = b.value("level", 1);
        d.vectorize = b.value("vec", true);
        c.blocks.push_back(d);
    }
    return c;
}

std::optional<SpacePoint> CpuDesignSpace::realize(const std::string& decisions) const {
    try {
        Candidate c = Candidate::from_json(decisions);
        Realized r = autotune::realize(m_func, c, m_o);
        return SpacePoint{c.to_json(), r.func, r.trace, extract_features(r.func), 0};
    } catch (const UserError&) {
        return std::nullopt;
    }
}

std::optional<std::string> CpuDesignSpace::sample(std::mt19937_64& rng) const {
    return autotune::sample(m_func, m_o, rng).to_json();
}

std::string CpuDesignSpace::mutate(const std::string& decisions, std::mt19937_64& rng) const {
    try {
        return autotune::mutate(m_func, Candidate::from_json(decisions), m_o, rng).to_json();
    } catch (const UserError&) {
        return decisions;
    }
}

std::string CpuDesignSpace::first() const {
    return m_o.anchor ? default_candidate(m_o).to_json() : "";
}

namespace {

SpaceOptions without_default_rule(SpaceOptions o) {
    o.anchor = nullptr;
    o.knobs.clear();
    return o;
}

}  // namespace

PinnedPrefixSpace::PinnedPrefixSpace(const tir::PrimFunc& func, const schedule::Trace& prefix,
                                     const SpaceOptions& o)
    : m_prefixed(prefix.apply(func).func()),
      m_prefix(prefix),
      m_options(without_default_rule(o)),
      m_inner(m_prefixed, m_options) {}

std::optional<SpacePoint> PinnedPrefixSpace::realize(const std::string& decisions) const {
    std::optional<SpacePoint> p = m_inner.realize(decisions);
    if (!p) return p;
    schedule::Trace full = m_prefix;
    full.steps.insert(full.steps.end(), p->trace.steps.begin(), p->trace.steps.end());
    p->trace = std::move(full);
    return p;
}

std::optional<std::string> PinnedPrefixSpace::sample(std::mt19937_64& rng) const {
    return m_inner.sample(rng);
}

std::string PinnedPrefixSpace::mutate(const std::string& decisions, std::mt19937_64& rng) const {
    return m_inner.mutate(decisions, rng);
}

std::string PinnedPrefixSpace::first() const { return Candidate{}.to_json(); }

std::unique_ptr<DesignSpace> cpu_design_space(const tir::PrimFunc& func,
                                              const schedule::Trace& pinned,
                                              const SpaceOptions& o) {
    if (pinned.steps.empty()) return std::make_unique<CpuDesignSpace>(func, o);
    return std::make_unique<PinnedPrefixSpace>(func, pinned, o);
}

}  // namespace tessera::autotune
