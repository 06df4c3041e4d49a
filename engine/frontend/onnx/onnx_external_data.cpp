// ONNX external data (see onnx_external_data.h).
#include "engine/frontend/onnx/onnx_external_data.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "engine/core/error.h"

namespace tessera::frontend::onnx_import {

namespace fs = std::filesystem;

namespace {

// Tensors (and the subgraphs' tensors) of a graph, each passed to `f`.
void for_each_tensor(onnx::GraphProto& g, const std::function<void(onnx::TensorProto&)>& f) {
    for (onnx::TensorProto& t : *g.mutable_initializer()) f(t);
    for (onnx::SparseTensorProto& s : *g.mutable_sparse_initializer()) {
        f(*s.mutable_values());
        f(*s.mutable_indices());
    }
    for (onnx::NodeProto& n : *g.mutable_node())
        for (onnx::AttributeProto& a : *n.mutable_attribute()) {
            if (a.has_t()) f(*a.mutable_t());
            for (onnx::TensorProto& t : *a.mutable_tensors()) f(t);
            if (a.has_g()) for_each_tensor(*a.mutable_g(), f);
            for (onnx::GraphProto& sub : *a.mutable_graphs()) for_each_tensor(sub, f);
        }
}

bool has_external(onnx::GraphProto& g) {
    bool any = false;
    for_each_tensor(g, [&](onnx::TensorProto& t) {
        any |= t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL;
    });
    return any;
}

// A non-negative integer written as a decimal string (an offset or length).
int64_t parse_count(const std::string& text, const std::string& what) {
    TS_USER_CHECK(!text.empty() && text.size() <= 18 &&
                  text.find_first_not_of("0123456789") == std::string::npos)
        << what << " '" << text << "' is not a non-negative integer";
    return std::stoll(text);
}

class ExternalReader {
public:
    ExternalReader(const std::string& origin, fs::path folder, bool read_data = true)
        : m_origin(origin), m_folder(std::move(folder)), m_read(read_data) {}

    void read(onnx::TensorProto& t) {
        if (t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) return;
        const std::string what = m_origin + ": tensor '" + t.name() + "'";
        std::string location;
        int64_t offset = 0, length = -1;
        for (const onnx::StringStringEntryProto& e : t.external_data()) {
            if (e.key() == "location") location = e.value();
            if (e.key() == "offset") offset = parse_count(e.value(), what + ": offset");
            if (e.key() == "length") length = parse_count(e.value(), what + ": length");
        }
        TS_USER_CHECK(!location.empty()) << what << ": external data without a location";
        const fs::path file = resolve(location, what);
        std::error_code ec;
        const uintmax_t size = fs::file_size(file, ec);
        TS_USER_CHECK(!ec) << what << ": cannot read its data file '" << location
                           << "' beside the model: " << ec.message();
        TS_USER_CHECK(uintmax_t(offset) <= size)
            << what << ": offset " << offset << " is past the end of '" << location << "' (" << size
            << " bytes)";
        if (length < 0) length = int64_t(size - uintmax_t(offset));
        TS_USER_CHECK(uintmax_t(length) <= size - uintmax_t(offset))
            << what << ": " << length << " bytes at offset " << offset << " run past the end of '"
            << location << "' (" << size << " bytes)";
        TS_USER_CHECK(length <= (int64_t(1) << 34))
            << what << ": " << length << " bytes is too large";
        std::ifstream in(file, std::ios::binary);
        TS_USER_CHECK(in.good()) << what << ": cannot open '" << location
                                 << "': " << std::strerror(errno);
        std::string bytes(size_t(length), '\0');
        in.seekg(std::streamoff(offset));
        in.read(bytes.data(), std::streamsize(length));
        TS_USER_CHECK(in.gcount() == std::streamsize(length))
            << what << ": could read only " << in.gcount() << " of " << length << " bytes of '"
            << location << "'";
        t.set_raw_data(std::move(bytes));
        t.clear_external_data();
        t.set_data_location(onnx::TensorProto_DataLocation_DEFAULT);
    }

private:
    // The data file, inside the model's folder (no absolute path, no "..",
    // no symbolic link leading out of it).
    fs::path resolve(const std::string& location, const std::string& what) {
        const fs::path rel(location);
        TS_USER_CHECK(location.find('\0') == std::string::npos && rel.is_relative() &&
                      !rel.has_root_name())
            << what << ": its data file '" << location
            << "' must be given relative to the model's folder";
        for (const fs::path& part : rel)
            TS_USER_CHECK(part != "..")
                << what << ": its data file '" << location << "' leaves the model's folder";
        std::error_code ec;
        const fs::path file = fs::weakly_canonical(m_folder / rel, ec);
        const fs::path folder = fs::weakly_canonical(m_folder, ec);
        TS_USER_CHECK(!ec) << what << ": cannot resolve its data file '" << location
                           << "': " << ec.message();
        auto [end, rest] = std::mismatch(folder.begin(), folder.end(), file.begin(), file.end());
        TS_USER_CHECK(end == folder.end())
            << what << ": its data file '" << location << "' leads out of the model's folder";
        (void)rest;
        TS_USER_CHECK(fs::is_regular_file(file, ec))
            << what << ": its data file '" << location << "' is missing beside the model (in "
            << m_folder.string() << ")";
        return file;
    }

    std::string m_origin;
    fs::path m_folder;
    bool m_read = true;
};

void resolve_external_data(onnx::ModelProto& model, const std::string& origin, bool read) {
    if (!model.has_graph() || !has_external(*model.mutable_graph())) return;
    std::error_code ec;
    TS_USER_CHECK(fs::is_regular_file(origin, ec))
        << origin
        << ": the model keeps tensor data in external files, which are read from "
           "the model's folder: open the .onnx file itself";
    fs::path folder = fs::path(origin).parent_path();
    if (folder.empty()) folder = ".";
    ExternalReader reader(origin, folder, read);
    for_each_tensor(*model.mutable_graph(), [&](onnx::TensorProto& t) { reader.read(t); });
}

}  // namespace

void inline_external_data(onnx::ModelProto& model, const std::string& origin) {
    resolve_external_data(model, origin, true);
}

}  // namespace tessera::frontend::onnx_import

namespace tessera::frontend {

void check_external_data(const std::string& path) {
    onnx::ModelProto model;
    {
        std::ifstream in(path, std::ios::binary);
        if (!in.good() || !model.ParseFromIstream(&in)) return;  // the import reports that
    }
    onnx_import::resolve_external_data(model, path, false);
}

}  // namespace tessera::frontend
