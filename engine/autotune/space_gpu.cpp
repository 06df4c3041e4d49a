// GPU sketch generation and sampling: inline producers, tile the reduction
// block in five spatial and three reduction levels, bind the outer three
// spatial levels to blockIdx / vthread / threadIdx, compute consumers at the
// thread loop, unroll the inner levels, optionally stage the inputs in shared
// memory (space_gpu_shared.cpp).
#include "engine/autotune/space_gpu.h"

#include <nlohmann/json.hpp>

#include "engine/autotune/space.h"
#include "engine/core/error.h"
#include "engine/schedule/query.h"

namespace tessera::autotune {

using Names = std::vector<std::string>;

namespace {

// Injective blocks that are not function outputs, inlined into their readers.
void inline_producers(schedule::Schedule& s) {
    for (const std::string& b : s.blocks()) {
        const tir::Block* blk = schedule::find_block(s.func(), b);
        if (!blk || schedule::is_reduction(blk) || s.get_consumers(b).empty()) continue;
        try {
            s.compute_inline(b);
        } catch (const schedule::ScheduleError&) {
        }
    }
}

std::vector<bool> reduction_loops(const tir::PrimFunc& f, const std::string& block, size_t n) {
    const tir::Block* b = schedule::find_block(f, block);
    std::vector<bool> red(n, false);
    for (size_t i = 0; b && i < n && i < b->iter_vars.size(); ++i)
        red[i] = b->iter_vars[i].kind != tir::IterKind::Spatial;
    return red;
}

}  // namespace

std::string GpuSketch::to_json() const {
    return nlohmann::json{{"block", block},   {"tiles", tiles},
                          {"unroll", unroll}, {"shared", shared},
                          {"fetch_vector", fetch_vector}}
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

GpuSketch GpuSketch::from_json(const std::string& text) {
    try {
        nlohmann::json j = nlohmann::json::parse(text);
        GpuSketch g;
        g.block = j.at("block").get<std::string>();
        g.tiles = j.at("tiles").get<std::vector<std::vector<int64_t>>>();
        g.unroll = j.value("unroll", false);
        g.shared = j.value("shared", false);
        g.fetch_vector = j.value("fetch_vector", int64_t(1));
        for (size_t i = 0; i < g.tiles.size(); ++i)
            for (int64_t f : g.tiles[i])
                TS_USER_CHECK(f >= 1) << "GPU sketch of block '" << g.block << "': loop " << i
                                      << " has the tile factor " << f << " (factors must be >= 1)";
        TS_USER_CHECK(g.fetch_vector == 1 || g.fetch_vector == 2 || g.fetch_vector == 4)
            << "GPU sketch of block '" << g.block << "': fetch_vector " << g.fetch_vector
            << " is not 1, 2 or 4";
        TS_USER_CHECK(g.shared || g.fetch_vector == 1)
            << "GPU sketch of block '" << g.block << "': fetch_vector " << g.fetch_vector
            << " needs \"shared\": true";
        return g;
    } catch (const nlohmann::json::exception& e) {
        TS_USER_FAIL() << "GPU sketch is not valid JSON: " << e.what();
    }
}

std::string gpu_sketch_block(const tir::PrimFunc& func) {
    schedule::Schedule s(func);
    inline_producers(s);
    std::string found;
    for (const std::string& b : s.blocks()) {
        const tir::Block* blk = schedule::find_block(s.func(), b);
        if (!blk || !schedule::is_reduction(blk) || s.get_loops(b).empty()) continue;
        if (!found.empty()) return "";
        found = b;
    }
    return found;
}

schedule::Schedule generate_gpu(const tir::PrimFunc& func, const GpuSketch& c) {
    schedule::Schedule s(func);
    inline_producers(s);
    Names loops = s.get_loops(c.block);
    if (loops.size() != c.tiles.size())
        throw schedule::ScheduleError(-1, "gpu_tile",
                                      "block '" + c.block + "' has another loop count");
    std::vector<bool> red = reduction_loops(s.func(), c.block, loops.size());
    Names lv[8];  // output order S0 S1 S2 R0 R1 S3 R2 S4
    const int spatial_level[5] = {0, 1, 2, 5, 7}, reduce_level[3] = {3, 4, 6};
    for (size_t i = 0; i < loops.size(); ++i) {
        const std::vector<int64_t>& f = c.tiles[i];
        if (f.size() != (red[i] ? 3u : 5u))
            throw schedule::ScheduleError(
                -1, "gpu_tile",
                "loop '" + loops[i] + "' needs " + (red[i] ? "3" : "5") + " factors");
        Names parts = s.split(loops[i], f);
        for (size_t k = 0; k < parts.size(); ++k)
            lv[red[i] ? reduce_level[k] : spatial_level[k]].push_back(parts[k]);
    }
    Names order;
    for (const Names& l : lv) order.insert(order.end(), l.begin(), l.end());
    s.reorder(order);
    const char* axes[3] = {"blockIdx.x", "vthread.x", "threadIdx.x"};
    std::string thread_loop;
    for (int level = 0; level < 3; ++level) {
        if (lv[level].empty()) continue;
        std::string fused = lv[level].size() > 1 ? s.fuse(lv[level]) : lv[level][0];
        s.bind(fused, axes[level]);
        thread_loop = fused;
    }
    if (c.unroll)
        for (int level : {5, 6, 7})
            for (const std::string& l : lv[level]) s.unroll(l);
    // Elementwise consumers (bias, relu) run per thread after its reduction.
    for (const std::string& consumer : s.get_consumers(c.block))
        s.reverse_compute_at(consumer, thread_loop);
    if (c.shared)
        stage_shared(s, c.block, lv[3].back(), schedule::loop_extent(s.func(), thread_loop),
                     c.fetch_vector);
    else if (c.fetch_vector != 1)
        throw schedule::ScheduleError(-1, "gpu_tile", "fetch_vector needs shared staging");
    return s;
}

GpuSketch sample_gpu(const tir::PrimFunc& func, std::mt19937_64& rng, const GpuSpaceOptions& o) {
    GpuSketch c;
    c.block = gpu_sketch_block(func);
    TS_USER_CHECK(!c.block.empty())
        << "kernel '" << func->name << "' has no single reduction block for the GPU sketch";
    schedule::Schedule base(func);
    inline_producers(base);
    Names loops = base.get_loops(c.block);
    std::vector<bool> red = reduction_loops(base.func(), c.block, loops.size());
    std::vector<int64_t> extents;
    int64_t spatial = 1;
    for (size_t i = 0; i < loops.size(); ++i) {
        extents.push_back(std::max<int64_t>(schedule::loop_extent(base.func(), loops[i]), 1));
        if (!red[i]) spatial *= extents.back();
    }
    const int64_t want_threads = std::min(o.min_threads, spatial);
    std::bernoulli_distribution coin(0.5), stage(o.shared_probability);
    const int64_t vectors[3] = {1, 2, 4};
    for (int attempt = 0; attempt < 200; ++attempt) {
        c.tiles.clear();
        int64_t threads = 1, vthreads = 1, inner = 1;
        for (size_t i = 0; i < loops.size(); ++i) {
            c.tiles.push_back(random_factorization(extents[i], red[i] ? 3 : 5, rng));
            const auto& f = c.tiles.back();
            if (red[i]) {
                inner *= f[2];
            } else {
                vthreads *= f[1];
                threads *= f[2];
                inner *= f[3] * f[4];
            }
        }
        if (threads > o.max_threads || vthreads > o.max_vthreads || inner > o.max_inner) continue;
        if (threads < want_threads && attempt < 150) continue;
        c.unroll = coin(rng);
        c.shared = false;
        c.fetch_vector = 1;
        if (stage(rng)) {
            // Staged where the tiles fit in shared memory; the fetch vector
            // falls back to 1 where it does not divide the tile.
            GpuSketch staged = c;
            staged.shared = true;
            staged.fetch_vector = vectors[std::uniform_int_distribution<int>(0, 2)(rng)];
            for (;;) {
                try {
                    if (gpu_shared_bytes(generate_gpu(func, staged).func()) <= o.max_shared_bytes)
                        return staged;
                    break;
                } catch (const schedule::ScheduleError&) {
                    if (staged.fetch_vector == 1) break;
                    staged.fetch_vector = 1;
                }
            }
            // Always staged (probability 1): other tiles may fit; else unstaged.
            if (o.shared_probability >= 1.0 && attempt < 150) continue;
        }
        try {
            generate_gpu(func, c);
            return c;
        } catch (const schedule::ScheduleError&) {
        }
    }
    TS_USER_FAIL() << "no GPU sketch of kernel '" << func->name
                   << "' fits the thread limits after 200 samples";
}

}  // namespace tessera::autotune
