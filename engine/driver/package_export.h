// Writing a compiled model as a package (package_format.h): kernels as LLVM
// object code linked into lib.so with the system C compiler, the kernel-call
// graph, the parameters and the metadata. Compile-time only (needs LLVM).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/driver/driver.h"
#include "engine/package/package_format.h"

namespace tessera::package {

struct ExportOptions {
    std::string target = "llvm";
    int opt_level = 2;
    std::vector<std::string> passes;    // the graph passes that were applied
    std::string records;                // tuning database used ("" = none)
    int threads = 0;                    // thread count the kernels were scheduled for (0 = default)
    std::string linker = "cc";          // C compiler driver that links lib.so
    int format_version = kFormatVersion;  // tests write newer ones to check refusal
};

/// Emits, links and writes `model` to `path` (a .tar). UserError when the
/// linker is missing or fails, or the file cannot be written. Returns the
/// meta.json text. A model built for "cuda" becomes a CUDA package
/// (export_cuda_package); options.target must be the model's.
std::string export_package(const driver::CompiledModel& model, const ExportOptions& options,
                           const std::string& path);

/// The package archive (ustar bytes) of an "llvm" model; `meta_text` gets
/// its meta.json.
std::string package_archive(const driver::CompiledModel& model, const ExportOptions& options,
                            std::string& meta_text);

/// One model compiled for one set of input shapes (a specialisation).
struct Specialization {
    std::map<std::string, std::vector<int64_t>> shapes;  // the runtime inputs' shapes
    const driver::CompiledModel* model = nullptr;
};

/// A package holding several specialisations of one model: `specializations.json`
/// (format version, target, per specialisation its input shapes and member,
/// and each member's sha256) and each specialisation as a whole package member. The loader
/// picks the one whose shapes match the inputs. Returns the index's text.
std::string export_specialized_package(const std::vector<Specialization>& specs,
                                       const ExportOptions& options, const std::string& path);

}  // namespace tessera::package
