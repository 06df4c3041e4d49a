// Models of opsets newer than 17 read as opset 17 (issue #15).
//
// Debian's ONNX 1.12 (checker, shape inference, version converter) knows
// default-domain opsets up to 17. Most operator versions since then only add
// dtypes (bfloat16, float8, int4...): scripts/gen-opset-history.py lists, from
// the newest `onnx` release's schemas, which versions keep their signature
// (opset_history.inc). A model of a newer opset is rewritten to its opset-17
// form before ONNX 1.12 checks it: nodes whose versions since 17 all keep the
// signature stay as they are; the others are adapted here (axes as an input of
// Reduce*, Split's num_outputs, new attributes left at their defaults, Gelu,
// Mish and Swish written as the opset-17 ops they are defined by), and an op
// that cannot be adapted is refused naming it and the opset that changed it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tessera::frontend::onnx_import {

/// The opset whose operator forms ONNX 1.12 and the converters know.
inline constexpr int64_t kOnnx112Opset = 17;
/// The newest default-domain opset of the schema table (opset_history.inc).
int64_t newest_adaptable_opset();

/// The domain of nodes the adapter leaves in their newer form for the
/// importer, which knows values ONNX 1.12 cannot (a Reduce*-18 whose axes the
/// graph computes from shapes; Pad-18 with axes): the importer converts them
/// with the standard converters, which read the newer inputs.
inline constexpr const char* kImportTimeDomain = "ai.tessera.at_import";
/// The ops the adapter may leave in kImportTimeDomain.
const std::vector<std::string>& ops_adapted_at_import();

/// Rewrites `model` (default-domain opset in (17, newest]) into opset 17 forms
/// and sets its default-domain opset import to 17. UserError naming `origin`,
/// the node and its op when a node cannot be expressed at opset 17.
void adapt_to_opset17(onnx::ModelProto& model, const std::string& origin);

}  // namespace tessera::frontend::onnx_import
