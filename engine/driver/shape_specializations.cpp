// A model built once per set of input shapes (see shape_specializations.h).
#include "engine/driver/shape_specializations.h"

#include <fstream>
#include <sstream>

#include "engine/core/error.h"
#include "engine/package/package_loader.h"

namespace tessera::driver {

namespace {

// A digest of the input files' bytes: a model whose import froze input
// values into constants (shape operands) is specialised for those values too.
std::string files_digest(const std::vector<std::string>& files) {
    size_t h = 0;
    for (const std::string& f : files) {
        std::ifstream in(f, std::ios::binary);
        std::ostringstream bytes;
        bytes << in.rdbuf();
        h = h * 1000003u ^ std::hash<std::string>{}(bytes.str());
    }
    return std::to_string(h);
}

}  // namespace

std::string shapes_text(const InputShapes& shapes) {
    return shapes.empty() ? "(static shapes)" : package::shapes_text(shapes);
}

ShapeSpecializations::ShapeSpecializations(std::string path, BuildOptions options)
    : m_path(std::move(path)), m_options(std::move(options)) {
    m_options.kernel_cache = std::make_shared<KernelCache>();
}

size_t ShapeSpecializations::size() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_built.size();
}

ShapeSpecializations::Use ShapeSpecializations::for_shapes(const InputShapes& input_shapes) {
    return get(input_shapes, "", 0, [&] { return load_model(m_path, input_shapes); });
}

ShapeSpecializations::Use ShapeSpecializations::for_input_files(
    const std::vector<std::string>& input_files, const InputShapes& input_shapes) {
    const InputShapes shapes = input_shapes_from_files(m_path, input_files, input_shapes);
    const std::string digest = files_digest(input_files);
    return get(shapes, digest, input_files.size(),
               [&] { return load_model_for_inputs(m_path, input_files, input_shapes); });
}

ShapeSpecializations::Use ShapeSpecializations::get(const InputShapes& shapes,
                                                    const std::string& digest, size_t given_inputs,
                                                    const std::function<graph::Graph()>& load) {
    const std::string key = shapes_text(shapes);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_built.find(key);
        if (it != m_built.end() &&
            (it->second.frozen_digest.empty() || it->second.frozen_digest == digest)) {
            Use seen = it->second;
            seen.built = false;
            seen.compiled = 0;
            return seen;
        }
    }
    Use u;
    u.graph = load();
    u.shapes = shapes;
    u.model = build(u.graph, m_options);
    u.built = true;
    u.kernels = int(u.model->kernels.size());
    u.compiled = u.model->kernels_compiled();
    // Fewer runtime inputs than files: their values were frozen into the graph.
    if (u.graph.inputs.size() < given_inputs) u.frozen_digest = digest;
    std::lock_guard<std::mutex> lock(m_mutex);
    m_built[key] = u;
    return u;
}

}  // namespace tessera::driver
