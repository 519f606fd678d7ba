-- duration_stats(x): the statistics NVIDIA's nsys stats reports print for a group of
-- durations (aggregate; use with GROUP BY), as one struct:
--   total_ns   sum (BIGINT), instances  count, avg_ns  mean, med_ns  median (mean of the
--   middle two for even counts), min_ns, max_ns, stddev_ns  sample standard deviation
--   (0 for a single value). Select its fields with `s.*` or `unnest(s)`.
--
-- depends: (none)
CREATE OR REPLACE MACRO duration_stats(x) AS {
    'total_ns': CAST(sum(x) AS BIGINT),
    'instances': count(*),
    'avg_ns': avg(x),
    'med_ns': median(x),
    'min_ns': min(x),
    'max_ns': max(x),
    'stddev_ns': coalesce(stddev_samp(x), 0)
};
