// The reference runners of `bench model --compare` (see reference_runners.h).
#include "bench/cli/reference_runners.h"

namespace tessera::cli {

const char* const kOrtRunner = R"PY(
import json, os, sys, time
import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
model_path, folder, threads, repeat, provider = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
                                                 int(sys.argv[4]), sys.argv[5])
def load_inputs(sess):
    return [numpy_helper.to_array(onnx.load_tensor(os.path.join(folder, f"input_{i}.pb")))
            for i in range(len(sess.get_inputs()))]
so = ort.SessionOptions()
so.intra_op_num_threads = threads
so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
if provider == "cuda":
    if hasattr(ort, "preload_dlls"):  # CUDA/cuDNN from the nvidia-* wheels
        try:
            ort.preload_dlls()
        except Exception:
            pass
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        print("onnxruntime " + ort.__version__ + " has no CUDAExecutionProvider (providers: " +
              ", ".join(ort.get_available_providers()) + ")", file=sys.stderr)
        sys.exit(3)
    # fp32 as ours: no TF32 tensor cores in cuBLAS/cuDNN.
    try:
        sess = ort.InferenceSession(model_path, so, providers=[
            ("CUDAExecutionProvider", {"device_id": 0, "use_tf32": 0}), "CPUExecutionProvider"])
    except Exception:
        sess = ort.InferenceSession(model_path, so, providers=[
            ("CUDAExecutionProvider", {"device_id": 0}), "CPUExecutionProvider"])
    if sess.get_providers()[0] != "CUDAExecutionProvider":
        print("onnxruntime's CUDAExecutionProvider did not load (CUDA 12 / cuDNN 9 libraries "
              "missing?); the session runs on " + ", ".join(sess.get_providers()), file=sys.stderr)
        sys.exit(3)
    # Inputs and outputs stay on the device, as ours do while timed.
    io = sess.io_binding()
    device_inputs = [ort.OrtValue.ortvalue_from_numpy(a, "cuda", 0) for a in load_inputs(sess)]
    for inp, v in zip(sess.get_inputs(), device_inputs):
        io.bind_ortvalue_input(inp.name, v)
    for out in sess.get_outputs():
        io.bind_output(out.name, "cuda")
    run = lambda: sess.run_with_iobinding(io)
    run()
    outs = io.copy_outputs_to_cpu()
    for _ in range(3):
        run()  # warm-up: cuDNN algorithm search, allocator
else:
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    feeds = {inp.name: a for inp, a in zip(sess.get_inputs(), load_inputs(sess))}
    run = lambda: sess.run(None, feeds)
    outs = run()
for i, y in enumerate(outs):
    onnx.save_tensor(numpy_helper.from_array(np.ascontiguousarray(y), f"out{i}"),
                     os.path.join(folder, f"ref_output_{i}.pb"))
times = []
for _ in range(repeat):
    t0 = time.perf_counter()
    run()
    times.append((time.perf_counter() - t0) * 1e3)
times.sort()
n = len(times)
median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
print(json.dumps({"median_ms": median, "min_ms": times[0], "repeat": n,
                  "name": "onnxruntime " + ort.__version__ + " " + sess.get_providers()[0]}))
)PY";

const char* const kTorchRunner = R"PY(
import json, os, sys, time
import numpy as np
import onnx
from onnx import helper, numpy_helper
try:
    import torch
    import torch.nn.functional as F
except Exception as e:
    print("PyTorch is not importable: " + str(e), file=sys.stderr)
    sys.exit(3)
model_path, folder, threads, repeat, device = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
                                               int(sys.argv[4]), sys.argv[5])
if device == "cuda" and not torch.cuda.is_available():
    print("PyTorch " + torch.__version__ + " sees no CUDA device", file=sys.stderr)
    sys.exit(3)
torch.set_num_threads(threads)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
dev = torch.device(device)
model = onnx.load(model_path)
graph = model.graph

def unsupported(node, why):
    print(f"the PyTorch reference cannot run node '{node.name}' ({node.op_type}): {why}",
          file=sys.stderr)
    sys.exit(4)

def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}

def sym_pads(node, pads, nd):
    if pads is None:
        return [0] * nd
    if list(pads[:nd]) != list(pads[nd:]):
        unsupported(node, "asymmetric pads " + str(list(pads)))
    return list(pads[:nd])

def no_auto_pad(node, a):
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        unsupported(node, "auto_pad")

def conv(node, a, x, w, b=None):
    no_auto_pad(node, a)
    nd = w.dim() - 2
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}.get(nd) or unsupported(node, f"{nd}-d")
    return fn(x, w, b, stride=a.get("strides", [1] * nd),
              padding=sym_pads(node, a.get("pads"), nd), dilation=a.get("dilations", [1] * nd),
              groups=a.get("group", 1))

def pool(node, a, x, kind):
    no_auto_pad(node, a)
    k = a["kernel_shape"]
    nd = len(k)
    if nd != 2:
        unsupported(node, f"{nd}-d pooling")
    pads = sym_pads(node, a.get("pads"), nd)
    s = a.get("strides", [1] * nd)
    ceil = bool(a.get("ceil_mode", 0))
    if kind == "max":
        return F.max_pool2d(x, k, s, pads, a.get("dilations", [1] * nd), ceil)
    return F.avg_pool2d(x, k, s, pads, ceil, bool(a.get("count_include_pad", 0)))

