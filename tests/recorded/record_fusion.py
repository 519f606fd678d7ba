"""Record the eager and torch.compile traces behind the fusion golden tests (issue #34).

Run on the GPU machine (PyTorch 2.11, one H100/H200): `OUT=dir python3 record_fusion.py`.
Two small training programs, each run eagerly and under `torch.compile` (default mode: Inductor,
no CUDA graphs), the same step in both:

- `mlp`: 4 pre-norm MLP blocks on 4096 tokens of width 1024 (fp32, TF32 matmuls):
  h = h + dropout(fc2(dropout(gelu(fc1(layer_norm(h)))))), then a final LayerNorm, a 512-way linear
  head and cross-entropy;
- `cnn`: a conv-BN-ReLU stem and 3 residual blocks (conv-BN-ReLU-conv-BN, + skip, ReLU) on
  32 x 64 x 56 x 56 (fp32, TF32 convolutions, NCHW), a global mean, a 10-way linear head and
  cross-entropy.

The loss is inside the compiled module (forward and backward are compiled); the optimizer (AdamW,
fused=True: one kernel per step) runs eagerly in both modes, so it is the same in both.

For each program and mode it writes
- `torch-2.11_fusion-<model>-<mode>_<gpu>.pt.trace.json.gz`: 3 profiled steps (ProfilerStep#N),
  record_shapes and with_stack, after warm-up (and compilation) outside the profiler;
and `torch-2.11_fusion_<gpu>_truth.json` with, per program and mode:
- `step_ms`: CUDA-event time of each of 20 unprofiled steps (event before zero_grad, after
  optimizer.step) and their median;
- `gpu_ms_per_step`: the GPU's own time per step: a ~0.3 s spin kernel (torch.cuda._sleep) holds
  the GPU while the host enqueues 6 steps, which then run back to back; CUDA events between the
  steps (each, and the median); `host_ahead` says the spin was still running when the last step
  was enqueued (so the GPU never waited for the host);
- `kernels_per_step`: kernel events in the exported trace, per profiled step.
The measured saving of compilation is the eager median gpu_ms_per_step - the compiled one.
"""
import gzip
import json
import os
import shutil
import statistics

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule

OUT = os.environ.get("OUT", "/tmp/out")
GPU = "h100" if "H100" in torch.cuda.get_device_name() else "h200"
STEPS = 3
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
os.makedirs(OUT, exist_ok=True)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, h):
        y = F.dropout(F.gelu(self.fc1(self.norm(h))), 0.1, self.training)
        return h + F.dropout(self.fc2(y), 0.1, self.training)


class Mlp(nn.Module):
    def __init__(self, d=1024, layers=4, classes=512):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x, target):
        for b in self.blocks:
            x = b(x)
        return F.cross_entropy(self.head(self.norm(x)), target)


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout))


class Residual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = conv_bn(c, c)
        self.b = conv_bn(c, c)

    def forward(self, x):
        return F.relu(x + self.b(F.relu(self.a(x))))


class Cnn(nn.Module):
    def __init__(self, c=64, blocks=3, classes=10):
        super().__init__()
        self.stem = conv_bn(3, c)
        self.blocks = nn.Sequential(*(Residual(c) for _ in range(blocks)))
        self.head = nn.Linear(c, classes)

    def forward(self, x, target):
        x = self.blocks(F.relu(self.stem(x)))
        return F.cross_entropy(self.head(x.mean((2, 3))), target)


def program(name):
    torch.manual_seed(0)
    if name == "mlp":
        model = Mlp().cuda()
        x = torch.randn(4096, 1024, device="cuda")
        t = torch.randint(0, 512, (4096,), device="cuda")
    else:
        model = Cnn().cuda()
        x = torch.randn(32, 3, 56, 56, device="cuda")
        t = torch.randint(0, 10, (32,), device="cuda")
    return model, x, t


def run(name, mode):
    model, x, t = program(name)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    fn = torch.compile(model) if mode == "compiled" else model

    def step():
        opt.zero_grad(set_to_none=True)
        loss = fn(x, t)
        loss.backward()
        opt.step()

    for _ in range(5):  # warm-up (and compilation)
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    trace_name = f"torch-2.11_fusion-{name}-{mode}_{GPU}"
    raw = f"/tmp/{trace_name}.pt.trace.json"
    gpu_ms, ahead = gpu_time(step)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 with_stack=True, schedule=schedule(wait=0, warmup=1, active=STEPS, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for _ in range(1 + STEPS):
            step()
            prof.step()
    torch.cuda.synchronize()
    with open(raw, "rb") as src, gzip.open(os.path.join(OUT, trace_name + ".pt.trace.json.gz"), "wb", 9) as dst:
        shutil.copyfileobj(src, dst)
    with open(raw) as f:
        kernels = sum(1 for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel")
    return {"trace": trace_name + ".pt.trace.json.gz", "profiled_steps": STEPS,
            "step_ms": {"each": times, "median": statistics.median(times)},
            "gpu_ms_per_step": {"each": gpu_ms, "median": statistics.median(gpu_ms)},
            "host_ahead": ahead, "kernels_per_step": kernels / STEPS}


def gpu_time(step, k=6):
    """GPU time of k steps run back to back: a ~0.3 s spin kernel holds the GPU while the host
    enqueues all k steps, so the GPU never waits for the host; CUDA events between the steps."""
    torch.cuda.synchronize()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(k + 1)]
    torch.cuda._sleep(600_000_000)
    events[0].record()
    for i in range(k):
        step()
        events[i + 1].record()
    ahead = not events[0].query()  # the spin still ran when the last step was enqueued
    torch.cuda.synchronize()
    return [events[i].elapsed_time(events[i + 1]) for i in range(k)], ahead


def main():
    truth = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "programs": {}}
    for name in ("mlp", "cnn"):
        try:
            truth["programs"][name] = {mode: run(name, mode) for mode in ("eager", "compiled")}
        except Exception as exc:  # keep the other program's recording
            print(name, "failed:", repr(exc), flush=True)
            continue
        e, c = truth["programs"][name]["eager"], truth["programs"][name]["compiled"]
        saving = e["gpu_ms_per_step"]["median"] - c["gpu_ms_per_step"]["median"]
        truth["programs"][name]["measured_saving_gpu_ms_per_step"] = saving
        truth["programs"][name]["measured_saving_step_ms"] = e["step_ms"]["median"] - c["step_ms"]["median"]
        print(name, json.dumps({m: {k: v for k, v in r.items() if k != "step_ms"} if isinstance(r, dict) else r
                                for m, r in truth["programs"][name].items()}), flush=True)
        with open(os.path.join(OUT, f"torch-2.11_fusion_{GPU}_truth.json"), "w") as f:
            json.dump(truth, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
