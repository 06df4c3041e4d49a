// Loading a compiled package (package_format.h) into a GraphExecutor, with
// every check a user needs: members present, checksums, format version,
// target and CPU features. Runtime only: no LLVM, no protobuf, no Qt.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/runtime/cuda_executor.h"
#include "engine/runtime/graph_executor.h"

namespace tessera::package {

struct LoadedPackage;

/// One specialisation of a package of several input shapes.
struct PackageSpecialization {
    std::map<std::string, std::vector<int64_t>> shapes;  // input name -> dims
    std::shared_ptr<LoadedPackage> package;
};

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
    /// A package of several input shapes: its specialisations (each a whole
    /// package); then `executor` is null and select_specialization picks one.
    std::vector<PackageSpecialization> specializations;
};

/// The package that runs inputs of these shapes (input name -> dims): `pkg`
/// itself unless it holds specialisations, else the one compiled for them;
/// a UserError naming the shapes it holds when none is.
const LoadedPackage& select_specialization(
    const LoadedPackage& pkg, const std::map<std::string, std::vector<int64_t>>& input_shapes);

/// "x: 1x8, y: scalar": input shapes as the CLI and the errors print them.
std::string shapes_text(const std::map<std::string, std::vector<int64_t>>& shapes);

/// "x: 1x8; x: 3x8": the shapes of a package's specialisations.
std::string specialization_list(const LoadedPackage& pkg);

/// Reads, verifies and loads a package file. UserError (naming the file and
/// what to do) for: not a tar, a missing member, a checksum mismatch, a newer
/// format version, another target, a CPU feature the host lacks, a kernel
/// missing from lib.so; for a CUDA package (kernels.ptx) also when no CUDA
/// driver or device is available.
std::shared_ptr<LoadedPackage> load_package(const std::string& path);

/// Same, from the archive's bytes (`what` names it in errors). With
/// `load_code` false, everything is read and verified but no native code is
/// loaded (lib.so is not opened, no CUDA module is loaded) and the package
/// has no executor: a self-consistent package's code is trusted, and dlopen
/// of crafted bytes can crash the process (the fuzz target checks the
/// loader this way).
std::shared_ptr<LoadedPackage> load_package_bytes(const std::string& bytes,
                                                  const std::string& what, bool load_code = true);

/// True when the file starts like a ustar archive (what `tessera run` uses to
/// tell a package from an ONNX model).
bool looks_like_package(const std::string& path);

}  // namespace tessera::package
