// cuMemcpyBatchAsync issued by 1..N host threads, each on its own stream, for the plans pega-server's copier makes:
// L layers x B blocks x P planes of F-byte fragments, device slots scattered over twice as many, host side packed
// (docs/gpu.md "Submitting threads", decision 0015). Prints GB/s per direction against the contiguous copy of the
// same bytes in the same run. Build and run with gpu-tests/probes/run.sh.
//
//   batch_submitters [--layers 36] [--blocks 1024] [--planes 2] [--frags 16,32,64] (KiB) [--threads 1,2,3]
//                    [--call 256] [--runs 5]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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

static std::vector<int> list(const char* s) {
  std::vector<int> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::atoi(item.c_str()));
  return v;
}

struct Plan {
  std::vector<CUdeviceptr> dst, src;
  std::vector<size_t> size;
  size_t bytes = 0;
};

// toHost: device -> host (Save); else host -> device (Load), device slots in reverse order of the save plan's.
static Plan make(CUdeviceptr dev, char* host, int layers, int blocks, int planes, size_t frag, bool toHost,
                 unsigned seed) {
  int slots = 2 * blocks;
  std::vector<int> slot(slots);
  std::iota(slot.begin(), slot.end(), 0);
  std::shuffle(slot.begin(), slot.end(), std::mt19937(seed));
  Plan p;
  size_t h = 0;
  for (int l = 0; l < layers; l++)
    for (int s = 0; s < planes; s++)
      for (int b = 0; b < blocks; b++) {
        CUdeviceptr d = dev + ((size_t)l * planes * slots + (size_t)s * slots + slot[b]) * frag;
        CUdeviceptr hp = (CUdeviceptr)(host + h);
        p.dst.push_back(toHost ? hp : d);
        p.src.push_back(toHost ? d : hp);
        p.size.push_back(frag);
        h += frag;
      }
  p.bytes = h;
  if (!toHost) {
    std::reverse(p.dst.begin(), p.dst.end());
    std::reverse(p.src.begin(), p.src.end());
  }
  return p;
}

// Calls of `call` ranges, split into `threads` contiguous slices of whole calls, each on its own stream.
static double run(const Plan& p, int threads, int call, CUcontext ctx, std::vector<CUstream>& streams) {
  size_t n = p.size.size();
  size_t calls = (n + call - 1) / call;
  CUmemcpyAttributes attr;
  std::memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  size_t idx = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto slice = [&](int t) {
    CK(cuCtxSetCurrent(ctx));
    size_t first = calls * t / threads, end = calls * (t + 1) / threads;
    for (size_t c = first; c < end; c++) {
      size_t at = c * call, len = std::min((size_t)call, n - at);
      CK(cuMemcpyBatchAsync((CUdeviceptr*)&p.dst[at], (CUdeviceptr*)&p.src[at], (size_t*)&p.size[at], len, &attr,
                            &idx, 1, streams[t]));
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; t++) helpers.emplace_back(slice, t);
  slice(0);
  for (auto& h : helpers) h.join();
  for (int t = 0; t < threads; t++) CK(cuStreamSynchronize(streams[t]));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p.bytes / s / 1e9;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  int layers = 36, blocks = 1024, planes = 2, call = 256, runs = 5;
  std::vector<int> frags = {16, 32, 64}, threadCounts = {1, 2, 3};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--layers") layers = std::atoi(v);
    else if (k == "--blocks") blocks = std::atoi(v);
    else if (k == "--planes") planes = std::atoi(v);
    else if (k == "--frags") frags = list(v);
    else if (k == "--threads") threadCounts = list(v);
    else if (k == "--call") call = std::atoi(v);
    else if (k == "--runs") runs = std::atoi(v);
  }
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  int maxThreads = *std::max_element(threadCounts.begin(), threadCounts.end());
  std::vector<CUstream> streams(maxThreads);
  for (auto& s : streams) CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  size_t most = (size_t)layers * blocks * planes * (size_t)(*std::max_element(frags.begin(), frags.end())) * 1024;
  CUdeviceptr dA, dB;
  CK(cuMemAlloc(&dA, 2 * most));
  CK(cuMemAlloc(&dB, 2 * most));
  void* host;
  CK(cuMemHostAlloc(&host, 2 * most, CU_MEMHOSTALLOC_PORTABLE));
  std::memset(host, 0x11, 2 * most);
  CK(cuMemsetD8(dA, 0x5a, 2 * most));
  std::printf("| fragment | ranges | contiguous D2H / H2D | threads | Save D2H | ratio | Load H2D | ratio |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int f : frags) {
    size_t frag = (size_t)f * 1024;
    Plan save = make(dA, (char*)host, layers, blocks, planes, frag, true, 7);
    Plan load = make(dB, (char*)host + most, layers, blocks, planes, frag, false, 9);
    Plan up, down;
    up.dst = {(CUdeviceptr)host}; up.src = {dA}; up.size = {save.bytes}; up.bytes = save.bytes;
    down.dst = {dB}; down.src = {(CUdeviceptr)((char*)host + most)}; down.size = {save.bytes}; down.bytes = save.bytes;
    std::vector<double> a, b;
    run(up, 1, call, ctx, streams);
    for (int r = 0; r < runs; r++) a.push_back(run(up, 1, call, ctx, streams));
    run(down, 1, call, ctx, streams);
    for (int r = 0; r < runs; r++) b.push_back(run(down, 1, call, ctx, streams));
    double c2h = median(a), c2d = median(b);
    for (int t : threadCounts) {
      std::vector<double> s, l;
      run(save, t, call, ctx, streams);
      for (int r = 0; r < runs; r++) s.push_back(run(save, t, call, ctx, streams));
      run(load, t, call, ctx, streams);
      for (int r = 0; r < runs; r++) l.push_back(run(load, t, call, ctx, streams));
      double ms = median(s), ml = median(l);
      std::printf("| %d KiB | %zu | %.1f / %.1f | %d | %.1f | %.2f | %.1f | %.2f |\n", f, save.size.size(), c2h, c2d,
                  t, ms, ms / c2h, ml, ml / c2d);
      std::fflush(stdout);
    }
  }
  CK(cuMemFreeHost(host));
  CK(cuMemFree(dA));
  CK(cuMemFree(dB));
  return 0;
}
