// `tessera inspect`: print a model's graph, or the loop IR, LLVM IR or
// assembly of its kernels.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/memory_table.h"
#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/schedule/schedule.h"
#include "engine/tir/printer.h"

namespace tessera::cli {

CLI::App* add_inspect_command(CLI::App& app, InspectOptions& o) {
    CLI::App* cmd =
        app.add_subcommand("inspect", "Print a model's graph or the code of its kernels");
    cmd->add_option("MODEL", o.model, "an .onnx file or an ONNX test-case folder")->required();
    cmd->add_option("--print", o.print, "what to print: graph, passes, loop, llvm, asm, cuda, ptx or memory (the buffer plan); "
                    "cuda and ptx build for --target cuda")
        ->check(CLI::IsMember({"graph", "passes", "loop", "llvm", "asm", "cuda", "ptx", "memory"}));
    add_input_shape_option(cmd, o.input_shapes);
    add_input_files_options(cmd, o.input_files);
    cmd->add_option("--op", o.op,
                    "the node (by name) whose kernel to print: with an opt level or passes, the "
                    "kernel that runs it as `tessera run` builds it (or the kernel of that name, "
                    "as `run --profile` prints it); else the op alone, unscheduled; all kernels "
                    "if omitted");
    cmd->add_option("--threads", o.threads,
                    "threads the kernels are scheduled for (as `run --threads`; 0 = the default)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--json", o.json, "print one JSON object as the last line");
    add_pass_options(cmd, o.passes, o.opt_level, o.print_after_all);
    cmd->add_option("--target", o.target,
                    "llvm, or cuda: fuse with the GPU pass pipeline and print GPU-scheduled kernels")
        ->check(CLI::IsMember({"llvm", "cuda"}));
    cmd->add_option("--trace", o.trace,
                    "a schedule trace (JSON) to apply to the kernel of --op before printing");
    return cmd;
}

namespace {

// The pass table: name, the opt level that enables it, whether the selected
// pipeline runs it, and its description.
std::string pass_table(const std::vector<std::string>& pipeline) {
    std::string text;
    for (const passes::PassInfo& p : passes::all_passes()) {
        bool on = std::find(pipeline.begin(), pipeline.end(), p.name) != pipeline.end();
        char line[96];
        std::snprintf(line, sizeof line, "%s %-26s -O%d  ", on ? "[x]" : "[ ]", p.name.c_str(),
                      p.opt_level);
        text += line + p.description + "\n";
    }
    return text;
}

// The loop IR, LLVM IR or assembly ("loop", "llvm", "asm") of CPU kernels,
// the loop IR, CUDA C or PTX ("loop", "cuda", "ptx") of GPU kernels.
std::string kernel_text(const std::vector<tir::PrimFunc>& funcs, const std::string& what,
                        const codegen::LlvmOptions& llvm, bool gpu) {
    if (gpu) {
        TS_USER_CHECK(what != "llvm" && what != "asm")
            << "--print " << what << " shows CPU code; with --target cuda print loop, cuda or ptx";
        if (what == "cuda") return codegen::emit_cuda_source(funcs);
        if (what == "ptx") return codegen::compile_cuda(funcs).ptx;
    }
    TS_USER_CHECK(what != "ptx") << "--print ptx needs --target cuda";
    if (what == "llvm") return codegen::emit_llvm_ir(funcs, llvm);
    if (what == "asm") return codegen::emit_assembly(funcs, llvm);
    std::string text;
    for (const auto& f : funcs) {
        if (!text.empty()) text += "\n";
        text += tir::print(f);
    }
    return text;
}

}  // namespace

int run_inspect(const InspectOptions& o) {
    if (o.print == "passes") {
        int level = o.opt_level >= 0 ? o.opt_level : 2;
        std::string text = pass_table(driver::find_target(o.target).graph_passes(o.passes, level));
        std::cout << text;
        if (o.json) {
            nlohmann::json arr = nlohmann::json::array();
            for (const passes::PassInfo& p : passes::all_passes())
                arr.push_back({{"name", p.name}, {"opt_level", p.opt_level},
                               {"description", p.description}});
            std::cout.flush();
            print_json_line({{"passes", arr}});
        }
        return kOk;
    }
    ModelPath mp = resolve_model_path(o.model);
    graph::Graph g = load(mp, o.input_files, o.input_shapes);
    if (o.print == "memory") {  // build with the default pipeline, show the executor's plan
        driver::BuildOptions bo;
        bo.opt_level = o.opt_level >= 0 ? o.opt_level : 2;
        bo.passes = o.passes;
        std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
        std::cout << memory_table(*model->executor, model->graph);
        if (o.json) {
            nlohmann::json j = memory_json(*model->executor, model->graph);
            j["model"] = mp.file;
            std::cout.flush();
            print_json_line(j);
        }
        return kOk;
    }
    // CUDA C and PTX are what the "cuda" target builds.
    const bool gpu = o.target == "cuda" || o.print == "cuda" || o.print == "ptx";
    const bool optimized = !o.passes.empty() || o.opt_level >= 0 || o.print_after_all || gpu;
    driver::BuildOptions bo;
    bo.target = gpu ? "cuda" : "llvm";
    bo.opt_level = o.opt_level >= 0 ? o.opt_level : 2;
    bo.passes = o.passes;
    bo.threads = o.threads;
    bo.jit = false;  // scheduled kernels are printed, none is compiled
    if (o.print_after_all)
        bo.print_after = [](const std::string& pass, const graph::Graph& after) {
            std::cerr << "// ---- graph after " << pass << "\n" << graph::print(after);
        };
    schedule::Trace trace;
    if (!o.trace.empty()) {
        TS_USER_CHECK(!o.op.empty()) << "--trace needs --op NODE (the kernel to schedule)";
        trace = schedule::Trace::load(o.trace);
    }

    std::string text;
    if (optimized && o.print != "graph") {
        // What runs: the kernels as `tessera run` (--target) builds them (fused
        // groups, default, tuned or --trace schedules, constant operands
        // prepacked); --op picks the kernel that runs that node.
        if (!o.op.empty() && !o.trace.empty()) bo.kernel_traces[o.op] = trace;
        std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
        std::vector<tir::PrimFunc> funcs = model->kernels;
        if (!o.op.empty()) {
            const int k = model->kernel_of(o.op);
            TS_USER_CHECK(k >= 0 || model->graph.find_node(o.op) >= 0)
                << "no node or kernel named '" << o.op << "' in " << mp.file
                << " after the graph passes; nodes are: " << node_list(model->graph, 10);
            TS_USER_CHECK(k >= 0) << "node '" << o.op << "' runs in no kernel";
            funcs = {model->kernels[size_t(k)]};
        }
        text = kernel_text(funcs, o.print, driver::llvm_options(bo), gpu);
    } else {
        if (optimized) g = driver::optimize(g, bo);
        int node = -1;
        if (!o.op.empty()) {
            node = g.find_node(o.op);
            TS_USER_CHECK(node >= 0) << "no node named '" << o.op << "' in " << mp.file
                                     << "; nodes are: " << node_list(g, 10);
        }
        if (o.print == "graph") {
            text = graph::print(g);
        } else {  // the op alone (or every op), unscheduled
            std::vector<tir::PrimFunc> funcs;
            if (node >= 0) {
                funcs.push_back(driver::lower_op(g, node));
            } else {
                for (int n = 0; n < int(g.nodes.size()); ++n) funcs.push_back(driver::lower_op(g, n));
            }
            if (!o.trace.empty()) {
                for (auto& f : funcs) {
                    try {
                        f = trace.apply(f).func();
                    } catch (const schedule::ScheduleError& e) {
                        TS_USER_FAIL() << o.trace << ": " << e.what();
                    }
                }
            }
            text = kernel_text(funcs, o.print, driver::llvm_options(bo), false);
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
