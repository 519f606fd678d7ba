"""docs/example.ipynb runs top to bottom on the sample traces, and the public API keeps its shape.

The cells are executed in order in one namespace, as Jupyter would (plain execution: no kernel
needed in CI); a cell's last expression is evaluated like Jupyter's displayed value, and Altair
charts among them are checked against Vega-Lite's schema.
"""

from __future__ import annotations

import ast
import json
import os

import altair as alt
import polars as pl
from conftest import DATA, REPO

NOTEBOOK = REPO / "docs" / "example.ipynb"


def run_cells(path, env: dict[str, str]) -> list:
    """Each code cell's displayed value (its last expression's, else None)."""
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    namespace: dict = {"__name__": "__main__"}
    shown = []
    old_cwd, old_env = os.getcwd(), {k: os.environ.get(k) for k in env}
    os.chdir(path.parent)  # Jupyter starts in the notebook's folder
    os.environ.update(env)
    try:
        for i, c in enumerate(cells):
            tree = ast.parse("".join(c["source"]), filename=f"{path.name} cell {i}")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, f"{path.name} cell {i}", "exec"), namespace)  # noqa: S102 - the repo's own notebook
            shown.append(eval(compile(ast.Expression(last.value), f"{path.name} cell {i}", "eval"), namespace)
                         if last else None)
    finally:
        os.chdir(old_cwd)
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return shown


def test_example_notebook_runs_top_to_bottom():
    shown = run_cells(NOTEBOOK, {"TRACELAKE_SAMPLES": str(DATA)})
    ingested = next(v for v in shown if isinstance(v, list) and v and len(v[0]) == 3)
    assert len(ingested) == 4 and all(status == "ok" for status, _, _ in ingested)
    traces = next(v for v in shown if isinstance(v, pl.DataFrame) and "duration_ns" in v.columns)
    assert traces.height == 4 and sorted(traces["source"].to_list()) == ["nsys", "pytorch", "pytorch", "pytorch"]
    top = next(v for v in shown if isinstance(v, pl.DataFrame) and "instances" in v.columns)
    # NVIDIA's cuda_gpu_kern_sum of the same export (tests/data/oracles): the longest kernel's total
    assert top.height == 5 and top["total_ns"][0] == 6112303
    charts = [v for v in shown if isinstance(v, alt.TopLevelMixin)]
    assert len(charts) == 3
    for chart in charts:
        chart.to_dict(validate=True)  # a valid Vega-Lite spec, as Jupyter would render it
    assert shown[-1] == [("ok", shown[-1][0][1])]


def test_public_names():
    import tracelake

    assert sorted(tracelake.__all__) == ["__version__", "charts", "diff", "export", "ingest", "open", "run", "set_peak"]
    assert tracelake.__version__ == __import__("tracelake.lake.version").lake.version.__version__
    public = [n for n in dir(tracelake.charts) if not n.startswith("_") and callable(getattr(tracelake.charts, n))]
    import tracelake.ingest.dispatch  # noqa: F401 - binds the subpackage to tracelake.ingest, which stays callable

    for fn in (tracelake.open, tracelake.ingest.__call__, tracelake.run, tracelake.export, tracelake.diff,
               tracelake.set_peak):
        assert fn.__doc__ and "return" in fn.__annotations__, fn
    assert callable(tracelake.ingest) and tracelake.ingest.dispatch.__name__ == "tracelake.ingest.dispatch"
    for name in public:
        fn = getattr(tracelake.charts, name)
        if fn.__module__ == tracelake.charts.__name__:
            assert fn.__doc__ and "return" in fn.__annotations__, name


def test_open_refuses_a_folder_that_is_not_a_lake(tmp_path):
    import pytest
    import tracelake

    with pytest.raises(FileNotFoundError, match="not a tracelake lake"):
        tracelake.open(tmp_path)
