-- idle_cause(launch_start_ns, idle_start_ns, idle_ns, kernel_wait_max_ns, in_graph): why
-- the GPU (or one stream) sat idle before an operation: the one vocabulary of every
-- view and page that explains idle time, HTA's idle time breakdown, and CUDA graphs:
--   'in_graph'    the operation and the one that ended just before the idle time belong
--                 to one CUDA graph replay (the same graph launch call): the GPU followed
--                 the graph's own dependencies, the host had no part in it (checked first);
--   'host_wait'   the API call that launched the operation began after the idle time
--                 began: the CPU did not enqueue work in time (Python overhead, data
--                 loading, a synchronization);
--   'kernel_wait' it was launched in time and the idle time is shorter than
--                 kernel_wait_max_ns: the normal overhead between back-to-back kernels;
--   'other'       it was launched in time (or no launch call was recorded) and the GPU
--                 waited longer: on something else (an event, another stream, a copy).
-- idle_cause_kernel_wait_max_ns(): the default threshold, 30,000 ns (30 us): HTA's
-- 'consecutive_kernel_delay = 30', which HTA documents as ns but compares with us.
--
-- depends: (none)
CREATE OR REPLACE MACRO idle_cause_kernel_wait_max_ns() AS 30000;

CREATE OR REPLACE MACRO idle_cause(launch_start_ns, idle_start_ns, idle_ns,
                                   kernel_wait_max_ns := idle_cause_kernel_wait_max_ns(), in_graph := false) AS
CASE WHEN in_graph THEN 'in_graph'
     WHEN launch_start_ns > idle_start_ns THEN 'host_wait'
     WHEN idle_ns < kernel_wait_max_ns THEN 'kernel_wait'
     ELSE 'other' END;
