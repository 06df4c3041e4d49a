// Writing a model compiled for the GPU (driver::CudaModel) as a CUDA package
// (package_cuda.h): its PTX and CUDA C, the launch graph, the parameters and
// the metadata. Compile-time only.
#pragma once

#include <string>

#include "engine/driver/cuda_model.h"
#include "engine/driver/package_export.h"

namespace tessera::package {

/// Writes `model` to `path` (a .tar) with options.target "cuda". UserError
/// when the file cannot be written or a constant's bytes do not fit its type.
/// Returns the meta.json text.
std::string export_cuda_package(const driver::CudaModel& model, const ExportOptions& options,
                                const std::string& path);

/// The archive bytes without writing them (what export_cuda_package writes).
std::string cuda_package_bytes(const driver::CudaModel& model, const ExportOptions& options,
                               std::string* meta_text = nullptr);

}  // namespace tessera::package
