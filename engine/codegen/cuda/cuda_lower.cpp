// Host/device split of a lowered PrimFunc: each top-level statement becomes a
// kernel, thread-bound loop extents become launch dimensions, global
// allocations become workspaces, and every kernel is checked against the
// device limits.
#include "engine/codegen/cuda/cuda_lower.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/insert_shared_syncs.h"
#include "engine/tir/passes/pass_manager.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::codegen {

using namespace tir;

namespace {

const char* const kSlotNames[9] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                   "threadIdx.x", "threadIdx.y", "threadIdx.z",
                                   "vthread.x",   "vthread.y",   "vthread.z"};

int64_t buffer_bytes(const Buffer& b, const std::string& where) {
    int64_t n = 1;
    for (const Expr& d : b->shape) {
        const int64_t* c = as_const_int(d);
        TS_USER_CHECK(c) << where << ": " << b->scope << " buffer '" << b->name
                         << "' needs a constant shape to be allocated on the GPU";
        n *= *c;
    }
    return n * b->dtype.bytes() * b->dtype.lanes;
}

// Launch extents and on-chip memory of one kernel body.
class KernelScan : public IRVisitor {
public:
    explicit KernelScan(std::string where) : m_where(std::move(where)) {}
    std::array<int64_t, 9> extent{};
    int64_t shared_bytes = 0, local_bytes = 0;

protected:
    using IRVisitor::visit;
    void visit(const For* op) override {
        if (op->kind != ForKind::ThreadBinding) return IRVisitor::visit(op);
        int slot = thread_tag_slot(op->thread_tag);
        TS_USER_CHECK(slot >= 0) << m_where << ": loop '" << op->loop_var.name()
                                 << "' is bound to unknown thread axis '" << op->thread_tag
                                 << "'; use blockIdx.x|y|z, threadIdx.x|y|z or vthread.x|y|z";
        const int64_t* ext = as_const_int(op->extent);
        TS_USER_CHECK(ext && *ext > 0)
            << m_where << ": loop '" << op->loop_var.name() << "' bound to " << op->thread_tag
            << " needs a constant positive extent";
        // A loop bound to a threadIdx axis inside another one bound to the
        // same axis (a cooperative fetch) is the same thread index in the
        // kernel: it needs the same extent and no use of the outer loop.
        auto outer = m_active.find(slot);
        if (outer != m_active.end()) {
            const For* o = outer->second;
            TS_USER_CHECK(slot >= 3 && slot < 6 && is_const_int(o->extent, *ext) &&
                          is_const_int(o->min, 0) && is_const_int(op->min, 0))
                << m_where << ": loop '" << op->loop_var.name() << "' is bound to "
                << op->thread_tag << " inside another loop bound to the same axis ('"
                << o->loop_var.name()
                << "'); only a threadIdx loop with the same extent and start may be nested "
                   "like that (a cooperative fetch)";
            bool uses_outer = false;
            post_order_visit(op->body, [&](const Object* n) {
                uses_outer |= n == static_cast<const Object*>(o->loop_var.get());
            });
            TS_USER_CHECK(!uses_outer)
                << m_where << ": loop '" << op->loop_var.name() << "' is bound to "
                << op->thread_tag << " inside another loop bound to the same axis ('"
                << o->loop_var.name() << "') and its body uses the outer loop's variable";
            return IRVisitor::visit(op);
        }
        extent[size_t(slot)] = std::max(extent[size_t(slot)], *ext);
        m_active[slot] = op;
        IRVisitor::visit(op);
        m_active.erase(slot);
    }
    void visit(const Allocate* op) override {
        const std::string& scope = op->buffer->scope;
        TS_USER_CHECK(scope == "shared" || scope == "local")
            << m_where << ": " << scope << " buffer '" << op->buffer->name
            << "' is allocated inside a kernel; only shared and local buffers can be";
        int64_t bytes = buffer_bytes(op->buffer, m_where);
        (scope == "shared" ? shared_bytes : local_bytes) += bytes;
        IRVisitor::visit(op);
    }

private:
    std::string m_where;
    std::map<int, const For*> m_active;  // slot -> enclosing loop bound to it
};

std::string dims_text(const std::array<int64_t, 3>& d) {
    std::ostringstream os;
    os << "(" << d[0] << ", " << d[1] << ", " << d[2] << ")";
    return os.str();
}

void verify_limits(const CudaKernel& k, const std::string& where, const CudaLimits& lim) {
    int64_t threads = k.block[0] * k.block[1] * k.block[2];
    TS_USER_CHECK(threads <= lim.max_threads_per_block)
        << where << ": " << threads << " threads per block " << dims_text(k.block)
        << " exceed the device limit of " << lim.max_threads_per_block
        << "; bind a smaller loop to threadIdx (split it first)";
    for (int i = 0; i < 3; ++i) {
        TS_USER_CHECK(k.block[size_t(i)] <= lim.max_block_dims[size_t(i)])
            << where << ": threadIdx."
            << "xyz"[i] << " extent " << k.block[size_t(i)] << " exceeds the device limit of "
            << lim.max_block_dims[size_t(i)];
        TS_USER_CHECK(k.grid[size_t(i)] <= lim.max_grid_dims[size_t(i)])
            << where << ": blockIdx."
            << "xyz"[i] << " extent " << k.grid[size_t(i)] << " exceeds the device limit of "
            << lim.max_grid_dims[size_t(i)];
    }
    TS_USER_CHECK(k.shared_bytes <= lim.max_shared_bytes)
        << where << ": " << k.shared_bytes
        << " bytes of shared memory per block exceed the limit of " << lim.max_shared_bytes
        << " bytes (" << lim.max_shared_bytes / 1024
        << " KiB); use smaller tiles for cache_read/cache_write to \"shared\"";
    int64_t registers = (k.local_bytes + 3) / 4;
    TS_USER_CHECK(registers <= lim.max_registers_per_thread)
        << where << ": local buffers need " << registers
        << " registers per thread, more than the limit of " << lim.max_registers_per_thread
        << "; use smaller tiles for cache_read/cache_write to \"local\"";
}

