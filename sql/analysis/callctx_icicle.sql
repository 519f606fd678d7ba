-- callctx_icicle_over(min_pct, max_depth): the layout of the calling-context icicle (the
-- trace page's "Which code launched the GPU time"): each node of the 'stack' tree
-- (callctx_topdown) with at least min_pct of the GPU time, at depths 1 .. max_depth,
-- as a rectangle [x0, x1) on a 0-100 axis, children side by side inside their parent,
-- largest first (ties by node id). A node whose parent is not shown is not shown.
-- callctx_icicle: the same with min_pct = 0.5 and max_depth = 14.
--
-- depends: callctx_topdown, op_class_of
--
-- @column trace_id  Trace.
-- @column node_id   Node of the 'stack' tree (callctx_nodes).
-- @column depth     Distance from the root (1 = outermost frames).
-- @column x0        Left edge: the parent's x0 + the shares of its larger shown children (% of GPU time).
-- @column x1        Right edge: x0 + the node's inclusive_pct (% of GPU time).
-- @column label     Frame, operator or GPU operation name.
-- @column kind      'python', 'op', 'native', 'nvtx', 'unattributed', or the GPU operation's
--                   class (op_class_of) for leaves.
CREATE OR REPLACE MACRO callctx_icicle_over(min_pct, max_depth) AS TABLE
WITH RECURSIVE shown AS (
    SELECT trace_id, node_id, parent_id, depth, label,
           CASE WHEN kind IN ('kernel', 'memcpy', 'memset') THEN op_class_of(kind, label) ELSE kind END AS kind,
           inclusive_pct,
           coalesce(sum(inclusive_pct) OVER (PARTITION BY trace_id, parent_id ORDER BY inclusive_pct DESC, node_id
                                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS offset_pct
    FROM callctx_topdown
    WHERE tree = 'stack' AND inclusive_pct >= min_pct AND depth BETWEEN 1 AND max_depth
),
placed AS (
    SELECT trace_id, node_id, depth, label, kind, offset_pct AS x0, offset_pct + inclusive_pct AS x1
    FROM shown WHERE parent_id = 0
    UNION ALL
    SELECT s.trace_id, s.node_id, s.depth, s.label, s.kind, p.x0 + s.offset_pct, p.x0 + s.offset_pct + s.inclusive_pct
    FROM placed p
    JOIN shown s ON s.trace_id = p.trace_id AND s.parent_id = p.node_id
)
-- rounded to 1e-9 % (far below a pixel): float sums that differ in their last bits with the order DuckDB
-- adds the rows in (which depends on what else is loaded) give the same rectangles
SELECT trace_id, node_id, depth, round(x0, 9) AS x0, round(x1, 9) AS x1, label, kind FROM placed;

-- callctx_icicle: (see callctx_icicle_over)
CREATE OR REPLACE VIEW callctx_icicle AS
SELECT * FROM callctx_icicle_over(0.5, 14);
