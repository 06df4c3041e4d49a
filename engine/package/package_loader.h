// Loading a compiled package (package_format.h) into a GraphExecutor, with
// every check a user needs: members present, checksums, format version,
// target and CPU features. Runtime only: no LLVM, no protobuf, no Qt.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/runtime/cuda_executor.h"
#include "engine/runtime/graph_executor.h"

namespace tessera::package {

/// A package ready to run.
struct LoadedPackage {
    std::string path;
    std::string name;       // the model's name
    std::string meta_json;  // meta.json as stored
    std::string graph_json;  // graph.json as stored
    std::vector<std::string> node_names;  // graph nodes, for profiles
    std::vector<std::string> node_ops;
    double total_flops = 0;  // per inference
    std::shared_ptr<runtime::GraphExecutor> executor;  // llvm packages
    /// CUDA packages (package_cuda.h): set instead of `executor`.
    std::string target = "llvm";
    std::vector<std::string> input_names, output_names;
    std::shared_ptr<runtime::CudaGraphExecutor> cuda_executor;
};

/// Reads, verifies and loads a package file. UserError (naming the file and
/// what to do) for: not a tar, a missing member, a checksum mismatch, a newer
/// format version, another target, a CPU feature the host lacks, a kernel
/// missing from lib.so; for a CUDA package (kernels.ptx) also when no CUDA
/// driver or device is available.
std::shared_ptr<LoadedPackage> load_package(const std::string& path);

/// Same, from the archive's bytes (`what` names it in errors).
std::shared_ptr<LoadedPackage> load_package_bytes(const std::string& bytes,
                                                  const std::string& what);

/// True when the file starts like a ustar archive (what `tessera run` uses to
/// tell a package from an ONNX model).
bool looks_like_package(const std::string& path);

}  // namespace tessera::package