class Splitter {
public:
    Splitter(const PrimFunc& f, const CudaLimits& limits) : m_f(f), m_limits(limits) {
        m_out.func.name = f->name;
        m_out.func.params = f->params;
    }

    LoweredFunc run() {
        split(m_f->body);
        size_t n = m_out.kernels.size();
        for (size_t i = 0; i < n; ++i) {
            DeviceKernel& k = m_out.kernels[i];
            k.info.name = m_f->name + "_kernel" + (n == 1 ? "" : std::to_string(i));
            verify_limits(k.info, "function '" + m_f->name + "', kernel '" + k.info.name + "'",
                          m_limits);
            m_out.func.kernels.push_back(k.info);
        }
        return std::move(m_out);
    }

private:
    void split(const Stmt& s) {
        if (const Allocate* a = s.as<Allocate>(); a && a->buffer->scope == "global") {
            m_out.func.workspaces.push_back(a->buffer);
            return split(a->body);
        }
        // A shared/local buffer allocated above several kernels (a cache
        // stage in the root block) is allocated in each kernel that uses it.
        if (const Allocate* a = s.as<Allocate>()) {
            m_pending.push_back(a->buffer);
            split(a->body);
            m_pending.pop_back();
            return;
        }
        if (const SeqStmt* seq = s.as<SeqStmt>()) {
            for (const Stmt& c : seq->seq) split(c);
            return;
        }
        if (const Evaluate* e = s.as<Evaluate>(); e && as_const_int(e->value)) return;
        make_kernel(s);
    }

    int arg_index(const Buffer& b) const {
        for (size_t i = 0; i < m_f->params.size(); ++i)
            if (m_f->params[i].same_as(b)) return int(i);
        const auto& ws = m_out.func.workspaces;
        for (size_t i = 0; i < ws.size(); ++i)
            if (ws[i].same_as(b)) return int(m_f->params.size() + i);
        return -1;
    }

    void make_kernel(Stmt s) {
        for (auto it = m_pending.rbegin(); it != m_pending.rend(); ++it) {
            bool uses = false;
            post_order_visit(s, [&](const Object* n) {
                if (auto* l = dynamic_cast<const BufferLoad*>(n)) uses |= l->buffer.same_as(*it);
                if (auto* st = dynamic_cast<const BufferStore*>(n)) uses |= st->buffer.same_as(*it);
            });
            if (uses) s = Allocate::make(*it, s);
        }
        std::string where =
            "function '" + m_f->name + "', kernel " + std::to_string(m_out.kernels.size());
        KernelScan scan(where);
        scan.visit_stmt(s);
        DeviceKernel k;
        for (int i = 0; i < 3; ++i) {
            k.info.grid[size_t(i)] = std::max<int64_t>(1, scan.extent[size_t(i)]);
            k.info.block[size_t(i)] = std::max<int64_t>(1, scan.extent[size_t(3 + i)]);
        }
        k.info.shared_bytes = scan.shared_bytes;
        k.info.local_bytes = scan.local_bytes;
        k.body = insert_shared_syncs(s);

        std::map<int, bool> used;  // arg index -> written
        post_order_visit(s, [&](const Object* n) {
            Buffer b;
            bool store = false;
            if (n->node_type == NodeType::BufferLoad) {
                b = static_cast<const BufferLoad*>(n)->buffer;
            } else if (n->node_type == NodeType::BufferStore) {
                b = static_cast<const BufferStore*>(n)->buffer;
                store = true;
            } else {
                return;
            }
            if (b->scope != "global") return;
            int idx = arg_index(b);
            TS_CHECK(idx >= 0) << where << ": global buffer '" << b->name
                               << "' is neither a parameter nor a workspace";
            used[idx] = used[idx] || store;
        });
        for (auto [idx, written] : used) {
            k.info.args.push_back(idx);
            size_t np = m_f->params.size();
            k.arg_buffers.push_back(size_t(idx) < np ? m_f->params[size_t(idx)]
                                                     : m_out.func.workspaces[size_t(idx) - np]);
            k.arg_written.push_back(written);
        }
        m_out.kernels.push_back(std::move(k));
    }

    const PrimFunc& m_f;
    const CudaLimits& m_limits;
    LoweredFunc m_out;
    std::vector<Buffer> m_pending;  // on-chip buffers allocated above the current statement
};

}  // namespace

int thread_tag_slot(const std::string& tag) {
    for (int i = 0; i < 9; ++i)
        if (tag == kSlotNames[i]) return i;
    return -1;
}

LoweredFunc lower_to_kernels(const PrimFunc& f, const CudaLimits& limits) {
    TS_CHECK(f.defined()) << "CUDA codegen: undefined PrimFunc";
    return Splitter(lower_for_codegen(f, cuda_lowering_pipeline()), limits).run();
}

}  // namespace tessera::codegen
