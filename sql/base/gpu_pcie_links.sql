-- gpu_pcie_links: the host link of GPU models, PCIe generation and lanes as the vendor's
-- datasheet gives them, for turning Nsight's PCIe throughput percentages into GB/s (the
-- export records the GPU's name but not the link it trained). One row per GPU model;
-- name_pattern is a case-insensitive regular expression matched against devices.name, the
-- longest matching pattern wins, of patterns as long the first gpu name (as gpu_peaks). A
-- GPU not in the table gets no PCIe GB/s.
-- pcie_gb_per_s(generation, lanes): the link's peak data rate per direction in GB/s
-- (1e9 bytes/s) after line encoding, from the PCI-SIG base specifications' transfer rates:
-- Gen1 2.5 GT/s and Gen2 5 GT/s with 8b/10b, Gen3 8, Gen4 16 and Gen5 32 GT/s with
-- 128b/130b (Gen5 x16: 32 x 16 x 128/130 / 8 = 63.0 GB/s). It counts the bytes on the wire,
-- packet headers included, as Nsight's 'PCIe RX/TX Throughput' do; payload rates are lower.
--
-- depends: (none)
--
-- @column gpu              GPU model.
-- @column name_pattern     Regular expression matched against devices.name (case-insensitive).
-- @column pcie_generation  PCIe generation of the GPU's host interface.
-- @column pcie_lanes       Lanes (link width).
-- @column source           Vendor document the link comes from.
CREATE OR REPLACE TABLE gpu_pcie_links (
    gpu VARCHAR, name_pattern VARCHAR, pcie_generation INTEGER, pcie_lanes INTEGER, source VARCHAR);
INSERT INTO gpu_pcie_links VALUES
    ('H100 SXM5 80GB', 'H100 80GB HBM3|H100 SXM', 5, 16, 'NVIDIA H100 Tensor Core GPU datasheet: PCIe Gen5 128 GB/s'),
    ('H100 PCIe 80GB', 'H100 PCIe', 5, 16, 'NVIDIA H100 Tensor Core GPU datasheet: PCIe Gen5 128 GB/s'),
    ('H100 NVL 94GB', 'H100 NVL', 5, 16, 'NVIDIA H100 Tensor Core GPU datasheet: PCIe Gen5 128 GB/s'),
    ('H200 141GB', 'H200', 5, 16, 'NVIDIA H200 Tensor Core GPU datasheet: PCIe Gen5 128 GB/s'),
    ('H800 80GB', 'H800', 5, 16, 'NVIDIA H800 Tensor Core GPU datasheet: PCIe Gen5 128 GB/s'),
    ('A100', 'A100', 4, 16, 'NVIDIA A100 Tensor Core GPU datasheet: PCIe Gen4 64 GB/s'),
    ('A40', '^NVIDIA A40$', 4, 16, 'NVIDIA A40 datasheet: PCI Express Gen 4 x16'),
    ('A10', '^NVIDIA A10$', 4, 16, 'NVIDIA A10 Tensor Core GPU datasheet: PCIe Gen4 64 GB/s'),
    ('L4', '^NVIDIA L4$', 4, 16, 'NVIDIA L4 Tensor Core GPU datasheet: PCIe Gen4 x16 64 GB/s'),
    ('L40S', 'L40S', 4, 16, 'NVIDIA L40S datasheet: PCIe Gen4 x16 64 GB/s bidirectional'),
    ('V100', 'V100', 3, 16, 'NVIDIA Tesla V100 datasheet: PCIe 32 GB/s (Gen3 x16)'),
    ('T4', 'Tesla T4|^NVIDIA T4$', 3, 16, 'NVIDIA T4 Tensor Core GPU datasheet: PCIe Gen3 x16'),
    ('GeForce RTX 2070 SUPER', 'RTX 2070 SUPER', 3, 16, 'NVIDIA GeForce RTX 2070 SUPER specifications: PCI Express 3.0'),
    ('GeForce RTX 3060', 'RTX 3060$', 4, 16, 'NVIDIA GeForce RTX 3060 specifications: PCI Express 4.0'),
    ('GeForce RTX 4060 Ti', 'RTX 4060 Ti', 4, 8, 'NVIDIA GeForce RTX 4060 Ti specifications: PCI Express 4.0 x8');

CREATE OR REPLACE MACRO pcie_gb_per_s(generation, lanes) AS
lanes * CASE generation WHEN 1 THEN 2.5 * 8 / 10 WHEN 2 THEN 5.0 * 8 / 10 WHEN 3 THEN 8.0 * 128 / 130
                        WHEN 4 THEN 16.0 * 128 / 130 WHEN 5 THEN 32.0 * 128 / 130 END / 8;
