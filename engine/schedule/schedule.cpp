// Schedule: queries, recording of steps, dispatch of replayed steps.
#include "engine/schedule/schedule.h"

#include <algorithm>
#include <functional>

#include "engine/schedule/primitives.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/verify.h"

namespace tessera::schedule {

using namespace tir;

ScheduleError::ScheduleError(int step_index, const std::string& primitive,
                             const std::string& reason)
    // Numbered from 1, as the editor lists a trace and as a user counts the
    // steps of a trace file (disabled steps included).
    : UserError("schedule step " + std::to_string(step_index + 1) + " (" + primitive +
                "): " + reason),
      m_step(step_index),
      m_primitive(primitive),
      m_reason(reason) {}

namespace {
Step make_step(std::string op, std::string block = {}, std::vector<std::string> loops = {},
               std::vector<int64_t> ints = {}, std::string key = {}, std::string value = {}) {
    Step s;
    s.op = std::move(op), s.block = std::move(block), s.loops = std::move(loops);
    s.ints = std::move(ints), s.key = std::move(key), s.value = std::move(value);
    return s;
}
}  // namespace

/// Applies primitives atomically: the function and trace change only on success.
class ScheduleState {
public:
    static void commit(Schedule& s, Step step, const std::function<PrimFunc(Step&)>& fn) {
        int index = int(s.m_trace.steps.size());
        PrimFunc next;
        try {
            next = fn(step);
        } catch (const detail::StepFailure& e) {
            throw ScheduleError(index, step.op, e.reason);
        }
        verify(next);
        s.m_func = next;
        s.m_trace.steps.push_back(std::move(step));
    }
    static void fail(const Schedule& s, const std::string& op, const std::string& why) {
        throw ScheduleError(int(s.m_trace.steps.size()), op, why);
    }
};

Schedule::Schedule(tir::PrimFunc func) : m_func(detail::uniquify_loops(func)) {}

std::vector<std::string> Schedule::blocks() const {
    std::vector<std::string> out;
    for (const BlockRealize* r : detail::blocks_under(m_func->body))
        if (r->block_node()->name != "root") out.push_back(r->block_node()->name);
    return out;
}

std::string Schedule::get_block(const std::string& name) const {
    auto p = detail::find_block(m_func->body, name);
    if (!p || name == "root")
        ScheduleState::fail(*this, "get_block", "no block named '" + name + "'");
    return name;
}

std::vector<std::string> Schedule::get_loops(const std::string& block) const {
    auto p = detail::find_block(m_func->body, block);
    if (!p || block == "root")
        ScheduleState::fail(*this, "get_loops", "no block named '" + block + "'");
    std::vector<std::string> out;
    for (const For* l : detail::loops_on_path(*p)) out.push_back(l->loop_var.name());
    return out;
}

namespace {
std::vector<std::string> related(const PrimFunc& f, const std::string& block, bool consumers) {
    auto p = detail::find_block(f->body, block);
    if (!p) return {};
    const Block* b = p->back().as<BlockRealize>()->block_node();
    std::vector<std::string> out;
    auto bufs = consumers ? detail::stored_buffers(b) : detail::loaded_buffers(b);
    for (const Buffer& x : bufs) {
        auto names = consumers ? detail::readers_of(f, x, block) : detail::writers_of(f, x, block);
        for (const std::string& n : names)
            if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
    return out;
}
}  // namespace

std::vector<std::string> Schedule::get_consumers(const std::string& block) const {
    get_block(block);
    return related(m_func, block, true);
}

std::vector<std::string> Schedule::get_producers(const std::string& block) const {
    get_block(block);
    return related(m_func, block, false);
}

std::vector<std::string> Schedule::split(const std::string& loop,
                                         const std::vector<int64_t>& factors) {
    Step st = make_step("split", {}, {loop}, factors);
    ScheduleState::commit(*this, st,
                          [&](Step& s) { return detail::split(m_func, loop, factors, s.outputs); });
    return m_trace.steps.back().outputs;
}

std::string Schedule::fuse(const std::vector<std::string>& loops) {
    Step st = make_step("fuse", {}, loops);
    ScheduleState::commit(*this, st,
                          [&](Step& s) { return detail::fuse(m_func, loops, s.outputs); });
    return m_trace.steps.back().outputs[0];
}

void Schedule::reorder(const std::vector<std::string>& loops) {
    ScheduleState::commit(*this, make_step("reorder", {}, loops),
                          [&](Step&) { return detail::reorder(m_func, loops); });
}

std::vector<std::string> Schedule::tile(const std::string& x, const std::string& y, int64_t xf,
                                        int64_t yf) {
    Step st = make_step("tile", {}, {x, y}, {xf, yf});
    ScheduleState::commit(*this, st, [&](Step& s) {
        TS_SCHED_CHECK(x != y, "tile needs two different loops");
        detail::Names xo, yo;
        PrimFunc g = detail::split(m_func, x, {-1, xf}, xo);
        g = detail::split(g, y, {-1, yf}, yo);
        s.outputs = {xo[0], yo[0], xo[1], yo[1]};
        return detail::reorder(g, s.outputs);
    });
    return m_trace.steps.back().outputs;
}

void Schedule::parallel(const std::string& loop) {
    ScheduleState::commit(*this, make_step("parallel", {}, {loop}), [&](Step&) {
        return detail::set_loop_kind(m_func, loop, "parallel", "");
    });
}

void Schedule::vectorize(const std::string& loop) {
    ScheduleState::commit(*this, make_step("vectorize", {}, {loop}), [&](Step&) {
        return detail::set_loop_kind(m_func, loop, "vectorize", "");
    });
}

void Schedule::unroll(const std::string& loop) {
    ScheduleState::commit(*this, make_step("unroll", {}, {loop}),
                          [&](Step&) { return detail::set_loop_kind(m_func, loop, "unroll", ""); });
}

void Schedule::bind(const std::string& loop, const std::string& thread_axis) {
    ScheduleState::commit(*this, make_step("bind", {}, {loop}, {}, thread_axis), [&](Step&) {
        return detail::set_loop_kind(m_func, loop, "bind", thread_axis);
    });
}

void Schedule::compute_at(const std::string& block, const std::string& loop) {
    ScheduleState::commit(*this, make_step("compute_at", block, {loop}),
                          [&](Step&) { return detail::compute_at(m_func, block, loop, false); });
}

void Schedule::reverse_compute_at(const std::string& block, const std::string& loop) {
    ScheduleState::commit(*this, make_step("reverse_compute_at", block, {loop}),
                          [&](Step&) { return detail::compute_at(m_func, block, loop, true); });
}

void Schedule::compute_inline(const std::string& block) {
    ScheduleState::commit(*this, make_step("compute_inline", block),
                          [&](Step&) { return detail::compute_inline(m_func, block); });
}

void Schedule::reverse_compute_inline(const std::string& block) {
    ScheduleState::commit(*this, make_step("reverse_compute_inline", block),
                          [&](Step&) { return detail::reverse_compute_inline(m_func, block); });
}

std::string Schedule::cache_read(const std::string& block, int read_index,
                                 const std::string& scope) {
    Step st = make_step("cache_read", block, {}, {read_index}, scope);
    ScheduleState::commit(*this, st, [&](Step& s) {
        return detail::cache_read(m_func, block, read_index, scope, s.outputs);
    });
    return m_trace.steps.back().outputs[0];
}

std::string Schedule::cache_write(const std::string& block, int write_index,
                                  const std::string& scope) {
    Step st = make_step("cache_write", block, {}, {write_index}, scope);
    ScheduleState::commit(*this, st, [&](Step& s) {
        return detail::cache_write(m_func, block, write_index, scope, s.outputs);
    });
    return m_trace.steps.back().outputs[0];
}

std::string Schedule::rfactor(const std::string& loop, int factor_axis) {
    Step st = make_step("rfactor", {}, {loop}, {factor_axis});
    ScheduleState::commit(
        *this, st, [&](Step& s) { return detail::rfactor(m_func, loop, factor_axis, s.outputs); });
    return m_trace.steps.back().outputs[0];
}

std::string Schedule::decompose_reduction(const std::string& block, const std::string& loop) {
    Step st = make_step("decompose_reduction", block, {loop});
    ScheduleState::commit(*this, st, [&](Step& s) {
        return detail::decompose_reduction(m_func, block, loop, s.outputs);
    });
    return m_trace.steps.back().outputs[0];
}

void Schedule::annotate(const std::string& target, const std::string& key,
                        const std::string& value) {
    Step st = make_step("annotate", {}, {}, {}, key, value);
    if (detail::find_loop(m_func->body, target)) {
        st.loops = {target};
    } else {
        st.block = target;
    }
    ScheduleState::commit(*this, st,
                          [&](Step&) { return detail::annotate(m_func, target, key, value); });
}

std::string Schedule::pack_operand(const std::string& block, const std::string& buffer,
                                   int tiled_dim, int64_t factor, bool parallel, int vector_lanes) {
    Step st = make_step("pack_operand", block, {},
                        {tiled_dim, factor, parallel ? 1 : 0, vector_lanes}, buffer);
    ScheduleState::commit(*this, st, [&](Step& s) {
        return detail::pack_operand(m_func, block, buffer, tiled_dim, factor, parallel,
                                    vector_lanes, s.outputs);
    });
    return m_trace.steps.back().outputs[0];
}

void Schedule::transform_layout(const std::string& buffer, const std::vector<int64_t>& perm) {
    Step st = make_step("transform_layout", {}, {}, perm, buffer);
    ScheduleState::commit(*this, st,
                          [&](Step&) { return detail::transform_layout(m_func, buffer, perm); });
}

void Schedule::apply(const Step& step) {
    if (!step.enabled) {
        m_trace.steps.push_back(step);
        return;
    }
    const std::string& op = step.op;
    auto need = [&](bool ok, const char* what) {
        if (!ok)
            ScheduleState::fail(*this, op.empty() ? "?" : op,
                                std::string("missing argument: ") + what);
    };
    auto loop0 = [&] {
        need(!step.loops.empty(), "loop");
        return step.loops[0];
    };
    auto int0 = [&] {
        need(!step.ints.empty(), "integer argument");
        return step.ints[0];
    };
    if (op == "split") {
        split(loop0(), step.ints);
    } else if (op == "fuse") {
        fuse(step.loops);
    } else if (op == "reorder") {
        reorder(step.loops);
    } else if (op == "tile") {
        need(step.loops.size() == 2 && step.ints.size() == 2, "two loops and two factors");
        tile(step.loops[0], step.loops[1], step.ints[0], step.ints[1]);
    } else if (op == "parallel") {
        parallel(loop0());
    } else if (op == "vectorize") {
        vectorize(loop0());
    } else if (op == "unroll") {
        unroll(loop0());
    } else if (op == "bind") {
        bind(loop0(), step.key);
    } else if (op == "compute_at") {
        need(!step.block.empty(), "block");
        compute_at(step.block, loop0());
    } else if (op == "reverse_compute_at") {
        need(!step.block.empty(), "block");
        reverse_compute_at(step.block, loop0());
    } else if (op == "compute_inline") {
        compute_inline(step.block);
    } else if (op == "reverse_compute_inline") {
        reverse_compute_inline(step.block);
    } else if (op == "cache_read") {
        cache_read(step.block, int(int0()), step.key);
    } else if (op == "cache_write") {
        cache_write(step.block, int(int0()), step.key);
    } else if (op == "rfactor") {
        rfactor(loop0(), int(int0()));
    } else if (op == "decompose_reduction") {
        decompose_reduction(step.block, loop0());
    } else if (op == "annotate") {
        annotate(step.loops.empty() ? step.block : step.loops[0], step.key, step.value);
    } else if (op == "pack_operand") {
        need(!step.block.empty() && !step.key.empty() && step.ints.size() == 4,
             "block, buffer and [tiled_dim, factor, parallel, vector_lanes]");
        need(step.ints[0] == 0 || step.ints[0] == 1, "tiled_dim 0 or 1");
        need(step.ints[3] >= 0 && step.ints[3] <= 1024, "vector_lanes in 0..1024");
        pack_operand(step.block, step.key, int(step.ints[0]), step.ints[1], step.ints[2] != 0,
                     int(step.ints[3]));
    } else if (op == "transform_layout") {
        need(!step.key.empty(), "buffer");
        transform_layout(step.key, step.ints);
    } else {
        ScheduleState::fail(*this, op.empty() ? "?" : op, "unknown primitive '" + op + "'");
    }
}

}  // namespace tessera::schedule
