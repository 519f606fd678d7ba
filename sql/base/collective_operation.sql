-- collective_operation(label): one spelling for the operation of a collective, which
-- PyTorch (record_param_comms 'Collective name', nccl:* and c10d:: op names), NCCL/RCCL
-- kernel names and NCCL's NVTX ranges write in many ways: 'all_reduce', 'all_gather',
-- 'reduce_scatter', 'all_to_all', 'broadcast', 'reduce', 'send', 'recv', 'send_recv',
-- 'gather', 'scatter' or 'barrier' for 'allreduce', 'nccl:all_reduce',
-- 'c10d::_allgather_base_', '_reduce_scatter_base', 'all_to_all_single', 'ncclAllReduce'
-- or 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)'; NULL otherwise (RCCL's
-- 'ncclDevKernel_Generic', 'ncclGroupEnd').
--
-- depends: (none)

CREATE OR REPLACE MACRO collective_operation(label) AS
MAP {'allreduce': 'all_reduce', 'allgather': 'all_gather', 'reducescatter': 'reduce_scatter',
     'alltoall': 'all_to_all', 'alltoallv': 'all_to_all', 'broadcast': 'broadcast', 'reduce': 'reduce',
     'send': 'send', 'recv': 'recv', 'sendrecv': 'send_recv', 'gather': 'gather', 'scatter': 'scatter',
     'barrier': 'barrier', 'allreducebarrier': 'barrier'}[
    regexp_replace(
        lower(coalesce(nullif(regexp_extract(label, '^(?:nccl|rccl)(?:Dev)?Kernel_([A-Za-z]+)', 1, 'i'), ''),
                       regexp_replace(label, '^(nccl:|c10d::|nccl|rccl)', '', 'i'))),
        '(_base|_coalesced|_into_tensor|_tensor|_single|[_ ])', '', 'g')];
