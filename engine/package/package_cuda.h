// CUDA packages (`tessera compile --target cuda`): the PTX of one module
// instead of lib.so, launched through the driver API loaded with dlopen, so
// the runtime links neither NVRTC nor the driver. Runtime only.
//
// Members: kernels.ptx (the PTX, one module), kernels.cu (its CUDA C, for
// reading), graph.json (values, inputs, outputs, nodes and calls, each call
// with its launches: kernel, grid, block, shared_bytes, args), params.bin
// and meta.json (target "cuda", arch, nvrtc, "members": {name: sha256}).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/package/tar.h"
#include "engine/runtime/cuda_executor.h"

namespace tessera::package {

constexpr const char* kPtxMember = "kernels.ptx";
constexpr const char* kCudaSourceMember = "kernels.cu";

/// Everything a CudaGraphExecutor needs, read and verified from a package.
struct CudaPackageContents {
    std::string name;
    std::string arch;  // "compute_90"
    std::string ptx;
    std::vector<runtime::TensorType> types;
    std::vector<runtime::NDArray> constants;  // undefined for non-constants
    std::vector<int> inputs, outputs;
    std::vector<std::string> input_names, output_names;
    std::vector<std::string> node_names, node_ops;
    std::vector<runtime::CudaCall> calls;
    double total_flops = 0;
};

/// True when the archive holds a CUDA package (a kernels.ptx member).
bool is_cuda_package(const std::vector<TarMember>& members);

/// Reads and verifies a CUDA package's members (present, sha256, format
/// version, target "cuda", graph.json indices and launches); needs no device.
/// UserError naming `what` and the member on any defect.
CudaPackageContents read_cuda_package(const std::vector<TarMember>& members,
                                      const std::string& what);

/// "compute_90" -> 90; -1 for anything else.
int cuda_arch_number(const std::string& arch);

/// read_cuda_package, then the device checks (a driver and device present,
/// compute capability at least the PTX's arch) and a CudaGraphExecutor.
/// Without a driver: UserError "cannot run CUDA package '...': no CUDA
/// device is available (...)".
std::shared_ptr<runtime::CudaGraphExecutor> load_cuda_executor(const CudaPackageContents& c,
                                                               const std::string& what);

}  // namespace tessera::package
