"""Record the single-GPU PyTorch traces behind the golden tests of issues #17, #19, #20 and #21.

Run on the GPU machine (PyTorch 2.11, one H100/H200): `OUT=dir python3 record_single_gpu.py [PART ...]`.
Each trace is written as `$OUT/<name>.pt.trace.json.gz`, and beside it what this script knows
independently of the trace (the truth the tests compare with):

- `<name>_flops.json`: FlopCounterMode's per-operator FLOP counts of one step (or one region), the
  counting convention tracelake's performance models follow (issue #17);
- `<name>_memory.json`: per profiled step the allocator's `max_memory_allocated()` /
  `max_memory_reserved()` (peak statistics reset at the start of each step), the allocated and
  reserved bytes when the last profiled step ends, and a summary of `torch.cuda.memory_snapshot()`
  (issue #20);
- `<name>_truth.json`: what the workload did (steps, sleeps, graph replays and the number of
  kernel nodes of the captured graph from cudaGraphGetNodes) (issues #19, #21);
- `<name>_steps.json` (every trace): the ProfilerStep / annotation names found in the exported trace,
  so the truth's step numbers are tied to the trace's own step names.

Parts: ops, gpt, resnet, critpath, graphs, graphs-nsys (the workload that the Nsight recordings run).
"""
import gzip
import json
import os
import shutil
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule
from torch.utils.flop_counter import FlopCounterMode

OUT = os.environ.get("OUT", "/tmp/out")
DEV = "cuda"
GPU = "h100" if "H100" in torch.cuda.get_device_name() else "h200"
os.makedirs(OUT, exist_ok=True)


def write_json(name, obj):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)


def flop_counts(fn):
    """Per-operator FLOPs of one call of fn, as FlopCounterMode counts them (the 'Global' module)."""
    with FlopCounterMode(display=False) as counter:
        fn()
    torch.cuda.synchronize()
    return {str(op): int(n) for op, n in counter.get_flop_counts()["Global"].items()}


