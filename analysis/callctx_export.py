"""Exporting calling-context trees for flame-graph tools: folded stacks and speedscope JSON."""

from __future__ import annotations

import orjson

_PATHS_SQL = """
SELECT l.node_id, l.gpu_ns, list(n.label ORDER BY n.depth) AS path
FROM callctx_leaves l
JOIN callctx_ancestry a ON a.trace_id = l.trace_id AND a.tree = l.tree AND a.leaf_id = l.node_id
JOIN callctx_nodes n ON n.trace_id = a.trace_id AND n.tree = a.tree AND n.node_id = a.node_id
WHERE l.trace_id = ? AND l.tree = ? AND n.node_id <> 0
GROUP BY l.node_id, l.gpu_ns
ORDER BY l.node_id
"""


def leaf_paths(con, trace_id: str, tree: str) -> list[tuple[list[str], int]]:
    """(frames from the root's child to the leaf, GPU ns) for every leaf of the tree."""
    return [(path, int(ns)) for _, ns, path in con.execute(_PATHS_SQL, [trace_id, tree]).fetchall()]


def _frame(label: str) -> str:
    return label.replace(";", ",").replace("\n", " ").replace("\r", " ")


def folded(con, trace_id: str, tree: str) -> str:
    """Brendan Gregg's folded format: 'frame;frame;leaf <GPU ns>' per line."""
    return "".join(f"{';'.join(_frame(f) for f in path)} {ns}\n" for path, ns in leaf_paths(con, trace_id, tree))


def speedscope(con, trace_id: str, tree: str) -> bytes:
    """speedscope's file format: one 'sampled' profile weighted by GPU nanoseconds."""
    frames: dict[str, int] = {}
    samples, weights = [], []
    for path, ns in leaf_paths(con, trace_id, tree):
        samples.append([frames.setdefault(f, len(frames)) for f in path])
        weights.append(ns)
    doc = {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "exporter": "tracelake",
        "name": f"{trace_id} ({tree})",
        "activeProfileIndex": 0,
        "shared": {"frames": [{"name": name} for name in frames]},
        "profiles": [{
            "type": "sampled", "name": f"GPU time by calling context ({tree})", "unit": "nanoseconds",
            "startValue": 0, "endValue": sum(weights), "samples": samples, "weights": weights,
        }],
    }
    return orjson.dumps(doc)
