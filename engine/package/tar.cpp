// ustar: 512-byte headers with octal fields and a byte-sum checksum, data
// padded to 512 bytes, two zero blocks at the end.
#include "engine/package/tar.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"

namespace tessera::package {

namespace {

constexpr size_t kBlock = 512;

void put_octal(char* field, size_t width, uint64_t v) {
    // width-1 octal digits, zero padded, then NUL.
    std::string s(width - 1, '0');
    for (size_t i = width - 1; i-- > 0 && v;) {
        s[i] = char('0' + (v & 7));
        v >>= 3;
    }
    std::memcpy(field, s.data(), width - 1);
    field[width - 1] = '\0';
}

uint64_t header_checksum(const unsigned char* h) {
    uint64_t sum = 0;
    for (size_t i = 0; i < kBlock; ++i) sum += (i >= 148 && i < 156) ? uint64_t(' ') : h[i];
    return sum;
}

// Parses an octal field (spaces and NULs end it); false when a digit is bad.
bool get_octal(const char* field, size_t width, uint64_t& v) {
    v = 0;
    size_t i = 0;
    while (i < width && field[i] == ' ') ++i;
    bool any = false;
    for (; i < width && field[i] != '\0' && field[i] != ' '; ++i) {
        if (field[i] < '0' || field[i] > '7') return false;
        v = v * 8 + uint64_t(field[i] - '0');
        any = true;
    }
    return any;
}

}  // namespace

std::string write_tar(const std::vector<TarMember>& members) {
    std::string out;
    for (const TarMember& m : members) {
        TS_CHECK(!m.name.empty() && m.name.size() < 100) << "tar member name '" << m.name << "'";
        unsigned char h[kBlock] = {};
        char* c = reinterpret_cast<char*>(h);
        std::memcpy(c, m.name.data(), m.name.size());
        put_octal(c + 100, 8, 0644);           // mode
        put_octal(c + 108, 8, 0);              // uid
        put_octal(c + 116, 8, 0);              // gid
        put_octal(c + 124, 12, m.data.size());  // size
        put_octal(c + 136, 12, 0);             // mtime: fixed, so archives are reproducible
        c[156] = '0';                          // regular file
        std::memcpy(c + 257, "ustar", 6);      // magic with NUL
        std::memcpy(c + 263, "00", 2);         // version
        std::memcpy(c + 265, "tessera", 7);    // uname
        std::memcpy(c + 297, "tessera", 7);    // gname
        uint64_t sum = header_checksum(h);
        put_octal(c + 148, 7, sum);  // six digits, NUL, then a space
        c[155] = ' ';
        out.append(c, kBlock);
        out += m.data;
        out.append((kBlock - m.data.size() % kBlock) % kBlock, '\0');
    }
    out.append(2 * kBlock, '\0');
    return out;
}

std::vector<TarMember> read_tar(const std::string& bytes, const std::string& what) {
    std::vector<TarMember> members;
    size_t pos = 0;
    while (true) {
        TS_USER_CHECK(pos + kBlock <= bytes.size())
            << what << ": not a complete tar archive (it ends inside a header at byte " << pos
            << "); the package is truncated or not a package";
        const auto* h = reinterpret_cast<const unsigned char*>(bytes.data() + pos);
        bool zero = true;
        for (size_t i = 0; i < kBlock && zero; ++i) zero = h[i] == 0;
        if (zero) break;  // end of archive
        const char* c = reinterpret_cast<const char*>(h);
        uint64_t stored = 0, size = 0;
        TS_USER_CHECK(get_octal(c + 148, 8, stored) && stored == header_checksum(h))
            << what << ": damaged tar header at byte " << pos
            << " (bad header checksum); the package is corrupt or not a tar file";
        TS_USER_CHECK(get_octal(c + 124, 12, size))
            << what << ": damaged tar header at byte " << pos << " (bad size field)";
        std::string name(c, strnlen(c, 100));
        char type = c[156];
        pos += kBlock;
        TS_USER_CHECK(size <= bytes.size() - pos)
            << what << ": member '" << name << "' is truncated (" << size << " bytes announced, "
            << bytes.size() - pos << " left)";
        if (type == '0' || type == '\0') {
            TS_USER_CHECK(!name.empty()) << what << ": tar member without a name at byte " << pos;
            members.push_back({name, bytes.substr(pos, size_t(size))});
        } else {
            // Folders, links and extended headers carry nothing a package needs.
            TS_USER_CHECK(type == '5' || type == 'x' || type == 'g')
                << what << ": tar member '" << name << "' is not a regular file (type '" << type
                << "')";
        }
        pos += size_t((size + kBlock - 1) / kBlock * kBlock);
    }
    return members;
}

std::string read_file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    TS_USER_CHECK(in.good()) << "cannot open '" << path << "'";
    std::ostringstream ss;
    ss << in.rdbuf();
    TS_USER_CHECK(!in.bad()) << "cannot read '" << path << "'";
    return ss.str();
}

void write_file_bytes(const std::string& path, const std::string& bytes) {
    // A package is replaced whole or not at all (a crash mid-write keeps the old one).
    write_file_atomically(path, bytes);
}

}  // namespace tessera::package
