// Registers System V shared memory with CUDA as pega-server's pool is registered (cuMemHostRegister PORTABLE |
// DEVICEMAP) and copies through it both ways, byte-checked, at the link's rate: with pega.rdma.enabled the pool's
// shards are UCX-allocated shared memory (decision 0019), which the GPU path must take like its anonymous mappings.
//
//   shm_register [MiB, default 256]
#include <cuda.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check.h"


int main(int argc, char** argv) {
  size_t bytes = (size_t)(argc > 1 ? std::atoi(argv[1]) : 256) << 20;
  int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
  if (id < 0) { std::perror("shmget"); return 1; }
  char* host = (char*)shmat(id, nullptr, 0);
  shmctl(id, IPC_RMID, nullptr);  // freed once detached, as UCX does
  if (host == (char*)-1) { std::perror("shmat"); return 1; }
  CUcontext ctx = primaryContextOfDevice0();
  CK(cuMemHostRegister(host, bytes, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
  CUdeviceptr mapped;
  CK(cuMemHostGetDevicePointer(&mapped, host, 0));
  CUdeviceptr d;
  CK(cuMemAlloc(&d, bytes));
  CUstream s;
  CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (size_t i = 0; i < bytes; i++) host[i] = (char)(i * 31 + (i >> 13));
  auto t0 = std::chrono::steady_clock::now();
  CK(cuMemcpyHtoDAsync(d, host, bytes, s));
  CK(cuStreamSynchronize(s));
  double up = bytes / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1e9;
  std::memset(host, 0, bytes);
  t0 = std::chrono::steady_clock::now();
  CK(cuMemcpyDtoHAsync(host, d, bytes, s));
  CK(cuStreamSynchronize(s));
  double down = bytes / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1e9;
  size_t bad = 0;
  for (size_t i = 0; i < bytes; i++) bad += host[i] != (char)(i * 31 + (i >> 13));
  CK(cuMemHostUnregister(host));
  CK(cuMemFree(d));
  shmdt(host);
  std::printf("System V shared memory, %zu MiB, registered PORTABLE|DEVICEMAP (device pointer %s): H2D %.1f GB/s,"
              " D2H %.1f GB/s, %zu wrong bytes\n",
              bytes >> 20, mapped ? "mapped" : "none", up, down, bad);
  return bad == 0 ? 0 : 1;
}
