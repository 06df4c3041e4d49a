// Device execution for the GPU tests (CTest label `gpu`): skip without a
// CUDA device, and run a compiled function's kernels with results copied back.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/runtime/cuda_driver.h"
#include "engine/runtime/ndarray.h"

/// Skips the current test, with the reason, where no CUDA driver or device is present.
#define TS_REQUIRE_GPU()                        \
    if (!::tessera::runtime::cuda::available()) \
    GTEST_SKIP() << ::tessera::runtime::cuda::unavailable_reason()

namespace tessera::test {

/// Runs one compiled function on the device: params uploaded, workspaces
/// allocated, every kernel launched in order; returns every param after.
inline std::vector<runtime::NDArray> run_on_device(const tir::PrimFunc& f,
                                                   const std::vector<runtime::NDArray>& args) {
    codegen::CompiledCuda c = codegen::compile_cuda({f});
    runtime::cuda::Module m(c.ptx);
    std::vector<runtime::cuda::DeviceBuffer> bufs;
    for (const auto& a : args) {
        bufs.emplace_back(a.num_bytes());
        bufs.back().copy_from_host(a.raw(), a.num_bytes());
    }
    for (const tir::Buffer& w : c.funcs[0].workspaces)
        bufs.emplace_back(size_t(w.num_elements() * w->dtype.bytes()));
    for (const codegen::CudaKernel& k : c.funcs[0].kernels) {
        std::vector<uint64_t> ptrs;
        for (int a : k.args) ptrs.push_back(bufs[size_t(a)].ptr());
        m.launch(k.name, k.grid, k.block, 0, ptrs);
    }
    runtime::cuda::synchronize();
    std::vector<runtime::NDArray> out;
    for (size_t i = 0; i < args.size(); ++i) {
        out.push_back(args[i].copy());
        bufs[i].copy_to_host(out.back().raw(), out.back().num_bytes());
    }
    return out;
}

}  // namespace tessera::test
