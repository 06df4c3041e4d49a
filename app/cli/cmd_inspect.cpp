// `tessera inspect`: print a model's graph, or the loop IR, LLVM IR or
// assembly of its kernels.
#include <iostream>

#include "app/cli/cli_common.h"
#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/tir/printer.h"

namespace tessera::cli {

CLI::App* add_inspect_command(CLI::App& app, InspectOptions& o) {
    CLI::App* cmd =
        app.add_subcommand("inspect", "Print a model's graph or the code of its kernels");
    cmd->add_option("MODEL", o.model, "an .onnx file or an ONNX test-case folder")->required();
    cmd->add_option("--print", o.print, "what to print: graph, loop, llvm or asm")
        ->check(CLI::IsMember({"graph", "loop", "llvm", "asm"}));
    cmd->add_option("--op", o.op, "the node (by name) whose kernel to print; all nodes if omitted");
    cmd->add_flag("--json", o.json, "print one JSON object as the last line");
    return cmd;
}

int run_inspect(const InspectOptions& o) {
    ModelPath mp = resolve_model_path(o.model);
    graph::Graph g = load(mp);

    std::vector<int> nodes;
    if (!o.op.empty()) {
        int n = g.find_node(o.op);
        TS_USER_CHECK(n >= 0) << "no node named '" << o.op << "' in " << mp.file
                              << "; nodes are: " << node_list(g, 10);
        nodes.push_back(n);
    } else {
        for (int i = 0; i < int(g.nodes.size()); ++i) nodes.push_back(i);
    }

    std::string text;
    if (o.print == "graph") {
        text = graph::print(g);
    } else {
        std::vector<tir::PrimFunc> funcs;
        for (int n : nodes) funcs.push_back(driver::lower_op(g, n));
        if (o.print == "loop") {
            for (const auto& f : funcs) {
                if (!text.empty()) text += "\n";
                text += tir::print(f);
            }
        } else if (o.print == "llvm") {
            text = codegen::emit_llvm_ir(funcs);
        } else {
            text = codegen::emit_assembly(funcs);
        }
    }
    std::cout << text;
    if (!text.empty() && text.back() != '\n') std::cout << "\n";
    if (o.json) {
        nlohmann::json j;
        j[o.print] = text;
        if (!o.op.empty()) j["op"] = o.op;
        j["model"] = mp.file;
        std::cout.flush();
        print_json_line(j);
    }
    return kOk;
}

namespace {
const CommandRegistrar kRegistered{make_command<InspectOptions>("inspect", add_inspect_command, run_inspect)};
}  // namespace

}  // namespace tessera::cli
