// Internal steps of driver::build shared by its targets (not for the CLI or
// the studio: they call driver::build).
#pragma once

#include <string>

#include "engine/driver/driver.h"

namespace tessera::driver {

/// A hand trace (BuildOptions::kernel_traces) replayed on a fused group's
/// unscheduled kernel; UserError "the schedule of node 'N' does not apply to
/// its kernel 'K' (n fused nodes): why" when a step fails.
tir::PrimFunc apply_kernel_trace(const schedule::Trace& trace, const tir::PrimFunc& kernel,
                                 const std::string& node, size_t fused_nodes);

/// The GPU half of build(): schedules model.graph's fused groups (hand
/// trace, else the best "cuda" record of options.records for this GPU, else
/// the default GPU schedule) and, when options.jit, compiles them with NVRTC
/// into model.cuda; fills kernels, kernel_nodes, total_flops, record_uses
/// and records_note.
void build_cuda_kernels(CompiledModel& model, const BuildOptions& options);

}  // namespace tessera::driver
