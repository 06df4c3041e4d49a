// The Python programs `bench model --compare` runs in a child process to time
// a reference runtime on the same inputs as ours. Each takes the arguments
//   model.onnx folder threads repeat device(cpu|cuda)
// reads folder/input_N.pb, writes folder/ref_output_N.pb and prints one JSON
// line: {"median_ms", "min_ms", "repeat", "name"}. Exit 3: the runtime cannot
// use the GPU here (its message on stderr); exit 4: the model holds an op the
// runner does not translate.
#pragma once

namespace tessera::cli {

/// ONNX Runtime: its CPU execution provider, or its CUDA provider (fp32, no
/// TF32; inputs and outputs bound on the device).
extern const char* const kOrtRunner;

/// PyTorch: the ONNX graph translated op by op into torch functions (cuDNN
/// convolutions, cuBLAS products), on the GPU captured once into a CUDA graph
/// and replayed, timed with CUDA events; fp32 with TF32 off, as ours.
extern const char* const kTorchRunner;

}  // namespace tessera::cli
