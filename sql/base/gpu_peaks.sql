-- gpu_peaks: datasheet peak rates of GPUs, for rooflines and MFU. One row per GPU model:
-- dense (no structured sparsity) matrix-math peaks per data type and the memory
-- bandwidth, each row with the vendor document it comes from. NVIDIA datasheets quote
-- Tensor Core rates "with sparsity"; the dense rate is half of that and is what is
-- stored. fp32 is the highest dense FP32 rate for matrix math (NVIDIA: CUDA cores; AMD:
-- matrix cores); fp64 is the FP64 Tensor Core / matrix rate where the part has one. A
-- rate the document does not give is NULL, never a guess; so is a GPU not in the table.
--
-- Adding a GPU: `INSERT INTO gpu_peaks VALUES (...)` in a session (the views read the
-- table when queried), or a row here to keep it. name_pattern is a case-insensitive
-- regular expression matched against devices.name; when several rows match, the
-- longest pattern (the most specific) wins, and of patterns as long the first gpu name.
-- docs/operators.md lists the sources.
--
-- depends: devices
--
-- @column gpu           GPU model.
-- @column name_pattern  Regular expression matched against devices.name (case-insensitive).
-- @column fp64_tflops   Dense FP64 matrix peak (TFLOP/s).
-- @column fp32_tflops   Dense FP32 peak (TFLOP/s).
-- @column tf32_tflops   Dense TF32 Tensor Core / matrix peak (TFLOP/s).
-- @column fp16_tflops   Dense FP16 Tensor Core / matrix peak, FP32 accumulate where stated (TFLOP/s).
-- @column bf16_tflops   Dense BF16 peak (TFLOP/s).
-- @column fp8_tflops    Dense FP8 peak (TFLOP/s).
-- @column int8_tops     Dense INT8 peak (TOP/s).
-- @column memory_tbps   Peak memory bandwidth (TB/s, 1e12 bytes/s).
-- @column source        Vendor document the numbers come from.
CREATE OR REPLACE TABLE gpu_peaks (
    gpu VARCHAR, name_pattern VARCHAR, fp64_tflops DOUBLE, fp32_tflops DOUBLE, tf32_tflops DOUBLE,
    fp16_tflops DOUBLE, bf16_tflops DOUBLE, fp8_tflops DOUBLE, int8_tops DOUBLE, memory_tbps DOUBLE,
    source VARCHAR);
