-- op_category: the category of a PyTorch operator, defined once for every operator view:
-- 'gemm', 'conv', 'attention', 'norm', 'softmax', 'elementwise', 'reduction', 'embedding',
-- 'optimizer', 'communication', 'memcpy/memset' or 'other'. Autograd nodes
-- ('AddmmBackward0', 'autograd::engine::evaluate_function: AddmmBackward0') and backward
-- operators (aten::convolution_backward) get the category of their forward operator.
-- docs/operators.md lists the names behind each category.
--
-- depends: (none)
--
-- op_base_name(name): the lower-case operator name without namespace, autograd wrapper,
-- 'Backward0' / '_backward' suffix, in-place '_' suffix and underscores
-- ('aten::native_layer_norm_backward' and 'NativeLayerNormBackward0' -> 'nativelayernorm').
CREATE OR REPLACE MACRO op_base_name(name) AS
replace(regexp_replace(regexp_replace(lower(name),
        '^autograd::engine::evaluate_function: |^[a-z0-9_]+::', ''),
        '(_?backward[0-9]*(_data)?|_)$', ''), '_', '');

-- op_category_of_base(base, name): op_category for a name whose op_base_name is already known.
CREATE OR REPLACE MACRO op_category_of_base(b, name) AS
CASE
    WHEN regexp_matches(name, '^(c10d|nccl|gloo|record_param_comms)|^c10d::|^nccl:', 'i')
         OR regexp_matches(b, '^(allreduce|allgather.*|reducescatter.*|alltoall.*|broadcast|barrier|send|recv|recordparamcomms|allreducecoalesced|allgatherintotensor.*)$')
        THEN 'communication'
    WHEN regexp_matches(b, 'attention|attn|sdpa') THEN 'attention'
    WHEN regexp_matches(b, 'conv') THEN 'conv'
    WHEN regexp_matches(b, '^(mm|addmm|bmm|baddbmm|addbmm|matmul|linear|scaledmm|scaledgroupedmm|intmm|mv|addmv|dot|vdot|einsum|addr|groupedmm|tensordot|mmdtype|bilinear)$')
        THEN 'gemm'
    WHEN regexp_matches(b, 'layernorm|rmsnorm|batchnorm|groupnorm|instancenorm|batchnormelemt|batchnormgather')
        THEN 'norm'
    WHEN regexp_matches(b, 'softmax') THEN 'softmax'
    WHEN regexp_matches(b, 'embedding') THEN 'embedding'
    WHEN regexp_matches(b, '^foreach|^fused(adam|adamw|sgd|adagrad)|^optimizer|^(adam|adamw|sgd|lamb)step|zerograd')
        OR regexp_matches(name, '^Optimizer\.', 'i')
        THEN 'optimizer'
    WHEN regexp_matches(b, '^(copy|to|tocopy|clone|contiguous|fill|zero|zeros|zeroslike|ones|oneslike|full|fulllike|newzeros|newones|newfull|newemptystrided|memcpy|memset)$')
        THEN 'memcpy/memset'
    WHEN regexp_matches(b, '^(sum|mean|max|min|amax|amin|argmax|argmin|norm|linalgvectornorm|prod|var|std|varmean|stdmean|any|all|cumsum|cumprod|logsumexp|aminmax|nllloss.*|crossentropyloss|mseloss|l1loss|smoothl1loss|binarycrossentropy.*|count_nonzero|countnonzero)$')
        THEN 'reduction'
    WHEN regexp_matches(b, '^(add|sub|rsub|mul|div|neg|exp|exp2|expm1|log|log2|log10|log1p|sqrt|rsqrt|pow|square|tanh|sigmoid|relu|relu6|gelu|silu|mish|elu|selu|celu|leakyrelu|hardswish|hardsigmoid|hardtanh|softplus|threshold|where|clamp|clampmin|clampmax|clip|abs|sin|cos|tan|erf|erfinv|reciprocal|sign|floor|ceil|round|trunc|frac|addcmul|addcdiv|lerp|dropout|nativedropout|featuredropout|bernoulli|maskedfill|eq|ne|lt|gt|le|ge|minimum|maximum|logicaland|logicalor|logicalnot|bitwiseand|bitwiseor|bitwisenot|bitwisexor|isnan|isinf|nantonum|glu|swiglu|fmod|remainder|floordivide|triu|tril|clampmin|gelutanh|sgn|exponential|uniform|normal|randn|rand|randlike|randnlike)$')
        THEN 'elementwise'
    ELSE 'other'
END;

CREATE OR REPLACE MACRO op_category(name) AS op_category_of_base(op_base_name(name), name);
