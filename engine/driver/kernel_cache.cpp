// The compiled-kernel cache (see kernel_cache.h).
#include "engine/driver/kernel_cache.h"

#include <cstdio>

#include "engine/tir/structural_equal.h"

namespace tessera::driver {

std::string kernel_cache_key(const tir::PrimFunc& f, const codegen::LlvmOptions& o) {
    char hash[20];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(tir::structural_hash(f)));
    return "O" + std::to_string(o.opt_level) + " threads " + std::to_string(o.threads) +
           (o.fast_math ? " fast-math" : "") + " cpu '" + o.cpu + "' features '" + o.features +
           "' " + hash;
}

std::vector<KernelCache::Entry> KernelCache::get_or_compile(const std::vector<tir::PrimFunc>& funcs,
                                                            const codegen::LlvmOptions& options,
                                                            std::vector<bool>* compiled) {
    std::vector<std::string> keys;
    for (const tir::PrimFunc& f : funcs) keys.push_back(kernel_cache_key(f, options));
    std::vector<Entry> out(funcs.size());
    std::vector<bool> fresh(funcs.size(), false);
    std::vector<size_t> same_as(funcs.size(), SIZE_MAX);  // an equal function compiled by this call
    std::map<std::string, size_t> pending;                // key -> the function compiled for it
    std::vector<tir::PrimFunc> to_compile;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        for (size_t i = 0; i < funcs.size(); ++i) {
            auto it = m_entries.find(keys[i]);
            auto p = pending.find(keys[i]);
            if (it != m_entries.end() && tir::structural_equal(it->second.func, funcs[i])) {
                out[i] = it->second;
            } else if (p != pending.end() && tir::structural_equal(funcs[p->second], funcs[i])) {
                same_as[i] = p->second;  // the same kernel twice in one build: compiled once
            } else {
                // A hash collision with a different kernel is compiled but not cached.
                if (it == m_entries.end() && p == pending.end()) pending[keys[i]] = i;
                fresh[i] = true;
                to_compile.push_back(funcs[i]);
            }
        }
    }
    if (!to_compile.empty()) {
        // Compiled outside the lock: LLVM takes the time, other builds may look up meanwhile.
        std::shared_ptr<codegen::JitModule> module = codegen::jit_compile(to_compile, options);
        std::lock_guard<std::mutex> lock(m_mutex);
        for (size_t i = 0; i < funcs.size(); ++i) {
            if (!fresh[i]) continue;
            out[i] = Entry{module, module->lookup(funcs[i]->name), funcs[i]};
            if (auto p = pending.find(keys[i]); p != pending.end() && p->second == i)
                m_entries.emplace(keys[i], out[i]);  // another build may have added it meanwhile
        }
    }
    for (size_t i = 0; i < funcs.size(); ++i)
        if (same_as[i] != SIZE_MAX) out[i] = out[same_as[i]];
    if (compiled) *compiled = fresh;
    return out;
}

size_t KernelCache::size() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_entries.size();
}

}  // namespace tessera::driver
