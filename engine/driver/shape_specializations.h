// One model, many shapes: a model with symbolic dims built once per set of
// input shapes it runs on. A shape seen before costs no build; a new one
// builds the model for it and compiles only the kernels whose loop IR
// changed (the others come from a kernel cache shared by all the model's
// shapes, kernel_cache.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/driver/driver.h"

namespace tessera::driver {

using InputShapes = std::map<std::string, std::vector<int64_t>>;

/// "x: 5x3, y: 2x4": the shapes of a specialisation, as the CLI prints them.
std::string shapes_text(const InputShapes& shapes);

class ShapeSpecializations {
public:
    /// The model at `path`, built with `options` (their kernel_cache is
    /// replaced by the one this object shares between its shapes).
    ShapeSpecializations(std::string path, BuildOptions options);

    struct Use {
        std::shared_ptr<CompiledModel> model;
        graph::Graph graph;  // the imported graph at these shapes
        InputShapes shapes;  // the runtime inputs' shapes it was specialised for
        bool built = false;  // false: a shape seen before
        int kernels = 0;     // of the model
        int compiled = 0;    // compiled by this build (0 when not built)
        /// Set when the import froze input values into constants (shape
        /// operands): then only input files of the same bytes reuse it.
        std::string frozen_digest;
    };

    /// The model for the shapes of `input_files` (input i <-> file i, ONNX
    /// TensorProto files; `input_shapes` names others, as --input-shape).
    Use for_input_files(const std::vector<std::string>& input_files,
                        const InputShapes& input_shapes = {});
    /// The model for these input shapes (NAME -> dims; inputs not named keep
    /// the model's static dims).
    Use for_shapes(const InputShapes& input_shapes);

    /// Specialisations built so far.
    size_t size() const;
    const std::string& path() const { return m_path; }

private:
    Use get(const InputShapes& shapes, const std::string& digest, size_t given_inputs,
            const std::function<graph::Graph()>& load);

    std::string m_path;
    BuildOptions m_options;
    mutable std::mutex m_mutex;
    std::map<std::string, Use> m_built;  // by shapes_text of the runtime inputs' shapes
};

}  // namespace tessera::driver
