// Regression: a process that ran a JIT-compiled parallel loop exits cleanly.
// The JIT binds GOMP_parallel to an OpenMP runtime that LLVM loads as a
// "permanent" library and dlcloses again in a static destructor at exit,
// while the runtime's idle pool threads (still spinning in its code) outlive
// main; the runtime must therefore stay mapped until the process ends.
#include <link.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "tests/engine/codegen/llvm/codegen_test_util.h"

namespace tessera::test {
namespace {

/// Whether an OpenMP runtime (libgomp or libomp) is loaded in this process.
/// (Not dlsym(RTLD_DEFAULT, ...): that would make the executable depend on
/// the runtime and keep it loaded.)
bool openmp_runtime_loaded() {
    return dl_iterate_phdr(
               [](dl_phdr_info* info, size_t, void*) {
                   std::string name = info->dlpi_name ? info->dlpi_name : "";
                   return int(name.find("libgomp.so") != std::string::npos ||
                              name.find("libomp.so") != std::string::npos);
               },
               nullptr) != 0;
}

// Registered before LLVM's statics are built, so it runs after their
// destructors: the runtime must still be loaded then.
void exit_if_runtime_unloaded() {
    if (!openmp_runtime_loaded()) _exit(3);
}

// The child: run a parallel kernel on a team with a pool thread, check it,
// destroy the module, exit through the normal exit path.
[[noreturn]] void run_parallel_kernel_then_exit() {
    std::atexit(exit_if_runtime_unloaded);
    const int64_t M = 29, N = 7;
    Buffer A = float_buffer("A", {M, N}), C = float_buffer("C", {M, N});
    Var i("i"), j("j");
    Stmt body = For::make(i, Expr(0), Expr(M), ForKind::Parallel,
                          For::make(j, Expr(0), Expr(N), ForKind::Serial,
                                    st(C, ld(A, {i, j}) * 3.0f + cast(DataType::float32(), i), {i, j})));
    PrimFunc f("par_exit", {A, C}, body);
    auto a = random_floats(size_t(M * N), 43);
    std::vector<float> c(size_t(M * N), 0.f), want(size_t(M * N), 0.f);
    codegen::LlvmOptions options;
    options.threads = 2;  // at least one libgomp pool thread
    auto module = codegen::jit_compile({f}, options);
    std::vector<void*> args = {a.data(), c.data()};
    module->lookup(f->name)(args.data());
    interpret(f, {a.data(), want.data()});
    for (size_t k = 0; k < c.size(); ++k)
        if (!(std::fabs(c[k] - want[k]) <= 1e-5f * std::max(1.f, std::fabs(want[k])))) _exit(4);
    if (!openmp_runtime_loaded()) _exit(5);
    module.reset();
    std::exit(0);
}

TEST(OpenMpExit, ProcessExitsCleanlyAfterParallelKernel) {
    // A fresh process (re-executed, not forked) so this test loads the
    // OpenMP runtime and registers its exit check before LLVM does.
    const std::string style = GTEST_FLAG_GET(death_test_style);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(run_parallel_kernel_then_exit(), ::testing::ExitedWithCode(0), "")
        << "exit code 3: the OpenMP runtime was unloaded at exit under its pool threads; "
           "4: wrong result; 5: no OpenMP runtime loaded";
    GTEST_FLAG_SET(death_test_style, style);
}

}  // namespace
}  // namespace tessera::test
