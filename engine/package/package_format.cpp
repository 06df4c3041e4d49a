// CPU feature names and their host check (GCC's __builtin_cpu_supports).
#include "engine/package/package_format.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "0.0.0"
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tessera::package {

namespace {

// __builtin_cpu_supports takes only string literals, hence one lambda each.
const std::map<std::string, std::function<bool()>>& feature_table() {
    static const std::map<std::string, std::function<bool()>> table = {
#if defined(__x86_64__) || defined(__i386__)
        {"sse", [] { return bool(__builtin_cpu_supports("sse")); }},
        {"sse2", [] { return bool(__builtin_cpu_supports("sse2")); }},
        {"sse3", [] { return bool(__builtin_cpu_supports("sse3")); }},
        {"ssse3", [] { return bool(__builtin_cpu_supports("ssse3")); }},
        {"sse4.1", [] { return bool(__builtin_cpu_supports("sse4.1")); }},
        {"sse4.2", [] { return bool(__builtin_cpu_supports("sse4.2")); }},
        {"sse4a", [] { return bool(__builtin_cpu_supports("sse4a")); }},
        {"popcnt", [] { return bool(__builtin_cpu_supports("popcnt")); }},
        {"avx", [] { return bool(__builtin_cpu_supports("avx")); }},
        {"avx2", [] { return bool(__builtin_cpu_supports("avx2")); }},
        {"fma", [] { return bool(__builtin_cpu_supports("fma")); }},
        {"fma4", [] { return bool(__builtin_cpu_supports("fma4")); }},
        {"xop", [] { return bool(__builtin_cpu_supports("xop")); }},
        {"bmi", [] { return bool(__builtin_cpu_supports("bmi")); }},
        {"bmi2", [] { return bool(__builtin_cpu_supports("bmi2")); }},
        // clang before 16 has no "f16c" for __builtin_cpu_supports: CPUID leaf 1, ECX bit 29.
        {"f16c", [] { unsigned a, b, c, d; return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C); }},
        {"aes", [] { return bool(__builtin_cpu_supports("aes")); }},
        {"pclmul", [] { return bool(__builtin_cpu_supports("pclmul")); }},
        {"avx512f", [] { return bool(__builtin_cpu_supports("avx512f")); }},
        {"avx512vl", [] { return bool(__builtin_cpu_supports("avx512vl")); }},
        {"avx512bw", [] { return bool(__builtin_cpu_supports("avx512bw")); }},
        {"avx512dq", [] { return bool(__builtin_cpu_supports("avx512dq")); }},
        {"avx512cd", [] { return bool(__builtin_cpu_supports("avx512cd")); }},
        {"avx512vnni", [] { return bool(__builtin_cpu_supports("avx512vnni")); }},
        {"avx512bf16", [] { return bool(__builtin_cpu_supports("avx512bf16")); }},
        {"avx512vbmi", [] { return bool(__builtin_cpu_supports("avx512vbmi")); }},
        {"avx512ifma", [] { return bool(__builtin_cpu_supports("avx512ifma")); }},
#endif
    };
    return table;
}

}  // namespace

const std::vector<std::string>& checked_cpu_features() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& [name, fn] : feature_table()) v.push_back(name);
        return v;
    }();
    return names;
}

std::vector<std::string> checked_subset(const std::string& llvm_feature_list) {
    std::vector<std::string> out;
    std::stringstream ss(llvm_feature_list);
    std::string item;
    while (std::getline(ss, item, ',')) {
        while (!item.empty() && item.front() == ' ') item.erase(item.begin());
        if (item.size() < 2 || item[0] != '+') continue;
        std::string name = item.substr(1);
        if (feature_table().count(name)) out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

bool host_has_cpu_feature(const std::string& llvm_name) {
    auto it = feature_table().find(llvm_name);
    return it != feature_table().end() && it->second();
}

const char* engine_version() { return TESSERA_VERSION; }

}  // namespace tessera::package
