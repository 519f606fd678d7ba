"""The SQL catalog's module rules, in the spirit of Perfetto's tools/check_sql_modules.py:

- every public name a file creates (view, macro, table) starts with the file's stem
  (`kernel_summary.sql` creates `kernel_summary` and `kernel_summary_by_device`), or is a finding
  rule (`finding_<rule>`, which the catalog unions), or is marked internal with a leading `_`;
- no file of sql/base/ reads a name of sql/analysis/, and no file of sql/lib/ reads either (by its
  `-- depends:` line or in its statements): the layers of docs/sql.md go one way.

NAMED_ELSEWHERE lists the names that broke the first rule when it came in. It only shrinks: a name
renamed, moved to its own file or removed must leave the list (the test fails while it is still
listed), and a new name must follow the rule.
"""

from __future__ import annotations

from tracelake.lake import catalog

# "<file>: <name>": public names that do not start with their file's stem (burn-down list).
NAMED_ELSEWHERE = {
    "analysis/collective_instances.sql: collective_instance_ranks",
    "analysis/collective_instances.sql: collective_bandwidth",
    "analysis/collective_instances.sql: collective_rank_waits",
    "analysis/cpu_samples.sql: cpu_sample_flat",
    "analysis/critical_path_first_process.sql: critical_path_first_steps",
    "analysis/critical_path_first_process.sql: critical_path_first_ops",
    "analysis/findings_cuda_rules.sql: cuda_memcpy_async_rule",
    "analysis/findings_cuda_rules.sql: cuda_memcpy_sync_rule",
    "analysis/findings_cuda_rules.sql: cuda_memset_sync_rule",
    "analysis/findings_cuda_rules.sql: cuda_api_sync_rule",
    "analysis/findings_cuda_rules.sql: nsys_analyze_cuda_memcpy_async",
    "analysis/findings_cuda_rules.sql: nsys_analyze_cuda_memcpy_sync",
    "analysis/findings_cuda_rules.sql: nsys_analyze_cuda_memset_sync",
    "analysis/findings_cuda_rules.sql: nsys_analyze_cuda_api_sync",
    "analysis/gpu_op_phases.sql: gpu_phase_summary",
    "analysis/graph_replays.sql: graph_captures",
    "analysis/graph_replays.sql: graph_replay_runs",
    "analysis/kernel_launches.sql: kernel_launch_summary",
    "analysis/kernel_measured_roofline.sql: bound_of",
    "analysis/largest_gpu_gaps.sql: gpu_gap_causes",
    "analysis/memcpy_summary.sql: memcpy_time_summary",
    "analysis/memcpy_summary.sql: memcpy_size_summary",
    "analysis/memcpy_summary.sql: memcpy_kind_summary",
    "analysis/memory_peak_live.sql: memory_peak_breakdown",
    "analysis/memory_peaks.sql: memory_summary",
    "analysis/memory_timeline.sql: memory_sources",
    "analysis/mfu.sql: model_coverage",
    "analysis/nvtx_gpu_metrics.sql: nvtx_range_gpu_metrics",
    "analysis/nvtx_gpu_summary.sql: nvtx_gpu_projection",
    "analysis/op_models.sql: dtype_bytes",
    "analysis/op_models.sql: dtype_precision",
    "analysis/op_models.sql: numel",
    "analysis/op_models.sql: conv_out_size",
    "analysis/operator_summary.sql: operator_calls",
    "analysis/profiler_cost.sql: profiler_event_costs",
    "analysis/run_comparison.sql: runs",
    "analysis/run_comparison.sql: run_kernel_time",
    "analysis/run_comparison.sql: run_identity",
    "analysis/run_comparison.sql: run_signature",
    "analysis/run_comparison.sql: run_members",
    "analysis/run_comparison.sql: run_kernel_changes",
    "analysis/run_overview.sql: run_workloads",
    "analysis/steady_utilization.sql: steady_gpu_range",
    "analysis/steps.sql: step_rules",
    "analysis/steps.sql: step_windows",
    "base/collective_bytes.sql: nccl_bus_factor",
    "base/collective_dtype.sql: collective_kernel_dtype",
    "base/collective_dtype.sql: dtype_size_bytes",
    "base/gpu_arch_limits.sql: device_occupancy_limits",
    "base/gpu_op_class.sql: op_class_of",
    "base/gpu_pcie_links.sql: pcie_gb_per_s",
    "base/gpu_peaks.sql: device_peaks",
    "base/gpu_peaks.sql: peak_tflops_of",
    "base/kernel_dtype.sql: kernel_is_cast",
    "base/kernel_dtype.sql: kernel_library_dtype",
    "base/kernel_dtype.sql: kernel_template_tokens",
    "base/kernel_dtype.sql: kernel_template_dtype",
    "base/memory_device_events.sql: memory_device_blocks",
    "base/op_calls.sql: op_input_dims",
    "base/op_calls.sql: op_input_types",
    "base/op_calls.sql: op_concrete_inputs",
    "base/op_calls.sql: op_inputs",
    "base/op_calls.sql: op_shapes_recorded",
    "base/op_category.sql: op_base_name",
}


def _stem(f: catalog.SqlFile) -> str:
    return f.path.rsplit("/", 1)[-1].removesuffix(".sql")


def _named_elsewhere() -> set[str]:
    out = set()
    for f in catalog.load_files():
        stem = _stem(f)
        for name in f.creates:
            if not (name == stem or name.startswith((f"{stem}_", catalog.RULE_PREFIX, "_"))):
                out.add(f"{f.path}: {name}")
    return out


def test_public_names_start_with_their_file_stem():
    found = _named_elsewhere()
    new = sorted(found - NAMED_ELSEWHERE)
    assert not new, ("public SQL names must start with their file's stem (or finding_, or _ for an "
                     f"internal name): rename them, or move them to a file of their name: {new}")
    fixed = sorted(NAMED_ELSEWHERE - found)
    assert not fixed, f"no longer break the naming rule: remove them from NAMED_ELSEWHERE: {fixed}"


def _layer(path: str) -> str:
    return path.split("/", 1)[0]


def test_layers_go_one_way():
    """lib reads only lib; base reads lib and base; analysis reads anything (base tables aside)."""
    files = catalog.load_files()
    creator = {name: f for f in files for name in f.creates}
    below = {"lib": {"lib"}, "base": {"lib", "base"}}
    wrong = []
    for f in files:
        allowed = below.get(_layer(f.path))
        if allowed is None:
            continue
        read = set(f.depends) | {w for stmt in catalog.statements(f).values() for w in catalog.names_in(stmt, set(creator))}
        wrong += [f"sql/{f.path} reads {name} (sql/{creator[name].path})" for name in sorted(read)
                  if name in creator and _layer(creator[name].path) not in allowed]
    assert not wrong, wrong


def test_the_rules_see_every_file():
    """The checks above read the catalog as it installs: every layer, every file's names."""
    files = catalog.load_files()
    assert {_layer(f.path) for f in files} == {"lib", "base", "analysis", "generated"}
    assert all(f.creates for f in files)
