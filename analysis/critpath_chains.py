"""Chains of a step graph contracted into single edges, for repeated longest-path runs.

The critical-path graph is mostly chains: a thread's nested CPU spans and a stream's operations
are runs of nodes with one edge in and one edge out (the 37 corpus traces: 0.9 nodes per edge,
and 66-85 % of the edges of the large ones continue a chain). The longest path into the end of a
chain is the longest path into its start plus the chain's weights, so a what-if run can walk one
edge per chain, weighted with the sum of its edges' weights (np.add.reduceat, vectorized), instead
of every edge: 259k -> 60k edges on the 12-step GPT-2 trace, 259k -> 89k on the DHEN trace.

This holds when the weights are >= 0 (a path may start at any node, so a node's distance is at
least 0: the removed nodes' distances are then never above their chain end's, and no step's
maximum is lost). A node is only removed when the node after it is in the same step, for that
reason. `ContractedChains.weights` refuses negative weights; callers walk the full graph then.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_JUMP_ROUNDS = 64  # pointer jumping halves the remaining chain length each round


@dataclass(frozen=True)
class ContractedChains:
    """The graph with every chain as one edge: src[i] -> dst[i] stands for the original edges
    order[starts[i]:starts[i + 1]] (a path, not in path order)."""
    src: np.ndarray
    dst: np.ndarray
    order: np.ndarray  # original edges grouped by chain
    starts: np.ndarray  # each chain's first position in `order`

    def weights(self, weight: np.ndarray) -> np.ndarray:
        """Each chain's weight: the sum of its edges' weights (ValueError on a negative weight)."""
        if len(weight) and weight.min() < 0:
            raise ValueError("contracted chains need weights >= 0")
        return np.add.reduceat(weight[self.order], self.starts) if len(self.starts) else weight[:0]


def contract_chains(src: np.ndarray, dst: np.ndarray, node_step: np.ndarray, n_nodes: int) -> ContractedChains:
    """Contract the chains of an acyclic graph: every node with exactly one edge in and one out,
    whose successor is in its step, is removed and its two edges joined. A ring of such nodes
    (a cycle) is not acyclic: ValueError."""
    n_edges = len(src)
    edge = np.arange(n_edges)
    indeg = np.bincount(dst, minlength=n_nodes)
    outdeg = np.bincount(src, minlength=n_nodes)
    in_edge = np.full(n_nodes, -1)
    in_edge[dst] = edge  # the edge into a node that has one
    out_edge = np.full(n_nodes, -1)
    out_edge[src] = edge
    through = (indeg == 1) & (outdeg == 1)
    inner = np.flatnonzero(through)
    through[inner] = node_step[inner] == node_step[dst[out_edge[inner]]]
    # each edge's chain is named by its first edge: follow the edge before it (into its start)
    # while its start is a node the chain runs through; pointer jumping, log2(chain length) rounds
    first = np.where(through[src], in_edge[src], edge)
    for _ in range(MAX_JUMP_ROUNDS):
        further = first[first]
        if np.array_equal(further, first):
            break
        first = further
    else:
        raise ValueError("a cycle of chain nodes: the graph is not acyclic")
    order = np.argsort(first, kind="stable")
    grouped = first[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]]) if n_edges else np.zeros(0, dtype=np.int64)
    heads = grouped[starts]
    # a chain ends at its one edge whose end is not a node the chain runs through
    last = edge[~through[dst]]
    chain_dst = np.empty(n_edges, dtype=np.int64)  # by a chain's first edge
    chain_dst[first[last]] = dst[last]
    return ContractedChains(src=src[heads], dst=chain_dst[heads], order=order, starts=starts)
