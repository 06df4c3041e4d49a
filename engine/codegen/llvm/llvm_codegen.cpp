// LLVM back end: lowering pipeline, optimization (new pass manager), ORC JIT,
// IR text and assembly emission for the host CPU.
#include "engine/codegen/llvm/llvm_codegen.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include "engine/codegen/llvm/codegen_llvm.h"
#include "engine/core/error.h"
#include "engine/tir/passes/pass_manager.h"

namespace tessera::codegen {
namespace {

void init_llvm() {
    static std::once_flag once;
    std::call_once(once, [] {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        llvm::InitializeNativeTargetAsmParser();
        // Parallel loops call GOMP_parallel: make an OpenMP runtime's symbols
        // visible to the JIT's process-symbol lookup. RTLD_NODELETE pins the
        // runtime for the life of the process: LLVM dlcloses its "permanent"
        // libraries in a static destructor at exit, and unmapping the runtime
        // under its still-running (spinning) pool threads crashed the process
        // after main returned.
        for (const char* lib : {"libgomp.so.1", "libomp.so.5", "libomp.so"}) {
            if (!dlopen(lib, RTLD_LAZY | RTLD_GLOBAL | RTLD_NODELETE)) continue;
            if (!llvm::sys::DynamicLibrary::LoadLibraryPermanently(lib)) break;
        }
    });
}

template <typename T>
T unwrap(llvm::Expected<T> v, const char* what) {
    TS_CHECK(bool(v)) << what << ": " << llvm::toString(v.takeError());
    return std::move(*v);
}

void check(llvm::Error e, const char* what) {
    TS_CHECK(!e) << what << ": " << llvm::toString(std::move(e));
}

llvm::CodeGenOptLevel codegen_level(int opt) {
    switch (opt) {
    case 0: return llvm::CodeGenOptLevel::None;
    case 1: return llvm::CodeGenOptLevel::Less;
    case 2: return llvm::CodeGenOptLevel::Default;
    default: return llvm::CodeGenOptLevel::Aggressive;
    }
}

/// The host CPU with all its features (AVX2, FMA, ...).
llvm::orc::JITTargetMachineBuilder host_machine(const LlvmOptions& options) {
    init_llvm();
    auto jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "LLVM host detection");
    jtmb.setCodeGenOptLevel(codegen_level(options.opt_level));
    // a * b + c becomes one FMA (as C compilers contract by default).
    jtmb.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Fast;
    // TESSERA_CPU / TESSERA_CPU_FEATURES ("haswell", "+avx,+avx2,+fma") stand
    // in for an empty options.cpu: e.g. AVX2 code on an AVX-512 host, for
    // comparisons with OpenBLAS under OPENBLAS_CORETYPE=Haswell.
    std::string cpu = options.cpu, features = options.features;
    if (cpu.empty())
        if (const char* env = std::getenv("TESSERA_CPU")) {
            cpu = env;
            const char* f = std::getenv("TESSERA_CPU_FEATURES");
            features = f ? f : "";
        }
    if (!cpu.empty()) {
        jtmb.setCPU(cpu);
        jtmb.getFeatures() = llvm::SubtargetFeatures();
        if (!features.empty()) jtmb.getFeatures().addFeaturesVector(
            llvm::SubtargetFeatures(features).getFeatures());
    }
    return jtmb;
}

void optimize(llvm::Module& mod, llvm::TargetMachine& tm, int opt) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions pto;
    pto.LoopVectorization = opt >= 2;
    pto.SLPVectorization = opt >= 2;
    llvm::PassBuilder pb(&tm, pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel level = opt <= 0   ? llvm::OptimizationLevel::O0
                                    : opt == 1 ? llvm::OptimizationLevel::O1
                                    : opt == 2 ? llvm::OptimizationLevel::O2
                                               : llvm::OptimizationLevel::O3;
    llvm::ModulePassManager mpm = opt <= 0 ? pb.buildO0DefaultPipeline(level)
                                           : pb.buildPerModuleDefaultPipeline(level);
    mpm.run(mod, mam);
}

/// An optimized module holding every function, with its context and the
/// target machine it was built for.
struct BuiltModule {
    std::unique_ptr<llvm::LLVMContext> ctx;
    std::unique_ptr<llvm::Module> mod;
    std::unique_ptr<llvm::TargetMachine> tm;
};

BuiltModule build_module(const std::vector<tir::PrimFunc>& funcs, const LlvmOptions& options,
                         llvm::orc::JITTargetMachineBuilder jtmb) {
    BuiltModule out;
    out.ctx = std::make_unique<llvm::LLVMContext>();
    out.mod = std::make_unique<llvm::Module>("tessera", *out.ctx);
    out.tm = unwrap(jtmb.createTargetMachine(), "LLVM target machine");
    out.mod->setDataLayout(out.tm->createDataLayout());
    out.mod->setTargetTriple(out.tm->getTargetTriple().str());
    CodeGenLLVM cg(*out.ctx, *out.mod, jtmb.getCPU(), jtmb.getFeatures().getString());
    cg.set_threads(options.threads);
    cg.set_fast_math(options.fast_math);
    for (const tir::PrimFunc& f : funcs) {
        TS_CHECK(f.defined()) << "LLVM codegen: undefined PrimFunc";
        tir::PrimFunc lowered = tir::lower_for_codegen(f);
        cg.add_function(lowered);
    }
    std::string err;
    llvm::raw_string_ostream es(err);
    TS_CHECK(!llvm::verifyModule(*out.mod, &es)) << "LLVM codegen produced invalid IR: " << err;
    optimize(*out.mod, *out.tm, options.opt_level);
    return out;
}

class LlvmJitModule : public JitModule {
public:
    LlvmJitModule(std::unique_ptr<llvm::orc::LLJIT> jit, std::map<std::string, runtime::KernelFn> fns)
        : m_jit(std::move(jit)), m_fns(std::move(fns)) {}

