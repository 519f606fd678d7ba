"""Record the parallelism runs of issue #53 (run under torchrun on 2 GPUs; see record_parallel.sh).

`OUT=dir TORCH_NCCL_ENABLE_TIMING=1 torchrun --nproc_per_node=2 record_parallel.py [variant ...]`

One model for all: BLOCKS blocks of Linear(WIDTH, WIDTH) + ReLU in bf16 (parameters and data: no
autocast, so the pipeline's stages pass bf16 activations), a batch of BATCH rows, MSE loss, SGD. Variants, each a folder
`torch-2.11_parallel-<variant>-2rank_<gpu>x2/` with `rank<r>.pt.trace.json.gz` and `truth_rank<r>.json`:

- ddp-small-buckets: DistributedDataParallel, bucket_cap_mb=1 (one bucket per weight: the
  all-reduces start while the backward still runs: overlapped);
- ddp-large-buckets: bucket_cap_mb=1000 (one bucket: its all-reduce starts after the backward:
  exposed). Both all-reduce through a comm hook that keeps each call's Work;
- fsdp2-prefetch, fsdp2-no-prefetch: fully_shard on every block and on the model (FSDP2), with
  and without explicit forward and backward prefetch of the next block
  (set_modules_to_forward_prefetch / set_modules_to_backward_prefetch);
- pipeline-gpipe: the blocks split in 2 stages (rank r holds blocks r*BLOCKS/2 ..), PipelineStage +
  ScheduleGPipe with MICROBATCHES micro-batches (theoretical bubble (p-1)/(m+p-1) = 1/5).

Each variant runs WARMUP steps, then TIMED steps without any profiler, then PROFILED_WAIT +
PROFILED_WARMUP + PROFILED_ACTIVE steps under the PyTorch profiler (CPU and CUDA activities only;
ProfilerStep#N ranges are the steps). Every step, profiled or not, is timed with CUDA events on the
current stream (around the whole step, after a synchronize) and every collective with the events
ProcessGroupNCCL records on its own stream around it (TORCH_NCCL_ENABLE_TIMING=1, Work.get_duration():
the kernel's time including any wait for the other rank). The collectives are captured by wrapping
torch.distributed's all_reduce / all_gather_into_tensor / reduce_scatter_tensor / batch_isend_irecv /
isend / irecv so they run async_op=True and keep their Work (a caller that asked for a synchronous
call waits on it at once, as the synchronous call would). The pipeline's stages also time each
micro-batch's forward (module hooks) and backward (pipelining's stage_backward) with CUDA events:
per step, busy = their sum, wait = step - busy (the bubble and the send/recv waits).

truth_rank<r>.json: the configuration (model, batch, buckets, prefetch, micro-batches, versions,
device), and `unprofiled` / `profiled`: a list of steps, each {step, profiler_step (ProfilerStep#N
of the trace, profiled only), step_ms, collectives: [{op, bytes, ms}] in issue order,
and for the pipeline stage: {forward_ms: [...], backward_ms: [...], busy_ms, wait_ms}}.
Files stay small: 3 active profiled steps, no shapes, stacks or memory.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import shutil
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

OUT = os.environ.get("OUT", "/tmp/out")
WIDTH = 2048
BLOCKS = 12
BATCH = 8192
MICROBATCHES = 4
WARMUP, TIMED = 3, 10
PROFILED_WAIT, PROFILED_WARMUP, PROFILED_ACTIVE = 1, 1, 3
VARIANTS = ("ddp-small-buckets", "ddp-large-buckets", "fsdp2-prefetch", "fsdp2-no-prefetch", "pipeline-gpipe")


def blocks():
    return [nn.Sequential(nn.Linear(WIDTH, WIDTH, dtype=torch.bfloat16), nn.ReLU()) for _ in range(BLOCKS)]


def tensor_bytes(args, kwargs) -> int:
    """The largest tensor argument (nccl-tests' size: all-gather's output, reduce-scatter's input)."""
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
    return max((t.numel() * t.element_size() for t in tensors), default=0)


class Collectives:
    """Wraps torch.distributed's collective calls so each runs async and keeps its Work."""

    # not isend / irecv: torch.distributed.P2POp accepts only the original functions as its op, and
    # pipelining sends through batch_isend_irecv
    NAMES = ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "batch_isend_irecv")

    def __init__(self):
        self.calls: list[tuple[str, int, object]] = []
        self.originals = {n: getattr(dist, n) for n in self.NAMES}

    def install(self):
        for name, fn in self.originals.items():
            setattr(dist, name, self._wrap(name, fn))

    def uninstall(self):
        for name, fn in self.originals.items():
            setattr(dist, name, fn)

    def _wrap(self, name, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            if name == "batch_isend_irecv":
                works = fn(*args, **kwargs)
                nbytes = sum(op.tensor.numel() * op.tensor.element_size() for op in args[0])
                for w in works:
                    self.calls.append((name, nbytes, w))
                return works
            wanted_async = kwargs.pop("async_op", False)
            work = fn(*args, async_op=True, **kwargs)
            self.calls.append((name, tensor_bytes(args, kwargs), work))
            if wanted_async:
                return work
            work.wait()  # what the synchronous call does: the current stream waits for NCCL's
            return None
        return wrapped

    def take(self) -> list[dict]:
        """The calls since the last take, with their durations (after a synchronize)."""
        out = []
        for name, nbytes, work in self.calls:
            try:
                ms = work.get_duration()
            except Exception as e:  # noqa: BLE001 - a work without timing: say why
                ms = f"unavailable: {e}"
            out.append({"op": name, "bytes": nbytes, "ms": ms})
        self.calls.clear()
        return out


def ddp_hook(state, bucket):
    """DDP's default all-reduce, through torch.distributed (so Collectives sees it), averaged."""
    buffer = bucket.buffer()
    buffer.div_(dist.get_world_size())
    work = dist.all_reduce(buffer, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def build(variant, rank, world, device):
    """(step function, stage timer or None, configuration)"""
    torch.manual_seed(0)
    x = torch.randn(BATCH, WIDTH, device=device, dtype=torch.bfloat16)
    y = torch.randn(BATCH, WIDTH, device=device, dtype=torch.bfloat16)
    loss_fn = nn.MSELoss()
    if variant.startswith("ddp"):
        from torch.nn.parallel import DistributedDataParallel as DDP
        cap = 1 if variant == "ddp-small-buckets" else 1000
        model = DDP(nn.Sequential(*blocks()).to(device), device_ids=[rank], bucket_cap_mb=cap,
                    gradient_as_bucket_view=True)
        model.register_comm_hook(None, ddp_hook)
        opt = torch.optim.SGD(model.parameters(), lr=1e-4)

        def step():
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
        return step, None, {"bucket_cap_mb": cap, "gradient_as_bucket_view": True}
    if variant.startswith("fsdp2"):
        from torch.distributed.fsdp import fully_shard
        layers = blocks()
        model = nn.Sequential(*layers).to(device)
        for layer in layers:
            fully_shard(layer)
        fully_shard(model)
        prefetch = variant == "fsdp2-prefetch"
        if prefetch:
            for i, layer in enumerate(layers):
                if i + 1 < len(layers):
                    layer.set_modules_to_forward_prefetch([layers[i + 1]])
                if i > 0:
                    layer.set_modules_to_backward_prefetch([layers[i - 1]])
        opt = torch.optim.SGD(model.parameters(), lr=1e-4)

        def step():
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
        return step, None, {"explicit_prefetch": prefetch, "fully_shard": "every block and the model"}
    # pipeline: rank r is stage r
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe
    per = BLOCKS // world
    stage_module = nn.Sequential(*blocks()[rank * per:(rank + 1) * per]).to(device)
    timer = StageTimer(stage_module)
    stage = PipelineStage(stage_module, rank, world, device)
    sched = ScheduleGPipe(stage, n_microbatches=MICROBATCHES, loss_fn=loss_fn)
    opt = torch.optim.SGD(stage_module.parameters(), lr=1e-4)

    def step():
        opt.zero_grad(set_to_none=True)
        if rank == 0:
            sched.step(x)
        elif rank == world - 1:
            sched.step(target=y, losses=[])
        else:
            sched.step()
        opt.step()
    p, m = world, MICROBATCHES
    return step, timer, {"stages": p, "microbatches": m, "schedule": "GPipe", "blocks_per_stage": per,
                         "theoretical_bubble": (p - 1) / (m + p - 1)}


class StageTimer:
    """CUDA events around each micro-batch's forward (module hooks) and backward (stage_backward)."""

    def __init__(self, module):
        self.forward, self.backward = [], []
        module.register_forward_pre_hook(lambda *_: self._start(self.forward))
        module.register_forward_hook(lambda *_: self._end(self.forward))
        import torch.distributed.pipelining.stage as stage_mod
        self.patched = hasattr(stage_mod, "stage_backward")
        if self.patched:
            original = stage_mod.stage_backward

            @functools.wraps(original)
            def timed(*args, **kwargs):
                self._start(self.backward)
                try:
                    return original(*args, **kwargs)
                finally:
                    self._end(self.backward)
            stage_mod.stage_backward = timed

    @staticmethod
    def _start(into):
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        into.append([e, None])

    @staticmethod
    def _end(into):
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        into[-1][1] = e

    def take(self, step_ms):
        fwd = [a.elapsed_time(b) for a, b in self.forward]
        bwd = [a.elapsed_time(b) for a, b in self.backward]
        self.forward, self.backward = [], []
        busy = sum(fwd) + sum(bwd)
        return {"forward_ms": fwd, "backward_ms": bwd, "busy_ms": busy, "wait_ms": step_ms - busy,
                "backward_timed": self.patched}


def timed_step(step, collectives, timer, index, profiler_step=None):
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end)
    row = {"step": index, "step_ms": ms, "collectives": collectives.take()}
    if profiler_step is not None:
        row["profiler_step"] = f"ProfilerStep#{profiler_step}"
    if timer is not None:
        row["stage"] = timer.take(ms)
    return row


def record(variant, rank, world, gpu, device):
    collectives = Collectives()
    collectives.install()
    try:
        step, timer, config = build(variant, rank, world, device)
        for _ in range(WARMUP):
            step()
        torch.cuda.synchronize()
        collectives.take()
        if timer is not None:
            timer.take(0.0)
        dist.barrier()
        unprofiled = [timed_step(step, collectives, timer, i) for i in range(TIMED)]
        dist.barrier()
        run_dir = f"{OUT}/torch-2.11_parallel-{variant}-{world}rank_{gpu}x{world}"
        os.makedirs(run_dir, exist_ok=True)
        path = f"{run_dir}/rank{rank}.pt.trace.json"
        profiled = []
        total = PROFILED_WAIT + PROFILED_WARMUP + PROFILED_ACTIVE
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     schedule=schedule(wait=PROFILED_WAIT, warmup=PROFILED_WARMUP, active=PROFILED_ACTIVE),
                     on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
            for i in range(total):
                active = i >= PROFILED_WAIT + PROFILED_WARMUP
                # ProfilerStep#N is the profiler's step number, counted from 0 at the first step
                row = timed_step(step, collectives, timer, i, profiler_step=i if active else None)
                if active:
                    profiled.append(row)
                prof.step()
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
            shutil.copyfileobj(f, g)
        os.remove(path)
        with open(f"{run_dir}/truth_rank{rank}.json", "w") as f:
            json.dump({"variant": variant, "rank": rank, "world": world,
                       "model": f"{BLOCKS} x (Linear({WIDTH}, {WIDTH}) + ReLU), bf16, MSE, SGD",
                       "batch": BATCH, "config": config, "torch": torch.__version__,
                       "nccl": ".".join(map(str, torch.cuda.nccl.version())), "device": torch.cuda.get_device_name(),
                       "nccl_timing": os.environ.get("TORCH_NCCL_ENABLE_TIMING"),
                       "unprofiled": unprofiled, "profiled": profiled}, f, indent=1)
    finally:
        collectives.uninstall()
    dist.barrier()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    gpu = "h100" if "H100" in torch.cuda.get_device_name() else "h200"
    for v in sys.argv[1:] or VARIANTS:
        record(v, rank, world, gpu, device)
        print(rank, v, "done", flush=True)
    dist.barrier()
    dist.destroy_process_group()
