// aboutText(): library versions known at build time (CMake) and at run time
// (NVRTC is loaded when present, so its version is read at run time).
#include "app/studio/versions.h"

#include <QtGlobal>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/codegen/llvm/llvm_codegen.h"

#ifndef TESSERA_ONNX_VERSION
#define TESSERA_ONNX_VERSION "unknown"
#endif
#ifndef TESSERA_VERSION
#define TESSERA_VERSION "0.1.0"
#endif

namespace tessera::studio {

QString aboutText() {
    return QString("<h3>Tessera Studio %1</h3>"
                   "<p>A deep-learning compiler you can see and steer: graph, passes, "
                   "schedules, loop IR and machine code side by side.</p>"
                   "<table>"
                   "<tr><td>Qt</td><td>%2 (built with %3)</td></tr>"
                   "<tr><td>LLVM</td><td>%4</td></tr>"
                   "<tr><td>CUDA (NVRTC, loaded at run time)</td><td>%5</td></tr>"
                   "<tr><td>ONNX</td><td>%6</td></tr>"
                   "<tr><td>JIT target</td><td>%7</td></tr>"
                   "</table>")
        .arg(TESSERA_VERSION, qVersion(), QT_VERSION_STR,
             QString::fromStdString(codegen::llvm_version()),
             QString::fromStdString(codegen::nvrtc_version()),
             TESSERA_ONNX_VERSION,
             QString::fromStdString(codegen::host_target_description()).toHtmlEscaped());
}

}  // namespace tessera::studio