    runtime::KernelFn lookup(const std::string& name) const override {
        auto it = m_fns.find(name);
        TS_CHECK(it != m_fns.end()) << "JIT module has no function '" << name << "'";
        return it->second;
    }

private:
    std::unique_ptr<llvm::orc::LLJIT> m_jit;
    std::map<std::string, runtime::KernelFn> m_fns;
};

}  // namespace

std::shared_ptr<JitModule> jit_compile(const std::vector<tir::PrimFunc>& funcs,
                                       const LlvmOptions& options) {
    llvm::orc::JITTargetMachineBuilder jtmb = host_machine(options);
    BuiltModule built = build_module(funcs, options, jtmb);
    auto jit = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(),
                      "creating the LLVM JIT");
    // libm (tanhf, erff), aligned_alloc and free come from this process.
    auto process = unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                              jit->getDataLayout().getGlobalPrefix()),
                          "LLVM process symbols");
    jit->getMainJITDylib().addGenerator(std::move(process));
    check(jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(built.mod), std::move(built.ctx))),
          "adding the module to the JIT");
    std::map<std::string, runtime::KernelFn> fns;
    for (const tir::PrimFunc& f : funcs) {
        llvm::orc::ExecutorAddr addr = unwrap(jit->lookup(f->name), "JIT symbol lookup");
        fns[f->name] = addr.toPtr<runtime::KernelFn>();
    }
    return std::make_shared<LlvmJitModule>(std::move(jit), std::move(fns));
}

std::string emit_llvm_ir(const std::vector<tir::PrimFunc>& funcs, const LlvmOptions& options) {
    BuiltModule built = build_module(funcs, options, host_machine(options));
    std::string text;
    llvm::raw_string_ostream os(text);
    built.mod->print(os, nullptr);
    os.flush();
    return text;
}

IrAndAssembly emit_llvm_ir_and_assembly(const std::vector<tir::PrimFunc>& funcs,
                                        const LlvmOptions& options) {
    BuiltModule built = build_module(funcs, options, host_machine(options));
    IrAndAssembly out;
    llvm::raw_string_ostream ir(out.llvm_ir);
    built.mod->print(ir, nullptr);
    ir.flush();
    llvm::SmallString<0> buffer;
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    TS_CHECK(!built.tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
        << "the host target cannot emit assembly";
    pm.run(*built.mod);
    out.assembly = std::string(buffer.str());
    return out;
}

std::string emit_assembly(const std::vector<tir::PrimFunc>& funcs, const LlvmOptions& options) {
    return emit_llvm_ir_and_assembly(funcs, options).assembly;
}

std::string emit_object(const std::vector<tir::PrimFunc>& funcs, const LlvmOptions& options) {
    llvm::orc::JITTargetMachineBuilder jtmb = host_machine(options);
    jtmb.setRelocationModel(llvm::Reloc::PIC_);
    BuiltModule built = build_module(funcs, options, jtmb);
    llvm::SmallString<0> buffer;
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    TS_CHECK(!built.tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
        << "the target cannot emit object files";
    pm.run(*built.mod);
    return std::string(buffer.data(), buffer.size());
}

int host_vector_lanes() {
    static const int lanes = [] {
        llvm::orc::JITTargetMachineBuilder jtmb = host_machine({});
        auto has = [&](const std::string& f) {
            for (const std::string& x : jtmb.getFeatures().getFeatures())
                if (x == "+" + f) return true;
            return false;
        };
        return has("avx512f") ? 16 : has("avx") ? 8 : 4;
    }();
    return lanes;
}

std::string host_target_description() {
    llvm::orc::JITTargetMachineBuilder jtmb = host_machine({});
    std::vector<std::string> enabled;
    for (const std::string& f : jtmb.getFeatures().getFeatures())
        if (!f.empty() && f[0] == '+') enabled.push_back(f);
    std::sort(enabled.begin(), enabled.end());
    std::string features;
    for (const std::string& f : enabled) features += (features.empty() ? "" : ",") + f;
    return jtmb.getTargetTriple().str() + ", " + jtmb.getCPU() + ", " + features;
}

}  // namespace tessera::codegen
