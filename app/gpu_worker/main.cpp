// tessera-gpu-worker: the process in which GPU tuning measures its
// candidates (engine/driver/gpu_measure_worker.h). Started by the tuner with
// a socket on file descriptor 3; a kernel that faults ends this process, not
// the tuner. Not meant to be run by hand.
#include <fcntl.h>

#include <cstdio>
#include <cstring>

#include "engine/driver/gpu_measure_worker.h"

int main(int argc, char** argv) {
    if (argc > 1 || fcntl(3, F_GETFD) < 0) {
        std::fprintf(stderr,
                     "tessera-gpu-worker: measures GPU tuning candidates for tessera and "
                     "tessera-studio, which start it; not meant to be run by hand\n");
        return argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)
                   ? 0
                   : 2;
    }
    tessera::driver::gpu_measure_worker_main(3);
}
