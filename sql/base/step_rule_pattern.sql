-- step_rule_pattern(rule): the regular expression (case-insensitive) of one step rule, on a
-- range name with its NVTX domain prefix removed ('ProfilerStep#12', ':step 3' -> 'step 3') or,
-- for 'sglang', on a Python frame label. The one definition of the step markers: step_ranges,
-- the step_rules of steps.sql and analysis/critpath_graph.py read it. The patterns are constants,
-- so that each regular expression is compiled once per query, not once per row.
--   'profiler_step'   'ProfilerStep#12', 'step 3', 'step_3' (torch.profiler, training loops)
--   'vllm'            'execute_context_N(T)_generation_M(T)' and 'execute_I_context_N(...)_generation_M(...)'
--                     (v1 GPU worker, older and newer), 'execute_model'
--   'sglang'          ranges 'step[DECODE bs=32]', 'step[EXTEND bs=2 toks=107]', 'step[MIXED ...]',
--                     'step[PREFILL ...]', 'step[IDLE ...]'; Python frames
--                     'sglang/srt/managers/scheduler.py(N): run_batch' or '...: _run_batch_inner'
--   'record_function' 'iteration', 'request_3', 'iter#2', 'decode_5', 'prefill 1', 'generate_0',
--                     'infer 9', 'inference_2', and numbered 'forward_4', 'batch_11', 'token 3'
--
-- depends: (none)
CREATE OR REPLACE MACRO step_rule_pattern(rule) AS
CASE rule
    WHEN 'profiler_step' THEN '^(ProfilerStep#[0-9]+|step[ _#-]?[0-9]+)$'
    WHEN 'vllm' THEN '^(execute(_[0-9]+)?_context_[0-9]+\([^)]*\)_generation_[0-9]+\([^)]*\)|execute_model)$'
    WHEN 'sglang' THEN '^step\[(decode|extend|prefill|mixed|idle)( [^\]]*)?\]$'
                       || '|(^|/)sglang/srt/managers/scheduler\.py\([0-9]+\): _?run_batch(_inner)?$'
    WHEN 'record_function' THEN '^((request|req|iteration|iter|decode|prefill|generate|generation|infer|inference)'
                                || '([ _#:-]?[0-9]+)?|(forward|batch|token)[ _#:-]?[0-9]+)$'
END;
