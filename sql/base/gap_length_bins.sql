-- gap_length_bins: the length classes of GPU idle gaps that gpu_gap_histogram counts (and
-- the trace page's "Idle gaps by length" chart shows, in this order): about 3 per decade
-- from 10 us to 1 s, then everything longer. One row per bin.
--
-- depends: (none)
--
-- @column bin_index  Order of the bin, 0 = the shortest gaps.
-- @column bin        Label ('10-30 µs', ..., '> 1 s').
-- @column min_ns     Shortest gap in the bin (ns, inclusive).
-- @column max_ns     Shortest gap of the next bin (ns, exclusive); NULL for the last bin.
CREATE OR REPLACE VIEW gap_length_bins AS
SELECT bin_index, bin, min_ns, lead(min_ns) OVER (ORDER BY bin_index) AS max_ns
FROM (VALUES (0, '10-30 µs', 10000::BIGINT), (1, '30-100 µs', 30000), (2, '0.1-0.3 ms', 100000),
             (3, '0.3-1 ms', 300000), (4, '1-3 ms', 1000000), (5, '3-10 ms', 3000000), (6, '10-30 ms', 10000000),
             (7, '30-100 ms', 30000000), (8, '0.1-1 s', 100000000), (9, '> 1 s', 1000000000))
     AS t(bin_index, bin, min_ns);
