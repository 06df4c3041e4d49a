// write_file_atomically (atomic_file.h): temporary file, fsync, rename.
#include "engine/core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine/core/error.h"

namespace tessera {

void write_file_atomically(const std::string& path, const std::string& bytes) {
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    TS_USER_CHECK(fd >= 0) << "cannot write '" << path << "': " << std::strerror(errno);
    size_t done = 0;
    int err = 0;
    while (done < bytes.size()) {
        ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            err = w < 0 ? errno : EIO;
            break;
        }
        done += size_t(w);
    }
    if (!err && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && !err) err = errno;
    if (!err && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
    if (err) {
        ::unlink(tmp.c_str());
        TS_USER_FAIL() << "cannot write '" << path << "': " << std::strerror(err)
                       << " (the previous file, if any, is unchanged)";
    }
}

}  // namespace tessera
