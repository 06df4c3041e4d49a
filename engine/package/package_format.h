// The package format: member names, format version and the CPU feature check
// shared by the exporter (compile time) and the loader (run time).
//
// A package is a ustar archive with:
//   lib.so      the kernels, LLVM object code linked into a shared library;
//               each kernel is `void name(void** args)`
//   graph.json  values (name, dtype, shape, param offset), inputs, outputs,
//               nodes (name, op) and kernel calls (kernel, args, nodes, flops)
//   params.bin  the constants' bytes, each at its 64-byte aligned param_offset
//   meta.json   format_version, engine_version, target, triple, cpu,
//               cpu_features, opt_level, passes, schedules/records, and
//               "members": {name: sha256} of the three members above
#pragma once

#include <string>
#include <vector>

namespace tessera::package {

/// The newest format this engine writes and reads.
constexpr int kFormatVersion = 1;

constexpr const char* kLibMember = "lib.so";
constexpr const char* kGraphMember = "graph.json";
constexpr const char* kParamsMember = "params.bin";
constexpr const char* kMetaMember = "meta.json";
/// A package of several input shapes (specialisations) holds this index and
/// one whole package member per specialisation instead of the four above.
constexpr const char* kSpecializationsMember = "specializations.json";

/// The x86 ISA features whose absence makes compiled code fault (LLVM
/// names, e.g. "avx2", "fma", "sse4.2"). Packages record the subset their
/// code was compiled for; the loader checks each against the host.
const std::vector<std::string>& checked_cpu_features();

/// The checked features among LLVM's "+avx2,+fma,-avx512f,..." list.
std::vector<std::string> checked_subset(const std::string& llvm_feature_list);

/// Whether the host CPU has a checked feature; false for names not in
/// checked_cpu_features() (a newer engine's feature cannot be verified).
bool host_has_cpu_feature(const std::string& llvm_name);

/// The engine version ("0.1.0"), written into meta.json.
const char* engine_version();

}  // namespace tessera::package