def trace_markers(path):
    """Names of ProfilerStep and user annotations in the exported trace, with their start (us)."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    return sorted(
        ({"name": e["name"], "ts_us": e["ts"], "dur_us": e.get("dur")} for e in events
         if e.get("ph") == "X" and e.get("cat") == "user_annotation"),
        key=lambda e: e["ts_us"])


def record(name, step_fn, *, active, warmup=1, memory=True, shapes=True, stack=False, sync_events=True):
    """Profile `warmup` + `active` calls of step_fn(i) (prof.step() between them); write the trace."""
    name = f"torch-2.11_{name}_{GPU}"
    path = f"/tmp/{name}.pt.trace.json"
    config = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True) if sync_events else None
    steps = []
    t0 = time.time()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=warmup, active=active, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(path), record_shapes=shapes,
                 with_stack=stack, profile_memory=memory, experimental_config=config) as prof:
        for i in range(warmup + active):
            torch.cuda.reset_peak_memory_stats()
            step_fn(i)
            steps.append({"profiler_step": i, "profiled": i >= warmup,
                          "max_memory_allocated_bytes": torch.cuda.max_memory_allocated(),
                          "max_memory_reserved_bytes": torch.cuda.max_memory_reserved(),
                          "memory_allocated_at_step_end_bytes": torch.cuda.memory_allocated(),
                          "memory_reserved_at_step_end_bytes": torch.cuda.memory_reserved()})
            prof.step()
    torch.cuda.synchronize()
    write_json(f"{name}_steps.json", trace_markers(path))
    with open(path, "rb") as f, gzip.open(f"{OUT}/{name}.pt.trace.json.gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    raw = os.path.getsize(path)
    os.remove(path)
    print(f"{name}: {raw / 1e6:.1f} MB raw, {os.path.getsize(f'{OUT}/{name}.pt.trace.json.gz') / 1e6:.2f} MB gz, "
          f"{time.time() - t0:.1f} s", flush=True)
    return name, steps


def memory_truth(name, steps):
    segments = torch.cuda.memory_snapshot()
    write_json(f"{name}_memory.json", {
        "how": "torch.cuda.reset_peak_memory_stats() before each step_fn(i); max_memory_allocated/"
               "reserved read after it, before prof.step(). Step i is ProfilerStep#i in the trace; "
               "only profiled steps are in the trace. snapshot: torch.cuda.memory_snapshot() after the "
               "last step (allocated_size / total_size summed over segments).",
        "device_name": torch.cuda.get_device_name(),
        "steps": steps,
        "snapshot_segments": len(segments),
        "snapshot_allocated_bytes": sum(s["allocated_size"] for s in segments),
        "snapshot_reserved_bytes": sum(s["total_size"] for s in segments),
        "snapshot_active_blocks": sum(1 for s in segments for b in s["blocks"] if b["state"] == "active_allocated"),
    })


# ---------------------------------------------------------------- ops: single operators, odd sizes
def part_ops():
    """One region per operator family, each annotated `region:<name>`, FLOPs counted per region."""
    g = torch.Generator(device=DEV).manual_seed(0)

    def r(*shape, dtype=torch.float32, grad=False):
        return torch.randn(*shape, device=DEV, dtype=dtype, generator=g).requires_grad_(grad)

    def gemms(dtype):
        a, b, bias = r(1023, 777, dtype=dtype), r(777, 1001, dtype=dtype), r(1001, dtype=dtype)
        x3, w = r(4, 129, 1000, dtype=dtype), r(999, 1000, dtype=dtype)
        ba, bb, bc = r(12, 257, 63, dtype=dtype), r(12, 63, 255, dtype=dtype), r(12, 257, 255, dtype=dtype)

        def run():
            torch.mm(a, b)
            torch.addmm(bias, a, b)
            torch.bmm(ba, bb)
            torch.baddbmm(bc, ba, bb)
            torch.matmul(x3, w.t())
            F.linear(x3, w, r(999, dtype=dtype))
        return run

    def aligned_bf16():
        a, b = r(4096, 4096, dtype=torch.bfloat16), r(4096, 4096, dtype=torch.bfloat16)
        return lambda: torch.mm(a, b)

    def gemm_backward():
        x, w = r(513, 1000, grad=True), r(999, 1000, grad=True)

        def run():
            F.linear(x, w).sum().backward()
        return run

    def scaled_mm_fp8():
        a = r(1024, 2048).to(torch.float8_e4m3fn)
        b = r(4096, 2048).to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=DEV)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    def convs(dtype):
        x = r(8, 64, 56, 56, dtype=dtype).to(memory_format=torch.channels_last)
        w = r(128, 64, 3, 3, dtype=dtype).to(memory_format=torch.channels_last)
        wg = r(128, 16, 3, 3, dtype=dtype)
        wd = r(64, 1, 5, 5, dtype=dtype)
        wt = r(64, 32, 4, 4, dtype=dtype)

        def run():
            F.conv2d(x, w, padding=1)
            F.conv2d(x, wg, stride=2, padding=2, dilation=2, groups=4)
            F.conv2d(x, wd, padding=2, groups=64)
            F.conv_transpose2d(x, wt, stride=2, padding=1)
        return run

    def conv_backward():
        x = r(8, 64, 56, 56, grad=True)
        w = r(128, 64, 3, 3, grad=True)

        def run():
            F.conv2d(x, w, stride=1, padding=1).sum().backward()
        return run

    def attention(backward, gqa):
        q = r(4, 8, 512, 64, dtype=torch.bfloat16, grad=backward)
        k = r(4, 8, 512, 64, dtype=torch.bfloat16, grad=backward)
        v = r(4, 8, 512, 64, dtype=torch.bfloat16, grad=backward)
        kg = r(4, 2, 512, 64, dtype=torch.bfloat16, grad=backward)
        vg = r(4, 2, 512, 64, dtype=torch.bfloat16, grad=backward)
        qx = r(2, 4, 333, 80, dtype=torch.bfloat16, grad=backward)

        def run():
            if gqa:  # 8 query heads share 2 key/value heads
                outs = [F.scaled_dot_product_attention(q, kg, vg, is_causal=True, enable_gqa=True)]
            else:
                outs = [F.scaled_dot_product_attention(q, k, v),
                        F.scaled_dot_product_attention(q, k, v, is_causal=True),
                        F.scaled_dot_product_attention(qx, qx, qx)]
            if backward:
                sum(o.float().sum() for o in outs).backward()
        return run

    def norms_and_pointwise():
        x = r(64, 1024, 1024, dtype=torch.bfloat16)
        y = r(64, 1024, 1024, dtype=torch.bfloat16)
        w, b = r(1024, dtype=torch.bfloat16), r(1024, dtype=torch.bfloat16)

        def run():
            F.layer_norm(x, (1024,), w, b)
            F.rms_norm(x, (1024,), w)
            torch.softmax(x, dim=-1)
            x + y
            x * y
            F.gelu(x)
            x.sum(dim=-1)
            x.float().mean()
        return run

    regions = {
        "gemm_fp32": (False, gemms(torch.float32)),
        "gemm_tf32": (True, gemms(torch.float32)),
        "gemm_fp16": (False, gemms(torch.float16)),
        "gemm_bf16": (False, gemms(torch.bfloat16)),
        "gemm_bf16_aligned_4096": (False, aligned_bf16()),
        "gemm_fp32_backward": (False, gemm_backward()),
        "conv_fp32": (False, convs(torch.float32)),
        "conv_bf16_channels_last": (False, convs(torch.bfloat16)),
        "conv_fp32_backward": (False, conv_backward()),
        "attention_bf16_forward": (False, attention(False, gqa=False)),
        "attention_bf16_backward": (False, attention(True, gqa=False)),
        "attention_gqa_bf16_forward": (False, attention(False, gqa=True)),
        "norm_softmax_pointwise_bf16": (False, norms_and_pointwise()),
    }
    try:
        regions["scaled_mm_fp8"] = (False, scaled_mm_fp8())
        regions["scaled_mm_fp8"][1]()
    except Exception as e:  # the GPU or build may lack fp8
        print("fp8 _scaled_mm skipped:", e, flush=True)
        regions.pop("scaled_mm_fp8")

    def step(i):
        for region, (tf32, fn) in regions.items():
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            with record_function(f"region:{region}"):
                fn()
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.cuda.synchronize()

    name, steps = record("ops-odd-sizes", step, active=1, warmup=1, memory=False)
    flops = {}
    for region, (tf32, fn) in regions.items():
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        try:
            flops[region] = flop_counts(fn)
        except Exception as e:  # FlopCounterMode has no formula for some shapes (GQA in 2.11)
            flops[region] = {"error": repr(e)}
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    write_json(f"{name}_flops.json", {
        "how": "FlopCounterMode(display=False) around one call of each region's function (the same "
               "function the trace's `region:<name>` annotation wraps in ProfilerStep#1); "
               "get_flop_counts()['Global']. TF32 on only in regions named *tf32.",
        "regions": flops})


# ---------------------------------------------------------------- gpt: transformer training step
class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=8192, d=512, heads=8, layers=6, seq=512):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def part_gpt():
    torch.manual_seed(0)
    model = GPT().to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, 8192, (8, 512), device=DEV)

    def train_step(i=0):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids)
            loss = F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), ids.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()  # host sync each step

    train_step()  # AdamW state exists before profiling: every profiled step allocates the same
    name, steps = record("gpt-train-bf16-sdpa", train_step, active=3, warmup=1, stack=True)
    memory_truth(name, steps)
    write_json(f"{name}_flops.json", {
        "how": "FlopCounterMode around one more train_step (forward, backward, AdamW step) after the "
               "profiled ones; every step is the same work.",
        "model": "GPT: vocab 8192, d 512, 8 heads, 6 layers, seq 512, batch 8, bf16 autocast, SDPA causal",
        "step": flop_counts(train_step)})
    model = opt = None  # frees them before empty_cache (the closures above are not called again)
    torch.cuda.empty_cache()


def part_resnet():
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet50().to(DEV, memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 224, 224, device=DEV).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (32,), device=DEV)

    def train_step(i=0):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    train_step()
    name, steps = record("resnet50-train-bf16-channels-last-shapes", train_step, active=2, warmup=1)
    memory_truth(name, steps)
    write_json(f"{name}_flops.json", {
        "how": "FlopCounterMode around one more train_step after the profiled ones.",
        "model": "torchvision resnet50, batch 32, 224x224, channels_last, bf16 autocast, SGD momentum",
        "step": flop_counts(train_step)})
    model = opt = None  # frees them before empty_cache (the closures above are not called again)
    torch.cuda.empty_cache()


# ---------------------------------------------------------------- critpath: what bounds a step
def mlp(width=2048, layers=6):
    torch.manual_seed(0)
    body = []
    for _ in range(layers):
        body += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*body, nn.Linear(width, 10)).to(DEV)


def part_critpath():
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x_host = torch.randn(512, 2048)
    y = torch.randint(0, 10, (512,), device=DEV)

    def train(x):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    def host_sync(i):
        train(x_host.to(DEV)).item()

    name, _ = record("critpath-host-sync", host_sync, active=5, warmup=1, memory=False)
    write_json(f"{name}_truth.json", {"steps": 5, "per_step": "pageable H2D copy, MLP 6x2048 fwd/bwd, SGD, "
                                                               "loss.item() (cudaStreamSynchronize)"})

    stall_steps = {2, 4}

    def data_stall(i):
        if i in stall_steps:
            with record_function("dataloader_stall"):
                time.sleep(0.030)
        train(x_host.to(DEV))
        torch.cuda.synchronize()

    name, _ = record("critpath-data-stall", data_stall, active=5, warmup=1, memory=False)
    write_json(f"{name}_truth.json", {"stall_profiler_steps": sorted(stall_steps), "stall_s": 0.030,
                                      "per_step": "30 ms host sleep (annotated dataloader_stall) in the "
                                                  "listed steps, then train, then torch.cuda.synchronize()"})

    side = torch.cuda.Stream()
    a = torch.randn(4096, 4096, device=DEV)
    main = torch.cuda.current_stream()

    def multistream(i):
        xd = x_host.to(DEV)
        side.wait_stream(main)
        with torch.cuda.stream(side):
            for _ in range(4):
                a.copy_(torch.tanh(a @ a * 1e-4))
            done = torch.cuda.Event()
            done.record(side)
        loss = train(xd)
        main.wait_event(done)
        (loss + a[0, 0]).item()

    name, _ = record("critpath-multistream", multistream, active=4, warmup=1, memory=False)
    write_json(f"{name}_truth.json", {
        "steps": 4, "per_step": "side stream: 4x (4096^2 fp32 matmul + tanh + copy) after wait_stream(main); "
                                "main: MLP train; main.wait_event(side done); .item() sync"})
    model = opt = None  # frees them before empty_cache (the closures above are not called again)
    torch.cuda.empty_cache()


# ---------------------------------------------------------------- graphs: CUDA graph replays
def infer_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.LayerNorm(4096), nn.Linear(4096, 4096), nn.GELU(),
                         nn.Linear(4096, 1024)).to(DEV).half().eval()


ITERATIONS = 20
SLEEP_S = 0.002


def graph_node_kernels(graph):
    """Kernel nodes of a captured graph, counted by the CUDA runtime (cudaGraphGetNodes)."""
    from cuda.bindings import runtime as rt
    raw = graph.raw_cuda_graph()
    handle = rt.cudaGraph_t(init_value=raw) if isinstance(raw, int) else raw
    err, _, n = rt.cudaGraphGetNodes(handle, 0)
    err, nodes, n = rt.cudaGraphGetNodes(handle, n)
    kinds = {}
    for node in nodes[:n]:
        err, kind = rt.cudaGraphNodeGetType(node)
        label = getattr(kind, "name", str(kind))
        kinds[label] = kinds.get(label, 0) + 1
    return n, kinds


def new_graph():
    """A CUDAGraph whose cudaGraph_t is kept after capture (so its nodes can be counted)."""
    try:
        return torch.cuda.CUDAGraph(keep_graph=True)
    except TypeError:
        return torch.cuda.CUDAGraph()


def part_graphs():
    model = infer_model()
    x = torch.randn(64, 1024, device=DEV, dtype=torch.half)

    with torch.no_grad():
        for _ in range(3):
            model(x)

        def eager(i):
            for _ in range(ITERATIONS):
                with record_function("iteration"):
                    model(x)
                time.sleep(SLEEP_S)
            torch.cuda.synchronize()

        name, _ = record("graphs-eager-inference", eager, active=1, warmup=1, memory=False)
        write_json(f"{name}_truth.json", {"iterations": ITERATIONS, "sleep_s_between": SLEEP_S,
                                          "annotation": "iteration", "graphed": False})

        compiled = torch.compile(model, mode="reduce-overhead")
        compiled(x)  # call 1 outside the profiler: compile + cudagraph-trees warm-up (eager run)
        torch.cuda.synchronize()

        def graphed(i):
            for _ in range(ITERATIONS):
                compiled(x)
                time.sleep(SLEEP_S)
            torch.cuda.synchronize()

        # no warm-up step: call 2 (the graph capture) and the replays are in the trace; no annotations
        name, _ = record("graphs-compiled-reduce-overhead-inference", graphed, active=1, warmup=0, memory=False)
        write_json(f"{name}_truth.json", {
            "calls_in_trace": ITERATIONS, "sleep_s_between": SLEEP_S, "annotation": None,
            "note": "torch.compile(mode='reduce-overhead'): call 1 (compile, warm-up) ran before profiling; "
                    "in the trace call 1 records (captures) the CUDA graph and calls 2.. replay it, so "
                    f"replays = {ITERATIONS - 1} expected (cudagraph trees may re-record; see the trace)."})

        graph = new_graph()
        static_x = x.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model(static_x)
        torch.cuda.current_stream().wait_stream(side)

        def manual(i):
            with record_function("graph_capture"):
                with torch.cuda.graph(graph):
                    model(static_x)
            for _ in range(ITERATIONS):
                with record_function("iteration"):
                    static_x.copy_(x)
                    graph.replay()
                time.sleep(SLEEP_S)
            torch.cuda.synchronize()

        name, _ = record("graphs-manual-replay", manual, active=1, warmup=0, memory=False)
        truth = {"replays": ITERATIONS, "sleep_s_between": SLEEP_S, "capture_annotation": "graph_capture",
                 "iteration_annotation": "iteration (a copy_ of the input, then graph.replay())"}
        try:
            truth["graph_nodes"], truth["graph_node_types"] = graph_node_kernels(graph)
        except Exception as e:
            truth["graph_nodes_error"] = repr(e)
        write_json(f"{name}_truth.json", truth)


def part_graphs_nsys():
    """The manual-replay workload without the PyTorch profiler, for the Nsight recordings."""
    model = infer_model()
    x = torch.randn(64, 1024, device=DEV, dtype=torch.half)
    with torch.no_grad():
        static_x = x.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model(static_x)
        torch.cuda.current_stream().wait_stream(side)
        graph = new_graph()
        torch.cuda.nvtx.range_push("graph_capture")
        with torch.cuda.graph(graph):
            model(static_x)
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        for i in range(ITERATIONS):
            torch.cuda.nvtx.range_push(f"iteration {i}")
            static_x.copy_(x)
            graph.replay()
            torch.cuda.nvtx.range_pop()
            time.sleep(SLEEP_S)
        torch.cuda.synchronize()
        truth = {"replays": ITERATIONS, "sleep_s_between": SLEEP_S,
                 "nvtx": "graph_capture around the capture; 'iteration i' around copy_ + replay"}
        try:
            truth["graph_nodes"], truth["graph_node_types"] = graph_node_kernels(graph)
        except Exception as e:
            truth["graph_nodes_error"] = repr(e)
        write_json("nsys-2025.3.1_graphs-manual-replay_truth.json", truth)


PARTS = {"ops": part_ops, "gpt": part_gpt, "resnet": part_resnet, "critpath": part_critpath,
         "graphs": part_graphs, "graphs-nsys": part_graphs_nsys}

if __name__ == "__main__":
    print(torch.__version__, torch.cuda.get_device_name(), flush=True)
    for part in sys.argv[1:] or [p for p in PARTS if p != "graphs-nsys"]:
        t0 = time.time()
        try:
            PARTS[part]()
        except Exception as e:
            import traceback
            traceback.print_exc()
            print(f"PART {part} FAILED: {e!r}", flush=True)
        print(f"part {part}: {time.time() - t0:.1f} s", flush=True)
