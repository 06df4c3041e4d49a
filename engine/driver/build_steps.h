// Internal steps of driver::build shared by its targets (not for the CLI or
// the studio: they call driver::build).
#pragma once

#include <string>

#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/topi/lower_group.h"
#include "engine/topi/cpu/pack_gemm.h"

namespace tessera::autotune {
class Database;
}

namespace tessera::driver {

/// load_model.cpp: import options with `shapes` and constant folding.
frontend::ImportOptions import_options(const std::map<std::string, std::vector<int64_t>>& shapes);

/// The BuildOptions::kernel_traces key whose hand trace schedules the group,
/// or "": the group's kernel name (as `run --profile` prints it), else the
/// name of one of its nodes (the first such node wins). A node name several
/// nodes share (one ONNX node expanded) is the node Graph::find_node picks,
/// as `inspect --op` and `tune --op` read it; the other kernels of such a
/// node (an int8 conv's im2col) are reached by their kernel names.
std::string traced_key(const graph::Graph& g, const std::vector<int>& group,
                       const BuildOptions& options);

/// A hand trace (BuildOptions::kernel_traces) replayed on a fused group's
/// unscheduled kernel; UserError "the schedule of node 'N' does not apply to
/// its kernel 'K' (n fused nodes): why" when a step fails.
tir::PrimFunc apply_kernel_trace(const schedule::Trace& trace, const tir::PrimFunc& kernel,
                                 const std::string& node, size_t fused_nodes);

/// A fused group scheduled for the CPU: the scheduled function and how.
struct ScheduledGroup {
    tir::PrimFunc func;
    KernelSchedule schedule;
    std::string skipped;  // why a record of this workload was not applied
};

/// Schedules one fused group of `g` for the CPU the way build() does: the
/// first node of the group with a hand trace (options.kernel_traces), else
/// the best record of `records` (may be null), else the default rule of the
/// group's anchor (options.default_schedules), else unscheduled.
ScheduledGroup schedule_cpu_group(const graph::Graph& g, const std::vector<int>& group,
                                  const topi::LoweredGroup& lowered, const BuildOptions& options,
                                  const autotune::Database* records);

/// The packing nests of `f` whose operand is a constant of `g` (`args` binds
/// f's params to g's values) removed: those params become the panels.
topi::PrepackResult fold_constant_packing(const graph::Graph& g, const tir::PrimFunc& f,
                                          const std::vector<int>& args);

/// The GPU half of build(): schedules model.graph's fused groups (hand
/// trace, else the best "cuda" record of options.records for this GPU, else
/// the default GPU schedule) and, when options.jit, compiles them with NVRTC
/// into model.cuda; fills kernels, kernel_nodes, total_flops, record_uses
/// and records_note.
void build_cuda_kernels(CompiledModel& model, const BuildOptions& options);

}  // namespace tessera::driver
