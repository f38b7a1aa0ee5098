// What every probe needs: one error check (a failed driver call prints where and why and ends the probe) and
// device 0's primary context, current on the calling thread.
#pragma once
#include <cuda.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                              \
  do {                                                                                     \
    CUresult r_ = (x);                                                                     \
    if (r_ != CUDA_SUCCESS) {                                                              \
      const char* n_ = nullptr;                                                            \
      cuGetErrorName(r_, &n_);                                                             \
      std::fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, n_ ? n_ : "?");     \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

static inline CUcontext primaryContextOfDevice0() {
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  return ctx;
}
