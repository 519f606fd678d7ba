-- callctx_leaves: GPU time per leaf of the calling-context trees (callctx_nodes):
-- each leaf is one GPU operation name under one context.
-- callctx_ancestry: every (leaf, ancestor-or-self) pair of the trees, the closure the
-- top-down and bottom-up views sum over.
--
-- depends: callctx_nodes, callctx_gpu_ops
-- materialize: per trace
--
-- @column trace_id      Trace.
-- @column tree          'stack' (Python frames > operators, or native backtrace) or 'nvtx' (named ranges).
-- @column node_id       Node (0 = the root).
-- @column leaf_id       A leaf under node_id (callctx_ancestry).
-- @column gpu_ns        GPU time of the leaf's operations (ns).
-- @column kernel_ns     Kernel time of the leaf (ns).
-- @column kernels       Kernels at the leaf.
-- @column memcpy_ns     Memcpy time of the leaf (ns).
-- @column memcpy_bytes  Bytes copied at the leaf.
CREATE OR REPLACE VIEW callctx_leaves AS
SELECT trace_id, tree, node_id,
       sum(duration_ns) AS gpu_ns,
       coalesce(sum(duration_ns) FILTER (WHERE category = 'kernel'), 0) AS kernel_ns,
       count(*) FILTER (WHERE category = 'kernel') AS kernels,
       coalesce(sum(duration_ns) FILTER (WHERE category = 'memcpy'), 0) AS memcpy_ns,
       coalesce(sum(bytes) FILTER (WHERE category = 'memcpy'), 0) AS memcpy_bytes
FROM callctx_gpu_ops
GROUP BY trace_id, tree, node_id;

CREATE OR REPLACE VIEW callctx_ancestry AS
WITH RECURSIVE up AS (
    SELECT l.trace_id, l.tree, l.node_id AS leaf_id, n.node_id, n.parent_id
    FROM callctx_leaves l
    JOIN callctx_nodes n ON n.trace_id = l.trace_id AND n.tree = l.tree AND n.node_id = l.node_id
    UNION ALL
    SELECT u.trace_id, u.tree, u.leaf_id, n.node_id, n.parent_id
    FROM up u
    JOIN callctx_nodes n ON n.trace_id = u.trace_id AND n.tree = u.tree AND n.node_id = u.parent_id
)
SELECT trace_id, tree, leaf_id, node_id FROM up;

-- callctx_topdown: the calling-context tree with the GPU time under each node
-- (top-down view). One row per trace, tree and node.
--
-- @column parent_id            Parent node (NULL for the root).
-- @column depth                Distance from the root.
-- @column label                Frame label: 'train.py(42): step', 'aten::addmm', a native symbol,
--                              a range name, or the GPU operation's name for leaves.
-- @column kind                 'root', 'python', 'op', 'native', 'nvtx', 'unattributed', or the
--                              operation category for leaves ('kernel', 'memcpy', 'memset').
-- @column inclusive_ns         GPU time (kernels, copies, memsets) under this node (ns).
-- @column inclusive_kernel_ns  Kernel time under this node (ns).
-- @column exclusive_ns         GPU time attributed to exactly this node (leaves only) (ns).
-- @column direct_ns            GPU time of operations launched directly in this frame (ns).
-- @column kernel_count         Kernels under this node.
-- @column inclusive_pct        inclusive_ns / the root's inclusive_ns x 100.
CREATE OR REPLACE VIEW callctx_topdown AS
WITH inclusive AS (
    SELECT a.trace_id, a.tree, a.node_id,
           sum(l.gpu_ns) AS inclusive_ns, sum(l.kernel_ns) AS inclusive_kernel_ns,
           sum(l.kernels) AS kernel_count, sum(l.memcpy_ns) AS memcpy_ns, sum(l.memcpy_bytes) AS memcpy_bytes
    FROM callctx_ancestry a
    JOIN callctx_leaves l ON l.trace_id = a.trace_id AND l.tree = a.tree AND l.node_id = a.leaf_id
    GROUP BY a.trace_id, a.tree, a.node_id
),
direct AS (
    SELECT n.trace_id, n.tree, n.parent_id AS node_id, sum(l.gpu_ns) AS direct_ns
    FROM callctx_leaves l
    JOIN callctx_nodes n ON n.trace_id = l.trace_id AND n.tree = l.tree AND n.node_id = l.node_id
    GROUP BY n.trace_id, n.tree, n.parent_id
)
SELECT n.trace_id, n.tree, n.node_id, n.parent_id, n.depth, n.label, n.kind,
       CAST(coalesce(i.inclusive_ns, 0) AS BIGINT) AS inclusive_ns,
       CAST(coalesce(i.inclusive_kernel_ns, 0) AS BIGINT) AS inclusive_kernel_ns,
       CAST(coalesce(l.gpu_ns, 0) AS BIGINT) AS exclusive_ns,
       CAST(coalesce(d.direct_ns, 0) AS BIGINT) AS direct_ns,
       CAST(coalesce(i.kernel_count, 0) AS BIGINT) AS kernel_count,
       CAST(coalesce(i.memcpy_ns, 0) AS BIGINT) AS memcpy_ns,
       CAST(coalesce(i.memcpy_bytes, 0) AS BIGINT) AS memcpy_bytes,
       100.0 * coalesce(i.inclusive_ns, 0)
           / nullif(max(CASE WHEN n.node_id = 0 THEN i.inclusive_ns END)
                        OVER (PARTITION BY n.trace_id, n.tree), 0) AS inclusive_pct
