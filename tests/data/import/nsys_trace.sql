-- A small Nsight Systems SQLite export (nsys 2024-era schema; column names and meanings as in the
-- schema nsys documents / prints with `nsys export --type sqlite`, see README.md). Built at test time.
-- Rows are inserted out of start order on purpose (nsys does not guarantee order).
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES
  (1, 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::Half>, at::detail::Array<char *, 1>>(int, T2, T3)'),
  (2, 'vectorized_elementwise_kernel'),
  (3, 'ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_32x3_nn'),
  (4, 'void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::Half, float, c10::Half, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)'),
  (5, 'cunn_SoftMaxForward'),
  (6, 'train_step'),
  (7, 'cudaLaunchKernel');
CREATE TABLE TARGET_INFO_GPU (
  vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER,
  l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER,
  pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, computeMajor INTEGER,
  computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100 80GB HBM3', '0000:1b:00.0', 1, 52428800, 85031714816,
  3352320000000, 1980000000, 132, 0, 'GPU-3f4b2a1c', NULL, 'GH100', 0, 9, 0, 9, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER,
  cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
  gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER,
  localMemoryTotal INTEGER, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,
  sharedMemoryLimitConfig INTEGER, graphId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (3010000, 3059000, 0, 1, NULL, 7, 212, 100, 3, 3, NULL, 0, 0, 232, 8, 16, 1, 256, 1, 1, 0, 73728, 0, 0, 21, 0, NULL, 1, NULL),
  (2000000, 2002500, 0, 1, NULL, 7, 101, 100, 1, 2, NULL, 0, 0, 16, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, 10, 0, NULL, 1, NULL),
  (2070000, 2078000, 0, 1, NULL, 7, 103, 100, 4, 5, NULL, 0, 0, 32, 4096, 1, 1, 128, 1, 1, 16, 0, 0, 0, 12, 0, NULL, 1, NULL),
  (2010000, 2060000, 0, 1, NULL, 7, 102, 100, 3, 3, NULL, 0, 0, 232, 8, 16, 1, 256, 1, 1, 0, 73728, 0, 0, 11, 0, NULL, 1, NULL),
  (3070000, 3078500, 0, 1, NULL, 7, 213, 100, 4, 5, NULL, 0, 0, 32, 4096, 1, 1, 128, 1, 1, 16, 0, 0, 0, 22, 0, NULL, 1, NULL),
  (3000000, 3002000, 0, 1, NULL, 7, 211, 100, 1, 2, NULL, 0, 0, 16, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, 20, 0, NULL, 1, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER,
  dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
  migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
  (4000000, 4004000, 0, 1, NULL, 7, 300, 100, 4194304, 2, NULL, 3, 0, 0, 1, NULL, NULL, NULL, NULL, NULL),
  (1000000, 1010000, 0, 1, NULL, 7, 90, 100, 16777216, 1, NULL, 0, 3, NULL, NULL, 0, 1, NULL, NULL, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (1995000, 1996000, 0, 1, NULL, 7, 95, 100, 0, 1048576, NULL, 3);
CREATE TABLE NVTX_EVENTS (
  start INTEGER NOT NULL, "end" INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER,
  color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,
  uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
INSERT INTO NVTX_EVENTS VALUES
  (2950000, 3900000, 59, NULL, NULL, NULL, 'train_step', 281474976710756, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (1900000, 2900000, 59, NULL, NULL, NULL, NULL, 281474976710756, NULL, 6, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (1900000, 1950000, 59, NULL, NULL, NULL, 'data_load', 281474976710756, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (1990000, NULL, 34, NULL, NULL, NULL, 'marker', 281474976710756, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
