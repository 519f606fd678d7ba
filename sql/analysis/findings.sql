-- findings: one row per detected problem, from every rule, with what was seen and
-- what to do. The rules: NVIDIA's four nsys analyze rules (findings_cuda_rules.sql),
-- the deep-learning rules (findings_dl_rules.sql), what bounds the steps
-- (findings_critical_path.sql), the memory rules (findings_memory.sql), the collective
-- rules (findings_collectives.sql) and the operator-efficiency rules (findings_op_efficiency.sql):
-- every view named finding_<rule>, whichever file creates it (finding_rule_rows, the union the
-- catalog writes: lake/catalog.py).
--
-- depends: traces, finding_rule_rows
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column rule         Rule name.
-- @column severity     'warning' or 'info'.
-- @column rank         Distributed rank of the trace (NULL when unknown).
-- @column pid          Process.
-- @column tid          Thread (NULL when not a host-side finding).
-- @column device_id    GPU (NULL for host-side findings).
-- @column stream_id    Stream (NULL for host-side findings).
-- @column start_ns     Start of the flagged operation or API call (ns).
-- @column duration_ns  Its duration (ns).
-- @column api_name     The API call involved, as recorded.
-- @column evidence     What was seen, in words.
-- @column advice       What to do about it.
CREATE OR REPLACE VIEW findings AS
SELECT r.trace_id, r.rule, r.severity, t.rank, r.pid, r.tid, r.device_id, r.stream_id,
       r.start_ns, r.duration_ns, r.api_name, r.evidence, r.advice
FROM finding_rule_rows r
JOIN traces t USING (trace_id);
