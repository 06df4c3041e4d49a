// Packages: SHA-256 and ustar against known answers, export → load round
// trip on a hand-built MLP (bit-identical to the JIT, close to the
// interpreter), and every corrupt-package case refused with a UserError.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/graph/op_registry.h"
#include "engine/driver/package_export.h"
#include "engine/package/package_format.h"
#include "engine/package/package_loader.h"
#include "engine/package/sha256.h"
#include "engine/package/tar.h"
#include "engine/package/tessera_runtime.h"

namespace tessera::package {
namespace {

namespace fs = std::filesystem;
using graph::DType;
using graph::TensorType;
using nlohmann::json;
using runtime::NDArray;

TEST(Sha256, KnownAnswers) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Tar, RoundTripsMembersAndSystemTarReadsIt) {
    std::string big(1300, 'x');
    for (size_t i = 0; i < big.size(); ++i) big[i] = char(i * 7);
    std::vector<TarMember> in = {{"a.txt", "hello"}, {"empty", ""}, {"big.bin", big}};
    std::string bytes = write_tar(in);
    EXPECT_EQ(bytes.size() % 512, 0u);
    std::vector<TarMember> out = read_tar(bytes, "t.tar");
    ASSERT_EQ(out.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(out[i].name, in[i].name);
        EXPECT_EQ(out[i].data, in[i].data);
    }
    fs::path p = fs::temp_directory_path() / "tessera_tar_test.tar";
    write_file_bytes(p.string(), bytes);
    if (std::system("tar --version > /dev/null 2>&1") == 0) {
        std::string cmd = "tar -tf '" + p.string() + "' > /dev/null 2>&1";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << "GNU tar cannot list our archive";
    }
    fs::remove(p);
}

TEST(Tar, RejectsDamagedAndTruncatedArchives) {
    std::string bytes = write_tar({{"a.txt", std::string(700, 'a')}});
    std::string bad = bytes;
    bad[10] ^= 1;  // inside the name: the header checksum no longer matches
    EXPECT_THROW(read_tar(bad, "t.tar"), UserError);
    EXPECT_THROW(read_tar(bytes.substr(0, 900), "t.tar"), UserError);
    EXPECT_THROW(read_tar("not a tar file", "t.tar"), UserError);
}

// ---- a small MLP with weights: x[4,16] -> matmul w1[16,32] + b1 -> relu -> matmul w2[32,8] + b2.
TensorType f32(std::vector<int64_t> shape) { return TensorType{DType::Float32, std::move(shape)}; }

int add_value(graph::Graph& g, const std::string& name, TensorType t, uint64_t seed, bool input) {
    graph::Value v;
    v.name = name;
    v.type = t;
    if (!input) {
        NDArray a = runtime::random_ndarray(t, seed);
        auto data = std::make_shared<graph::ConstantData>();
        data->bytes.assign(static_cast<uint8_t*>(a.raw()), static_cast<uint8_t*>(a.raw()) + a.num_bytes());
        v.constant = data;
    }
    int id = g.add_value(v);
    if (input) g.inputs.push_back(id);
    return id;
}

int add_node(graph::Graph& g, const std::string& op, const std::string& name, std::vector<int> in) {
    graph::Node n;
    n.op = op;
    n.name = name;
    n.inputs = std::move(in);
    graph::Value out;
    out.name = name + "_out";
    out.type = graph::infer_types(g, n).at(0);
    n.outputs = {g.add_value(out)};
    g.add_node(n);
    return n.outputs[0];
}

graph::Graph mlp_graph() {
    graph::Graph g;
    g.name = "mlp";
    int x = add_value(g, "x", f32({4, 16}), 0, true);
    int w1 = add_value(g, "w1", f32({16, 32}), 11, false);
    int b1 = add_value(g, "b1", f32({32}), 12, false);
    int w2 = add_value(g, "w2", f32({32, 8}), 13, false);
    int b2 = add_value(g, "b2", f32({8}), 14, false);
    int h = add_node(g, "nn.matmul", "mm1", {x, w1});
    h = add_node(g, "add", "bias1", {h, b1});
    h = add_node(g, "nn.relu", "relu1", {h});
    h = add_node(g, "nn.matmul", "mm2", {h, w2});
    g.outputs = {add_node(g, "add", "bias2", {h, b2})};
    graph::verify(g);
    return g;
}

// One exported package shared by the tests (export links with cc: do it once).
struct Exported {
    graph::Graph g = mlp_graph();
    std::shared_ptr<driver::CompiledModel> model = driver::build(g);
    fs::path path = fs::temp_directory_path() / ("tessera_pkg_test_" + std::to_string(getpid()) + ".tar");
    std::string bytes;
    Exported() {
        ExportOptions o;
        o.passes = {"fold_constants"};
        export_package(*model, o, path.string());
        bytes = read_file_bytes(path.string());
    }
    ~Exported() { fs::remove(path); }
};
Exported& exported() {
    static Exported e;
    return e;
}

TEST(Package, RoundTripGivesTheJitsOutputsBitForBit) {
    Exported& e = exported();
    std::vector<NDArray> in = driver::random_inputs(e.g, 5);
    std::vector<NDArray> jit = e.model->run(in);
    std::vector<NDArray> ref = driver::interpret_graph(e.g, in);
    std::shared_ptr<LoadedPackage> pkg = load_package(e.path.string());
    EXPECT_EQ(pkg->name, "mlp");
    EXPECT_EQ(pkg->executor->input_names(), std::vector<std::string>{"x"});
    EXPECT_EQ(pkg->executor->output_names(), std::vector<std::string>{"bias2_out"});
    EXPECT_EQ(pkg->node_names.size(), 5u);
    pkg->executor->set_input("x", in[0]);
    pkg->executor->run();
    NDArray out = pkg->executor->get_output("bias2_out");
    ASSERT_EQ(out.type(), jit[0].type());
    EXPECT_EQ(std::memcmp(out.raw(), jit[0].raw(), out.num_bytes()), 0);
    EXPECT_TRUE(runtime::allclose(out, ref[0], 1e-4, 1e-5));
    EXPECT_LT(pkg->executor->peak_bytes(), pkg->executor->naive_bytes() + 1);
    json meta = json::parse(pkg->meta_json);
    EXPECT_EQ(meta["format_version"], kFormatVersion);
    EXPECT_EQ(meta["target"], "llvm");
    EXPECT_EQ(meta["passes"], json::array({"fold_constants"}));
    EXPECT_EQ(meta["members"]["lib.so"].get<std::string>().size(), 64u);
}

TEST(Package, MetaListsTheKernelsAHandScheduleScheduledWithTheirTraces) {
    // The default schedule of mm1's kernel given back as a hand trace: the
    // package says which kernel it scheduled, from which node, with which
    // steps, and how many kernels each source scheduled.
    graph::Graph g = mlp_graph();
    auto plain = driver::build(g);
    const int k = plain->kernel_of("mm1");
    ASSERT_GE(k, 0);
    driver::BuildOptions o;
    o.kernel_traces["mm1"] = plain->schedules[size_t(k)].trace;
    auto model = driver::build(g, o);
    ASSERT_EQ(model->schedules[size_t(model->kernel_of("mm1"))].source, "hand");
    ExportOptions eo;
    std::string meta_text;
    package_archive(*model, eo, meta_text);
    json meta = json::parse(meta_text);
    ASSERT_EQ(meta["schedules"].size(), 1u);
    const json& entry = meta["schedules"][0];
    EXPECT_EQ(entry["kernel"], model->kernels[size_t(model->kernel_of("mm1"))]->name);
    EXPECT_EQ(entry["source"], "hand");
    EXPECT_EQ(entry["node"], "mm1");
    EXPECT_EQ(schedule::Trace::from_json(entry["trace"].dump()).steps,
              o.kernel_traces["mm1"].steps);
    EXPECT_EQ(meta["schedule_sources"]["hand"], 1);
    EXPECT_EQ(meta["schedule_sources"]["default"].get<size_t>() + 1, model->kernels.size());
    // Without hand schedules or records, none is listed.
    std::string plain_text;
    package_archive(*plain, eo, plain_text);
    EXPECT_TRUE(json::parse(plain_text)["schedules"].empty());
}

TEST(Package, VerifiedWithoutLoadingItsCodeItHasNoExecutor) {
    Exported& e = exported();
    std::shared_ptr<LoadedPackage> pkg = load_package_bytes(e.bytes, "mlp.tar", /*load_code=*/false);
    EXPECT_EQ(pkg->executor, nullptr);  // lib.so was not opened
    EXPECT_EQ(pkg->name, "mlp");
    EXPECT_EQ(pkg->input_names, std::vector<std::string>{"x"});
    EXPECT_EQ(pkg->output_names, std::vector<std::string>{"bias2_out"});
    EXPECT_EQ(pkg->node_names.size(), 5u);
    // Everything else is still checked: a damaged params.bin checksum is refused.
    std::vector<TarMember> members = read_tar(e.bytes, "mlp.tar");
    for (TarMember& m : members)
        if (m.name == kParamsMember) m.data[0] = char(m.data[0] ^ 1);
    EXPECT_THROW(load_package_bytes(write_tar(members), "mlp.tar", false), UserError);
}

TEST(Package, CInterfaceLoadsAndRuns) {
    Exported& e = exported();
    std::vector<NDArray> in = driver::random_inputs(e.g, 9);
    std::vector<NDArray> jit = e.model->run(in);
    TesseraModel* m = tessera_model_load(e.path.c_str());
    ASSERT_NE(m, nullptr) << tessera_last_error();
    EXPECT_EQ(tessera_model_num_inputs(m), 1);
    EXPECT_STREQ(tessera_model_input_dtype(m, 0), "float32");
    ASSERT_EQ(tessera_model_input_ndim(m, 0), 2);
    EXPECT_EQ(tessera_model_input_shape(m, 0)[1], 16);
    EXPECT_EQ(tessera_model_set_input_by_name(m, "x", in[0].raw(), in[0].num_bytes()), TESSERA_OK);
    EXPECT_EQ(tessera_model_set_num_threads(m, 1), TESSERA_OK);
    EXPECT_EQ(tessera_model_run(m), TESSERA_OK);
    std::vector<float> out(size_t(tessera_model_output_bytes(m, 0) / 4));
    EXPECT_EQ(tessera_model_get_output(m, 0, out.data(), out.size() * 4), TESSERA_OK);
    EXPECT_EQ(std::memcmp(out.data(), jit[0].raw(), jit[0].num_bytes()), 0);
    EXPECT_EQ(tessera_model_set_input(m, 0, in[0].raw(), 3), TESSERA_USER_ERROR);
    EXPECT_NE(std::string(tessera_last_error()).find("takes 256 bytes"), std::string::npos);
    const char* prof = tessera_model_profile_json(m, 2);
    ASSERT_NE(prof, nullptr);
    int calls = 0;
    for (const json& k : json::parse(prof)) calls += k["calls"].get<int>();
    EXPECT_EQ(size_t(calls), e.model->executor->calls().size());
    tessera_model_free(m);
    EXPECT_EQ(tessera_model_load("/no/such/package.tar"), nullptr);
    EXPECT_NE(std::string(tessera_last_error()).find("/no/such/package.tar"), std::string::npos);
}

// Rewrites one member and returns the new archive.
std::string with_member(const std::string& bytes, const std::string& name, const std::string* data) {
    std::vector<TarMember> ms = read_tar(bytes, "x");
    std::vector<TarMember> out;
    for (auto& m : ms) {
        if (m.name != name) out.push_back(m);
        else if (data) out.push_back({name, *data});
    }
    return write_tar(out);
}

std::string meta_of(const std::string& bytes) {
    for (auto& m : read_tar(bytes, "x"))
        if (m.name == kMetaMember) return m.data;
    return "";
}

void expect_refused(const std::string& bytes, const std::string& needle) {
    try {
        load_package_bytes(bytes, "model.tar");
        ADD_FAILURE() << "package loaded, expected an error containing '" << needle << "'";
    } catch (const UserError& err) {
        std::string msg = err.what();
        EXPECT_NE(msg.find("model.tar"), std::string::npos) << msg;
        EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    }
}

TEST(PackageCorrupt, BadChecksumOfEachMember) {
    const std::string& b = exported().bytes;
    for (const char* name : {kLibMember, kGraphMember, kParamsMember}) {
        std::string data;
        for (auto& m : read_tar(b, "x"))
            if (m.name == name) data = m.data;
        ASSERT_FALSE(data.empty()) << name;
        data[data.size() / 2] ^= 0x10;
        expect_refused(with_member(b, name, &data), std::string("checksum mismatch in member '") + name);
    }
}

TEST(PackageCorrupt, MissingMember) {
    const std::string& b = exported().bytes;
    for (const char* name : {kLibMember, kGraphMember, kParamsMember, kMetaMember})
        expect_refused(with_member(b, name, nullptr), std::string("no member '") + name + "'");
}

TEST(PackageCorrupt, NewerFormatVersion) {
    const std::string& b = exported().bytes;
    json meta = json::parse(meta_of(b));
    meta["format_version"] = kFormatVersion + 1;
    std::string text = meta.dump();
    expect_refused(with_member(b, kMetaMember, &text), "newer than this runtime reads");
}

TEST(PackageCorrupt, CpuFeaturesTheHostLacks) {
    const std::string& b = exported().bytes;
    json meta = json::parse(meta_of(b));
    // A feature no runtime can check (from a newer engine or another ISA).
    meta["cpu_features"].push_back("quantum-fma");
    std::string text = meta.dump();
    expect_refused(with_member(b, kMetaMember, &text), "features this CPU lacks (quantum-fma");
    // A real feature this host does not have, if there is one.
    for (const std::string& f : checked_cpu_features()) {
        if (host_has_cpu_feature(f)) continue;
        json m2 = json::parse(meta_of(b));
        m2["cpu_features"].push_back(f);
        text = m2.dump();
        expect_refused(with_member(b, kMetaMember, &text), "features this CPU lacks (" + f);
        break;
    }
}

TEST(PackageCorrupt, NotATarOrTruncated) {
    const std::string& b = exported().bytes;
    expect_refused("ONNX? no.", "not a complete tar archive");
    expect_refused(b.substr(0, b.size() / 2), "model.tar");
    std::string meta = "{not json";
    expect_refused(with_member(b, kMetaMember, &meta), "not valid JSON");
}

TEST(PackageFormat, RecordsHostFeaturesItCanCheck) {
    std::vector<std::string> f = checked_subset("+avx2,-avx512f,+fma,+64bit,+sse4.2");
    EXPECT_EQ(f, (std::vector<std::string>{"avx2", "fma", "sse4.2"}));
    EXPECT_TRUE(host_has_cpu_feature("sse2"));
    EXPECT_FALSE(host_has_cpu_feature("quantum-fma"));
}

}  // namespace
}  // namespace tessera::package
