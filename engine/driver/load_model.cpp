// Model loading: ONNX import with input shapes and constant folding of shape
// subgraphs (each folded node runs once in the loop-IR interpreter).
#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/tir/interpreter.h"
#include "engine/topi/topi.h"

namespace tessera::driver {

namespace {

std::vector<std::shared_ptr<const graph::ConstantData>> fold_node(
    const graph::Node& node, const std::vector<graph::Value>& inputs,
    const std::vector<graph::TensorType>& output_types) {
    graph::Graph g;
    g.name = "fold";
    graph::Node n = node;
    n.inputs.clear();
    n.outputs.clear();
    for (const graph::Value& v : inputs) {
        graph::Value c = v;
        c.producer = -1;
        n.inputs.push_back(g.add_value(std::move(c)));
    }
    for (size_t i = 0; i < output_types.size(); ++i) {
        graph::Value o;
        o.name = "out" + std::to_string(i);
        o.type = output_types[i];
        n.outputs.push_back(g.add_value(std::move(o)));
    }
    g.add_node(std::move(n));
    tir::PrimFunc f = topi::lower_node(g, 0);
    std::vector<std::shared_ptr<graph::ConstantData>> outs;
    std::vector<void*> args;
    std::vector<std::vector<uint8_t>> in_copies;
    for (const graph::Value& v : inputs) {
        in_copies.push_back(v.constant->bytes);
        in_copies.back().resize(std::max<size_t>(in_copies.back().size(), 8));
    }
    for (auto& c : in_copies) args.push_back(c.data());
    for (const auto& t : output_types) {
        auto d = std::make_shared<graph::ConstantData>();
        d->bytes.assign(std::max<size_t>(size_t(t.num_bytes()), 8), 0);
        outs.push_back(d);
        args.push_back(d->bytes.data());
    }
    tir::interpret(f, args);
    std::vector<std::shared_ptr<const graph::ConstantData>> result;
    for (size_t i = 0; i < outs.size(); ++i) {
        outs[i]->bytes.resize(size_t(output_types[i].num_bytes()));
        result.push_back(outs[i]);
    }
    return result;
}

}  // namespace

frontend::ImportOptions import_options(
    const std::map<std::string, std::vector<int64_t>>& input_shapes) {
    frontend::ImportOptions o;
    o.input_shapes = input_shapes;
    o.fold = fold_node;
    return o;
}

graph::Graph load_model(const std::string& path) { return load_model(path, {}); }

graph::Graph load_model(const std::string& path,
                        const std::map<std::string, std::vector<int64_t>>& input_shapes) {
    assert_engine_work_allowed("driver::load_model");
    return frontend::import_onnx_file(path, import_options(input_shapes));
}

}  // namespace tessera::driver
