-- An older / thinner Nsight Systems export: the kernel table has only shortName (no demangledName,
-- mangledName, greenContextId, graph columns), no MEMSET or NVTX tables, and the GPU is a board
-- variant the database does not list by name (resolved by SM count, compute capability and memory).
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'volta_sgemm_128x64_nn'), (2, 'elementwise_kernel');
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, totalMemory INTEGER, smCount INTEGER,
  computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA A100-PG509-200', 42314694656, 108, 8, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, shortName INTEGER NOT NULL, registersPerThread INTEGER,
  gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER,
  staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (5000, 9000, 0, 1, 13, 5, 1, 2, 20, 256, 1, 1, 512, 1, 1, 0, 0),
  (1000, 4500, 0, 1, 13, 4, 1, 1, 128, 64, 2, 1, 256, 1, 1, 12288, 4096);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (10000, 10500, 0, 13, 65536, 8);
