"""Longest path through a weighted DAG given as edge arrays (the critical path of a step).

One pass of Kahn's topological sort that relaxes each edge once: O(nodes + edges), a plain Python
loop over lists (measured faster than DuckDB's recursive CTE by orders of magnitude, and than
numpy level-by-level relaxation, whose level count is the path's hop count; see bench/RESULTS.md).
The graph may hold many disjoint steps; the answer is per component label (`step`).
"""

from __future__ import annotations

import numpy as np


def longest_paths(n_nodes: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray,
                  node_step: np.ndarray, n_steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per step, the longest path over the edges.

    Returns (path_ns per step, on_path_order per edge (-1 when off the path), ok per step).
    A step whose subgraph has a cycle (never built by critpath_graph, but defended) gets ok=False.
    Nodes of no edge are ignored. Ties between equally long paths go to the edge seen first.
    """
    n_edges = len(src)
    order = np.argsort(src, kind="stable")
    starts = np.searchsorted(src[order], np.arange(n_nodes + 1))
    indeg = np.bincount(dst, minlength=n_nodes).tolist()
    dist = [0] * n_nodes
    pred = [-1] * n_nodes  # edge index that gives the node its distance
    out_dst, out_w = dst[order].tolist(), weight[order].tolist()
    out_edge = order.tolist()
    starts_l = starts.tolist()
    queue = [v for v in np.flatnonzero((np.bincount(dst, minlength=n_nodes) == 0)
                                       & (np.bincount(src, minlength=n_nodes) > 0)).tolist()]
    seen = 0
    while queue:
        u = queue.pop()
        seen += 1
        du = dist[u]
        for k in range(starts_l[u], starts_l[u + 1]):
            v = out_dst[k]
            d = du + out_w[k]
            if d > dist[v] or pred[v] < 0:
                dist[v] = d
                pred[v] = out_edge[k]
            indeg[v] -= 1
            if indeg[v] == 0:
                queue.append(v)
    dist_a = np.asarray(dist, dtype=np.int64)
    stuck = np.asarray(indeg) > 0
    ok = np.ones(n_steps, dtype=bool)
    if stuck.any():
        ok[np.unique(node_step[stuck])] = False
    path = np.zeros(n_steps, dtype=np.int64)
    on_path = np.full(n_edges, -1, dtype=np.int64)
    touched = np.zeros(n_nodes, dtype=bool)
    touched[src] = True
    touched[dst] = True
    cand = np.flatnonzero(touched)
    if len(cand) == 0:
        return path, on_path, ok
    # the end node of each step's path: the node with the largest distance (first one on ties)
    by = np.lexsort((-dist_a[cand], node_step[cand]))
    cand = cand[by]
    first = np.r_[True, node_step[cand][1:] != node_step[cand][:-1]]
    src_l = src.tolist()
    for end in cand[first].tolist():
        step = int(node_step[end])
        if not ok[step]:
            continue
        path[step] = dist[end]
        chain = []
        v = end
        while pred[v] >= 0:
            e = pred[v]
            chain.append(e)
            v = src_l[e]
        for i, e in enumerate(reversed(chain)):
            on_path[e] = i
    return path, on_path, ok