FROM callctx_nodes n
LEFT JOIN inclusive i USING (trace_id, tree, node_id)
LEFT JOIN callctx_leaves l USING (trace_id, tree, node_id)
LEFT JOIN direct d USING (trace_id, tree, node_id);

-- callctx_bottomup: per frame (bottom-up view): GPU time launched directly in the
-- frame (self) and under any occurrence of it (total; an operation under a
-- recursive frame counts once), with the frames that called it. One row per trace,
-- tree, label and kind.
--
-- @column self_ns      GPU time of operations launched directly in this frame (ns).
-- @column total_ns     GPU time under any occurrence of this frame (ns).
-- @column occurrences  Tree nodes with this label.
-- @column callers      Labels of the frames that called it, sorted (the same list run after run).
CREATE OR REPLACE VIEW callctx_bottomup AS
WITH frames AS (
    SELECT * FROM callctx_topdown WHERE kind NOT IN ('root', 'kernel', 'memcpy', 'memset')
),
total AS (
    SELECT trace_id, tree, label, kind, sum(gpu_ns) AS total_ns
    FROM (SELECT DISTINCT a.trace_id, a.tree, f.label, f.kind, a.leaf_id, l.gpu_ns
          FROM callctx_ancestry a
          JOIN frames f ON f.trace_id = a.trace_id AND f.tree = a.tree AND f.node_id = a.node_id
          JOIN callctx_leaves l ON l.trace_id = a.trace_id AND l.tree = a.tree AND l.node_id = a.leaf_id)
    GROUP BY ALL
)
SELECT f.trace_id, f.tree, f.label, f.kind,
       CAST(sum(f.direct_ns) AS BIGINT) AS self_ns,
       CAST(any_value(t.total_ns) AS BIGINT) AS total_ns,
       count(*) AS occurrences,
       list(DISTINCT p.label ORDER BY p.label) AS callers
FROM frames f
JOIN total t USING (trace_id, tree, label, kind)
LEFT JOIN callctx_topdown p ON p.trace_id = f.trace_id AND p.tree = f.tree AND p.node_id = f.parent_id
GROUP BY f.trace_id, f.tree, f.label, f.kind;

-- callctx_flat: per function or operator (flat view): like callctx_bottomup, but
-- Python frames of one function count together whatever the line.
--
-- @column function      'file.py:function' for Python frames, otherwise the frame label.
-- @column total_ns      GPU time under the function (ns), each operation once.
-- @column kernel_ns     Kernel time under it (ns).
-- @column kernel_count  Kernels under it.
CREATE OR REPLACE VIEW callctx_flat AS
WITH keyed AS (
    SELECT a.trace_id, a.tree, a.leaf_id, n.kind,
           CASE WHEN n.kind = 'python' AND n.file IS NOT NULL THEN n.file || ':' || n.function
                ELSE n.label END AS function
    FROM callctx_ancestry a
    JOIN callctx_nodes n ON n.trace_id = a.trace_id AND n.tree = a.tree AND n.node_id = a.node_id
    WHERE n.kind NOT IN ('root', 'kernel', 'memcpy', 'memset')
)
SELECT k.trace_id, k.tree, k.function, k.kind,
       CAST(sum(l.gpu_ns) AS BIGINT) AS total_ns,
       CAST(sum(l.kernel_ns) AS BIGINT) AS kernel_ns,
       CAST(sum(l.kernels) AS BIGINT) AS kernel_count
FROM (SELECT DISTINCT * FROM keyed) k
JOIN callctx_leaves l ON l.trace_id = k.trace_id AND l.tree = k.tree AND l.node_id = k.leaf_id
GROUP BY k.trace_id, k.tree, k.function, k.kind;
