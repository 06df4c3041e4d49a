// Constant folding: evaluate nodes whose inputs are all constants.
#include "engine/graph/passes/fold_constants.h"

#include <cstring>

#include "engine/core/error.h"
#include "engine/graph/passes/graph_rewrite.h"
#include "engine/topi/topi.h"

namespace tessera::passes {

namespace {
// Larger results stay computed at run time rather than bloating the weights.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 26;
}  // namespace

graph::Graph fold_constants(const graph::Graph& in, const PassContext& ctx) {
    graph::Graph g = in;
    std::vector<bool> keep(g.nodes.size(), true);
    bool changed = false;
    for (int i = 0; i < int(g.nodes.size()); ++i) {
        const graph::Node& n = g.nodes[size_t(i)];
        if (!topi::has_compute(n.op)) continue;
        bool foldable = true;
        for (int v : n.inputs) foldable = foldable && g.values[size_t(v)].is_constant();
        int64_t elements = 0;
        for (int v : n.outputs) {
            foldable = foldable && !is_graph_output(g, v);
            elements += g.values[size_t(v)].type.num_elements();
        }
        if (!foldable || elements > kMaxFoldedElements) continue;
        std::vector<runtime::NDArray> args;
        for (int v : n.inputs) {
            const graph::Value& val = g.values[size_t(v)];
            args.push_back(runtime::NDArray::from_bytes(val.type, val.constant->bytes.data(),
                                                        val.constant->bytes.size()));
        }
        std::vector<runtime::NDArray> outs = evaluate_node(g, i, args, ctx);
        TS_CHECK(outs.size() == n.outputs.size()) << "fold_constants: output count of " << n.name;
        for (size_t k = 0; k < outs.size(); ++k) {
            graph::Value& val = g.values[size_t(n.outputs[k])];
            auto data = std::make_shared<graph::ConstantData>();
            data->bytes.resize(outs[k].num_bytes());
            if (!data->bytes.empty())
                std::memcpy(data->bytes.data(), outs[k].raw(), data->bytes.size());
            val.constant = std::move(data);
            val.producer = -1;
        }
        keep[size_t(i)] = false;
        changed = true;
    }
    return changed ? compact(g, keep) : g;
}

}  // namespace tessera::passes