def gemm(node, a, x, w, c=None):
    x = x.t() if a.get("transA", 0) else x
    w = w.t() if a.get("transB", 0) else w
    y = a.get("alpha", 1.0) * (x @ w)
    return y if c is None else y + a.get("beta", 1.0) * c

def clip(node, a, x, lo=None, hi=None):
    lo = a.get("min") if lo is None else lo.item()
    hi = a.get("max") if hi is None else hi.item()
    return torch.clamp(x, lo, hi)

def reshape(node, a, x, shape):
    s = [int(v) for v in shape.tolist()]
    s = [x.shape[i] if v == 0 and not a.get("allowzero", 0) else v for i, v in enumerate(s)]
    return x.reshape(s)

OPS = {
    "Conv": conv,
    "MaxPool": lambda n, a, x: pool(n, a, x, "max"),
    "AveragePool": lambda n, a, x: pool(n, a, x, "avg"),
    "GlobalAveragePool": lambda n, a, x: x.mean(dim=tuple(range(2, x.dim())), keepdim=True),
    "Flatten": lambda n, a, x: x.reshape(int(np.prod(x.shape[:a.get("axis", 1)])), -1),
    "Gemm": gemm,
    "MatMul": lambda n, a, x, y: torch.matmul(x, y),
    "Relu": lambda n, a, x: F.relu(x),
    "Sigmoid": lambda n, a, x: torch.sigmoid(x),
    "Tanh": lambda n, a, x: torch.tanh(x),
    "Erf": lambda n, a, x: torch.erf(x),
    "Sqrt": lambda n, a, x: torch.sqrt(x),
    "Clip": clip,
    "Add": lambda n, a, x, y: x + y,
    "Sub": lambda n, a, x, y: x - y,
    "Mul": lambda n, a, x, y: x * y,
    "Div": lambda n, a, x, y: x / y,
    "Pow": lambda n, a, x, y: torch.pow(x, y),
    "Softmax": lambda n, a, x: torch.softmax(x, a.get("axis", -1)),
    "Transpose": lambda n, a, x: x.permute(*(a.get("perm") or range(x.dim() - 1, -1, -1))),
    "Reshape": reshape,
    "Concat": lambda n, a, *xs: torch.cat(xs, a["axis"]),
    "Identity": lambda n, a, x: x,
    "ReduceMean": lambda n, a, x, axes=None: x.mean(
        dim=tuple(a.get("axes") or axes.tolist()), keepdim=bool(a.get("keepdims", 1))),
}

env = {}
for t in graph.initializer:
    env[t.name] = torch.from_numpy(np.ascontiguousarray(numpy_helper.to_array(t))).to(dev)
for node in graph.node:
    if node.op_type == "Constant":
        env[node.output[0]] = torch.from_numpy(
            np.ascontiguousarray(numpy_helper.to_array(attrs(node)["value"]))).to(dev)
    elif node.domain not in ("", "ai.onnx") or node.op_type not in OPS:
        unsupported(node, "op not translated")
inputs = [i.name for i in graph.input if i.name not in env]
static_in = [torch.from_numpy(np.ascontiguousarray(numpy_helper.to_array(
    onnx.load_tensor(os.path.join(folder, f"input_{i}.pb"))))).to(dev) for i in range(len(inputs))]

def forward():
    values = dict(env)
    values.update(zip(inputs, static_in))
    for node in graph.node:
        if node.op_type == "Constant":
            continue
        args = [values[n] if n else None for n in node.input]
        while args and args[-1] is None:
            args.pop()
        values[node.output[0]] = OPS[node.op_type](node, attrs(node), *args)
    return [values[o.name] for o in graph.output]

mode = "eager"
with torch.inference_mode():
    if device == "cuda":
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                forward()  # warm-up: cuDNN algorithm search, allocator
        torch.cuda.current_stream().wait_stream(side)
        try:
            cuda_graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(cuda_graph):
                static_out = forward()
            run = cuda_graph.replay
            mode = "CUDA graph"
        except Exception as e:
            print("CUDA graph capture failed (" + str(e) + "); timing eager launches",
                  file=sys.stderr)
            static_out = None
        if static_out is None:
            holder = {}
            def run():
                holder["out"] = forward()
            run()
            outs = holder["out"]
        else:
            run()
            outs = static_out
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(repeat):
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        lib = f"cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}"
    else:
        run = forward
        outs = forward()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1e3)
        lib = f"CPU, {threads} thread(s)"
    for i, y in enumerate(outs):
        onnx.save_tensor(numpy_helper.from_array(np.ascontiguousarray(y.float().cpu().numpy()), f"out{i}"),
                         os.path.join(folder, f"ref_output_{i}.pb"))
times.sort()
n = len(times)
median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
print(json.dumps({"median_ms": median, "min_ms": times[0], "repeat": n,
                  "name": f"PyTorch {torch.__version__} ({lib}, {mode}, fp32 without TF32)"}))
)PY";

}  // namespace tessera::cli
