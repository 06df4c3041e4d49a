// How build() schedules one fused group for the CPU (hand trace, tuning
// record or default rule, each a trace replayed on the group's loop IR), and
// rebuild_kernel(), which the schedule editor compiles its edits with.
#include "engine/autotune/database.h"
#include "engine/autotune/task.h"
#include "engine/autotune/tuner.h"
#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
#include "engine/driver/build_steps.h"
#include "engine/topi/cpu/schedule_cpu.h"

namespace tessera::driver {

ScheduledGroup schedule_cpu_group(const graph::Graph& g, const std::vector<int>& group,
                                  const topi::LoweredGroup& lowered, const BuildOptions& options,
                                  const autotune::Database* records) {
    ScheduledGroup out;
    KernelSchedule& ks = out.schedule;
    ks.unscheduled = lowered.func;
    ks.args = lowered.args;
    const graph::Node& anchor = g.nodes[size_t(autotune::anchor_node(g, group))];
    ks.anchor = anchor.name;
    if (const std::string node_name = traced_key(g, group, options); !node_name.empty()) {
        const schedule::Trace& hand = options.kernel_traces.at(node_name);
        BuildOptions without = options;  // what the build would choose instead
        without.kernel_traces.clear();
        ScheduledGroup other = schedule_cpu_group(g, group, lowered, without, records);
        try {
            out.func = apply_kernel_trace(hand, lowered.func, node_name, group.size());
        } catch (const UserError& e) {
            if (!options.report_failing_traces) throw;
            // The kernel keeps what it would have without the hand trace.
            other.schedule.traced_node = node_name;
            other.schedule.failed_hand = hand;
            other.schedule.hand_error = e.what();
            return other;
        }
        ks.trace = hand;
        ks.source = "hand";
        ks.traced_node = node_name;
        ks.replaced = std::move(other.schedule.trace);
        ks.replaced_source = other.schedule.source;
        return out;
    }
    const topi::CpuScheduleOptions cpu = autotune::default_rule_options(g, anchor, options.threads);
    if (records) {  // measured at the LLVM level we build at
        if (std::optional<autotune::Realized> best =
                autotune::best_schedule(lowered.func, anchor, cpu, *records, options.target,
                                        options.opt_level, &out.skipped)) {
            out.func = best->func;
            ks.trace = best->trace;
            ks.knobs = best->knobs;
            ks.source = "record";
            return out;
        }
    }
    if (!options.default_schedules) {
        out.func = lowered.func;
        ks.source = "none";
        return out;
    }
    schedule::Schedule s = topi::cpu_default_schedule(lowered.func, anchor, cpu);
    out.func = s.func();
    ks.trace = s.trace();
    ks.source = "default";
    return out;
}

topi::PrepackResult fold_constant_packing(const graph::Graph& g, const tir::PrimFunc& f,
                                          const std::vector<int>& args) {
    return topi::prepack_constant_operands(
        f, [&](size_t p) { return p < args.size() && g.values[size_t(args[p])].is_constant(); });
}

tir::PrimFunc rebuild_kernel(const CompiledModel& model, size_t index,
                             const schedule::Trace& trace) {
    assert_engine_work_allowed("driver::rebuild_kernel");
    TS_USER_CHECK(model.target == "llvm" && index < model.schedules.size())
        << "kernel " << index << " is not a CPU kernel of this build";
    const KernelSchedule& ks = model.schedules[index];
    tir::PrimFunc f = trace.apply(ks.unscheduled).func();
    f = fold_constant_packing(model.graph, f, ks.args).func;
    const tir::PrimFunc& built = model.kernels[index];
    return tir::PrimFunc(built->name, f->params, f->body, f->attrs);
}

}  // namespace tessera::driver
