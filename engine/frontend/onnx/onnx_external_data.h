// ONNX external data: tensors whose bytes an exporter wrote to a file beside
// the model (torch.onnx.export and onnx.save with save_as_external_data: a
// `location` relative to the model's folder, an optional `offset` and
// `length`), read into the model before anything else looks at it.
#pragma once

#include <string>

#include "onnx/onnx_pb.h"

namespace tessera::frontend::onnx_import {

/// Reads every external tensor of `model` (initializers, Constant and other
/// tensor attributes, subgraphs) into its raw data. `origin` is the model's
/// file: locations are resolved in its folder and must stay inside it (no
/// absolute path, no "..", no link leading out). Throws UserError naming the
/// model, the tensor and the file for a missing or short file, a bad offset or
/// length, or a model not read from a file (nothing to resolve against).
void inline_external_data(onnx::ModelProto& model, const std::string& origin);

}  // namespace tessera::frontend::onnx_import
