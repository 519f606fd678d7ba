-- intervals: table macros over any table or CTE of intervals with the columns
-- (lane, start_ns, end_ns), as Perfetto's stdlib intervals module: `lane` holds the
-- partition keys, one value or a STRUCT ({'trace_id': trace_id, 'pid': pid}); each
-- lane is computed on its own. Intervals are closed-open [start_ns, end_ns); a row
-- with a NULL start or end, or with end_ns < start_ns, is ignored; zero-length
-- intervals count as points. Touching intervals ([0, 10) and [10, 20)) are one busy
-- stretch: they leave no gap, and do not overlap.
--
-- intervals_union(tbl): the union: one row per maximal stretch covered by at least
-- one interval (lane, start_ns, end_ns), touching and overlapping intervals merged.
-- intervals_union_ns(tbl): the length of the union per lane (lane, covered_ns).
-- intervals_gaps(tbl): the gaps of the union, between a lane's first start and last
-- end: one row per stretch covered by no interval (lane, start_ns, end_ns), > 0 long.
-- intervals_after_gaps(tbl): the interval that ends each gap: the rows of tbl, with all
-- their columns, that start after everything sorted before them (by start_ns, end_ns)
-- has ended, plus gap_start_ns, where the gap began.
-- intervals_intersect(a, b): the intersection of a's union with b's union, per lane:
-- one row per maximal stretch covered by both (lane, start_ns, end_ns), > 0 long.
-- intervals_overlap_count(tbl): how many intervals run at once: one row per stretch
-- between two consecutive distinct start or end times of the lane (lane, start_ns,
-- end_ns, overlap_count); overlap_count is 0 in the gaps.
--
-- depends: (none)
CREATE OR REPLACE MACRO _intervals_valid(tbl) AS TABLE
SELECT *
FROM query_table(tbl)
WHERE start_ns IS NOT NULL AND end_ns >= start_ns;

-- the sweep: each interval with the furthest end of the intervals sorted before it
CREATE OR REPLACE MACRO _intervals_swept(tbl) AS TABLE
SELECT *,
       max(end_ns) OVER (PARTITION BY lane ORDER BY start_ns, end_ns
                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS covered_until_ns
FROM _intervals_valid(tbl);

CREATE OR REPLACE MACRO intervals_union_ns(tbl) AS TABLE
SELECT lane,
       CAST(sum(greatest(0, end_ns - greatest(start_ns, coalesce(covered_until_ns, start_ns))))
            AS BIGINT) AS covered_ns
FROM _intervals_swept(tbl)
GROUP BY lane;

CREATE OR REPLACE MACRO intervals_after_gaps(tbl) AS TABLE
SELECT * EXCLUDE (covered_until_ns), covered_until_ns AS gap_start_ns
FROM _intervals_swept(tbl)
WHERE start_ns > covered_until_ns;

CREATE OR REPLACE MACRO intervals_gaps(tbl) AS TABLE
SELECT lane, gap_start_ns AS start_ns, start_ns AS end_ns
FROM intervals_after_gaps(tbl);

-- an interval that starts after everything before it has ended opens a stretch; the
-- stretch ends where the next one opens (at the furthest end before it) or at the
-- lane's last end
CREATE OR REPLACE MACRO intervals_union(tbl) AS TABLE
WITH opened AS (
    SELECT lane, start_ns, covered_until_ns,
           max(end_ns) OVER (PARTITION BY lane) AS lane_end_ns
    FROM _intervals_swept(tbl)
    QUALIFY covered_until_ns IS NULL OR start_ns > covered_until_ns
)
SELECT lane, start_ns,
       coalesce(lead(covered_until_ns) OVER (PARTITION BY lane ORDER BY start_ns), lane_end_ns)
           AS end_ns
FROM opened;

CREATE OR REPLACE MACRO intervals_overlap_count(tbl) AS TABLE
WITH edges AS (
    SELECT lane, ts, sum(delta) AS delta
    FROM (SELECT lane, start_ns AS ts, 1 AS delta FROM _intervals_valid(tbl)
          UNION ALL
          SELECT lane, end_ns, -1 FROM _intervals_valid(tbl))
    GROUP BY lane, ts
),
levels AS (
    SELECT lane, ts AS start_ns,
           lead(ts) OVER (PARTITION BY lane ORDER BY ts) AS end_ns,
           sum(delta) OVER (PARTITION BY lane ORDER BY ts ROWS UNBOUNDED PRECEDING) AS overlap_count
    FROM edges
)
SELECT lane, start_ns, end_ns, CAST(overlap_count AS BIGINT) AS overlap_count
FROM levels
WHERE end_ns IS NOT NULL;

-- each side's union, so that a stretch covered twice is covered by both sides
CREATE OR REPLACE MACRO intervals_intersect(a, b) AS TABLE
WITH both_unions AS (
    SELECT * FROM intervals_union(a)
    UNION ALL
    SELECT * FROM intervals_union(b)
)
SELECT lane, start_ns, end_ns
FROM intervals_overlap_count(both_unions)
WHERE overlap_count = 2;