INSERT INTO gpu_peaks VALUES
    ('H100 SXM5 80GB', 'H100 80GB HBM3|H100 SXM', 67, 67, 494.5, 989.5, 989.5, 1979, 1979, 3.35,
     'NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column (sparsity rates halved)'),
    ('H100 PCIe 80GB', 'H100 PCIe', 51, 51, 378, 756.5, 756.5, 1513, 1513, 2.0,
     'NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe column (sparsity rates halved)'),
    ('H100 NVL 94GB', 'H100 NVL', 60, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5, 3.9,
     'NVIDIA H100 Tensor Core GPU datasheet, H100 NVL column (sparsity rates halved)'),
    ('H200 SXM 141GB', '^NVIDIA H200$|H200 SXM', 67, 67, 494.5, 989.5, 989.5, 1979, 1979, 4.8,
     'NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column (sparsity rates halved)'),
    ('H200 NVL 141GB', 'H200 NVL', 60, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5, 4.8,
     'NVIDIA H200 Tensor Core GPU datasheet, H200 NVL column (sparsity rates halved)'),
    ('H800 SXM5 80GB', '^NVIDIA H800$|H800 80GB HBM3|H800 SXM', 1, 67, 494.5, 989.5, 989.5, 1979, 1979, 3.35,
     'NVIDIA H800 Tensor Core GPU datasheet, SXM column (sparsity rates halved)'),
    ('B200 180GB', 'B200', 37, 75, 1125, 2250, 2250, 4500, 4500, 8.0,
     'NVIDIA HGX B200 datasheet (8-GPU figures / 8; sparsity rates halved)'),
    ('A100 SXM4 40GB', 'A100-SXM4-40GB|A100-PG509-200', 19.5, 19.5, 156, 312, 312, NULL, 624, 1.555,
     'NVIDIA A100 Tensor Core GPU datasheet, A100 40GB SXM column (PG509-200 is the HGX A100 40GB SXM4 board)'),
    ('A100 SXM4 80GB', 'A100-SXM4-80GB|A100-SXM-80GB', 19.5, 19.5, 156, 312, 312, NULL, 624, 2.039,
     'NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM column'),
    ('A100 PCIe 40GB', 'A100-PCIE-40GB', 19.5, 19.5, 156, 312, 312, NULL, 624, 1.555,
     'NVIDIA A100 Tensor Core GPU datasheet, A100 40GB PCIe column'),
    ('A100 PCIe 80GB', 'A100 80GB PCIe|A100-PCIE-80GB', 19.5, 19.5, 156, 312, 312, NULL, 624, 1.935,
     'NVIDIA A100 Tensor Core GPU datasheet, A100 80GB PCIe column'),
    ('A40', '^NVIDIA A40$', NULL, 37.4, 74.8, 149.7, 149.7, NULL, 299.3, 0.696,
     'NVIDIA A40 datasheet (sparsity rates halved)'),
    ('A10', '^NVIDIA A10$', NULL, 31.2, 62.5, 125, 125, NULL, 250, 0.6,
     'NVIDIA A10 Tensor Core GPU datasheet (sparsity rates halved)'),
    ('L4', '^NVIDIA L4$', NULL, 30.3, 60, 121, 121, 242.5, 242.5, 0.3,
     'NVIDIA L4 Tensor Core GPU datasheet (sparsity rates halved)'),
    ('L40S', 'L40S', NULL, 91.6, 183, 362, 362, 733, 733, 0.864,
     'NVIDIA L40S datasheet (sparsity rates halved)'),
    ('V100 SXM2', 'V100-SXM2|V100-DGXS', 7.8, 15.7, NULL, 125, NULL, NULL, NULL, 0.9,
     'NVIDIA Tesla V100 datasheet, SXM2 column (DGXS is the SXM2 V100 of the DGX Station)'),
    ('V100 PCIe', 'V100-PCIE', 7, 14, NULL, 112, NULL, NULL, NULL, 0.9,
     'NVIDIA Tesla V100 datasheet, PCIe column'),
    ('T4', 'Tesla T4|^NVIDIA T4$', NULL, 8.1, NULL, 65, NULL, NULL, 130, 0.32,
     'NVIDIA T4 Tensor Core GPU datasheet'),
    ('GeForce RTX 2070 SUPER', 'RTX 2070 SUPER', NULL, 9.06, NULL, NULL, NULL, NULL, NULL, 0.448,
     'NVIDIA GeForce RTX 2070 SUPER specifications: 2560 CUDA cores x 2 x 1.77 GHz boost; 14 Gbps x 256-bit'),
    ('GeForce RTX 3060', 'RTX 3060$', NULL, 12.74, NULL, NULL, NULL, NULL, NULL, 0.36,
     'NVIDIA GeForce RTX 3060 specifications: 3584 CUDA cores x 2 x 1.777 GHz boost; 15 Gbps x 192-bit'),
    ('GeForce RTX 4060 Ti', 'RTX 4060 Ti', NULL, 22.06, NULL, NULL, NULL, NULL, NULL, 0.288,
     'NVIDIA GeForce RTX 4060 Ti specifications: 4352 CUDA cores x 2 x 2.535 GHz boost; 18 Gbps x 128-bit'),
    ('Instinct MI250X', 'MI250X', 95.7, 95.7, NULL, 383, 383, NULL, 383, 3.2768,
     'AMD Instinct MI250X data sheet (matrix rates)'),
    ('Instinct MI250', 'MI250($|[^X])', 90.5, 90.5, NULL, 362.1, 362.1, NULL, 362.1, 3.2768,
     'AMD Instinct MI250 data sheet (matrix rates)'),
    ('Instinct MI300X', 'MI300X', 163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 5.3,
     'AMD Instinct MI300X data sheet (dense matrix rates)');

-- device_peaks: each GPU of each trace with its gpu_peaks row (NULL peaks when the
-- GPU is not in the table), with the gpu_peaks columns above.
--
-- @column trace_id   Trace.
-- @column device_id  GPU.
-- @column device     devices.name.
-- @column gpu        Matched gpu_peaks.gpu (NULL when no row matches): the longest matching
--                    pattern's, of patterns as long the first name; every peak is that row's.
CREATE OR REPLACE VIEW device_peaks AS
WITH matched AS (
    -- one gpu_peaks row per GPU: the longest pattern; of patterns as long, the first gpu name
    SELECT d.trace_id, d.device_id, d.name AS device, arg_min(p, (-length(p.name_pattern), p.gpu)) AS p
    FROM devices d
    LEFT JOIN gpu_peaks p ON regexp_matches(d.name, p.name_pattern, 'i')
    GROUP BY d.trace_id, d.device_id, d.name
)
SELECT trace_id, device_id, device, p.gpu, p.fp64_tflops, p.fp32_tflops, p.tf32_tflops, p.fp16_tflops,
       p.bf16_tflops, p.fp8_tflops, p.int8_tops, p.memory_tbps, p.name_pattern, p.source
FROM matched;

-- peak_tflops_of(peaks, precision): the peak of one precision ('fp64', 'fp32', 'tf32',
-- 'fp16', 'bf16', 'fp8', 'int8') from a device_peaks row (a struct).
CREATE OR REPLACE MACRO peak_tflops_of(p, precision) AS
CASE precision WHEN 'fp64' THEN p.fp64_tflops WHEN 'fp32' THEN p.fp32_tflops
               WHEN 'tf32' THEN p.tf32_tflops WHEN 'fp16' THEN p.fp16_tflops
               WHEN 'bf16' THEN p.bf16_tflops WHEN 'fp8' THEN p.fp8_tflops
               WHEN 'int8' THEN p.int8_tops END;
