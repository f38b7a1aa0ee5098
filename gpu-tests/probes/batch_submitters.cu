// cuMemcpyBatchAsync issued by 1..N host threads, each on its own stream, for the plans pega-server's copier makes:
// L layers x B blocks x P planes of F-byte fragments, device slots scattered over twice as many, host side packed
// (docs/gpu.md "Submitting threads", decision 0015). Prints GB/s per direction against the contiguous copy of the
// same bytes in the same run. Build and run with gpu-tests/probes/run.sh.
//
//   batch_submitters [--layers 36] [--blocks 1024] [--planes 2] [--frags 16,32,64] (KiB) [--threads 1,2,3]
//                    [--call 256] [--runs 5] [--pairs 0|1]
// --pairs 1 adds rows for cuMemcpy3DBatchAsync: one op of two rows per (layer, block), the K and V planes (pitch =
// the plane stride on each side), so the driver gets half the descriptors of the same bytes.
// --order stream|any sets the batch's srcAccessOrder (STREAM, the copier's, or ANY: the driver may read the source
// out of stream order, which the copier could allow because every plan is synchronized before its memory is reused).
// --staged MiB adds rows for copies staged through device memory: per chunk of that many bytes, one batch of
// device-to-device copies between the scattered fragments and a staging buffer, and one batch of the host side's
// contiguous runs between the staging buffer and the host, pipelined over --buffers buffers per thread.
#include <cuda.h>
#include <cuda_runtime.h>

#include "check.h"

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


static std::vector<int> list(const char* s) {
  std::vector<int> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::atoi(item.c_str()));
  return v;
}

static CUmemcpySrcAccessOrder srcOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;

struct Plan {
  std::vector<CUdeviceptr> dst, src;
  std::vector<size_t> size;
  size_t bytes = 0;
  std::vector<CUDA_MEMCPY3D_BATCH_OP> ops;  // the same bytes as two-row ops, when paired
};

// n entries issued as calls of `call`, split into `threads` contiguous slices of whole calls, slice t by thread t on
// streams[t]; returns GB/s for `bytes` once every stream is drained.
template <typename Issue>
static double sliced(size_t n, size_t bytes, int threads, int call, CUcontext ctx, std::vector<CUstream>& streams,
                     Issue issue) {
  size_t calls = (n + call - 1) / call;
  auto t0 = std::chrono::steady_clock::now();
  auto slice = [&](int t) {
    CK(cuCtxSetCurrent(ctx));
    for (size_t c = calls * t / threads; c < calls * (t + 1) / threads; c++) {
      size_t at = c * call;
      issue(at, std::min((size_t)call, n - at), streams[t]);
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; t++) helpers.emplace_back(slice, t);
  slice(0);
  for (auto& h : helpers) h.join();
  for (int t = 0; t < threads; t++) CK(cuStreamSynchronize(streams[t]));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return bytes / s / 1e9;
}

// Plane 1 of each (layer, block) is ranges [l*planes*blocks + blocks + b]; pair it with plane 0.
static void pair(Plan& p, int layers, int blocks, bool reversed) {
  size_t n = p.size.size();
  for (int l = 0; l < layers; l++)
    for (int b = 0; b < blocks; b++) {
      size_t k = (size_t)l * 2 * blocks + b, v = k + blocks;
      if (reversed) { k = n - 1 - k; v = n - 1 - v; }
      CUDA_MEMCPY3D_BATCH_OP op;
      std::memset(&op, 0, sizeof op);
      op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
      op.src.op.ptr.ptr = p.src[k];
      op.src.op.ptr.rowLength = p.src[v] - p.src[k];
      op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
      op.dst.op.ptr.ptr = p.dst[k];
      op.dst.op.ptr.rowLength = p.dst[v] - p.dst[k];
      op.extent.width = p.size[k];
      op.extent.height = 2;
      op.extent.depth = 1;
      op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
      p.ops.push_back(op);
    }
}

static double run3d(const Plan& p, int threads, int call, CUcontext ctx, std::vector<CUstream>& streams) {
  return sliced(p.ops.size(), p.bytes, threads, call, ctx, streams, [&](size_t at, size_t len, CUstream st) {
    CK(cuMemcpy3DBatchAsync(len, (CUDA_MEMCPY3D_BATCH_OP*)&p.ops[at], 0, st));
  });
}

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
  CUmemcpyAttributes attr;
  std::memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = srcOrder;
  return sliced(p.size.size(), p.bytes, threads, call, ctx, streams, [&](size_t at, size_t len, CUstream st) {
    size_t idx = 0;
    CK(cuMemcpyBatchAsync((CUdeviceptr*)&p.dst[at], (CUdeviceptr*)&p.src[at], (size_t*)&p.size[at], len, &attr, &idx,
                          1, st));
  });
}

struct Stager {
  std::vector<CUdeviceptr> buf;
  std::vector<CUevent> gathered, flushed;
  std::vector<CUstream> gs, fs;
};

static Stager stager(int threads, int buffers, size_t chunk) {
  Stager st;
  for (int i = 0; i < threads * buffers; i++) {
    CUdeviceptr b;
    CK(cuMemAlloc(&b, chunk));
    st.buf.push_back(b);
    CUevent e1, e2;
    CK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    st.gathered.push_back(e1);
    st.flushed.push_back(e2);
  }
  for (int t = 0; t < threads; t++) {
    CUstream a, b;
    CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    st.gs.push_back(a);
    st.fs.push_back(b);
  }
  return st;
}

static void batch(std::vector<CUdeviceptr>& d, std::vector<CUdeviceptr>& s, std::vector<size_t>& z, int call,
                  CUstream st) {
  CUmemcpyAttributes attr;
  std::memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = srcOrder;
  size_t idx = 0;
  for (size_t at = 0; at < z.size(); at += call) {
    size_t len = std::min((size_t)call, z.size() - at);
    CK(cuMemcpyBatchAsync(&d[at], &s[at], &z[at], len, &attr, &idx, 1, st));
  }
}

// Save (toHost): scattered device -> staging (D2D) -> host runs. Load: host runs -> staging -> scattered device.
// Chunk c goes to thread c % threads, buffer (c / threads) % buffers of that thread.
static double runStaged(const Plan& p, bool toHost, size_t chunk, int threads, int buffers, int call, CUcontext ctx,
                        Stager& st) {
  size_t n = p.size.size();
  std::vector<size_t> starts;
  size_t acc = 0;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || acc + p.size[i] > chunk) { starts.push_back(i); acc = 0; }
    acc += p.size[i];
  }
  starts.push_back(n);
  size_t chunks = starts.size() - 1;
  auto t0 = std::chrono::steady_clock::now();
  auto worker = [&](int t) {
    CK(cuCtxSetCurrent(ctx));
    std::vector<CUdeviceptr> dd, ds, hd, hs;
    std::vector<size_t> dz, hz;
    size_t use = 0;
    for (size_t c = t; c < chunks; c += threads, use++) {
      int k = t * buffers + (int)(use % buffers);
      CUdeviceptr b = st.buf[k];
      dd.clear(); ds.clear(); dz.clear(); hd.clear(); hs.clear(); hz.clear();
      size_t off = 0;
      for (size_t i = starts[c]; i < starts[c + 1]; i++) {
        CUdeviceptr dev = toHost ? p.src[i] : p.dst[i], host = toHost ? p.dst[i] : p.src[i];
        dd.push_back(toHost ? b + off : dev);
        ds.push_back(toHost ? dev : b + off);
        dz.push_back(p.size[i]);
        if (!hz.empty() && (toHost ? hd.back() : hs.back()) + hz.back() == host) {
          hz.back() += p.size[i];
        } else {
          hd.push_back(toHost ? host : b + off);
          hs.push_back(toHost ? b + off : host);
          hz.push_back(p.size[i]);
        }
        off += p.size[i];
      }
      CUstream first = toHost ? st.gs[t] : st.fs[t], second = toHost ? st.fs[t] : st.gs[t];
      // the buffer is free once the second step of its previous chunk finished
      CK(cuStreamWaitEvent(first, st.flushed[k], 0));
      if (toHost) batch(dd, ds, dz, call, first); else batch(hd, hs, hz, call, first);
      CK(cuEventRecord(st.gathered[k], first));
      CK(cuStreamWaitEvent(second, st.gathered[k], 0));
      if (toHost) batch(hd, hs, hz, call, second); else batch(dd, ds, dz, call, second);
      CK(cuEventRecord(st.flushed[k], second));
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; t++) helpers.emplace_back(worker, t);
  worker(0);
  for (auto& h : helpers) h.join();
  for (int t = 0; t < threads; t++) {
    CK(cuStreamSynchronize(st.gs[t]));
    CK(cuStreamSynchronize(st.fs[t]));
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p.bytes / s / 1e9;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  int layers = 36, blocks = 1024, planes = 2, call = 256, runs = 5, pairs = 0, staged = 0, buffers = 2;
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
    else if (k == "--pairs") pairs = std::atoi(v);
    else if (k == "--staged") staged = std::atoi(v);
    else if (k == "--buffers") buffers = std::atoi(v);
    else if (k == "--order") srcOrder = std::string(v) == "any" ? CU_MEMCPY_SRC_ACCESS_ORDER_ANY
                                                                 : CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  }
  CUcontext ctx = primaryContextOfDevice0();
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
  std::printf("| fragment | descriptors | contiguous D2H / H2D | threads | Save D2H | ratio | Load H2D | ratio |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int f : frags) {
    size_t frag = (size_t)f * 1024;
    Plan save = make(dA, (char*)host, layers, blocks, planes, frag, true, 7);
    Plan load = make(dB, (char*)host + most, layers, blocks, planes, frag, false, 9);
    if (pairs && planes == 2) {
      pair(save, layers, blocks, false);
      pair(load, layers, blocks, true);
    }
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
      if (staged) {
        Stager st = stager(t, buffers, (size_t)staged << 20);
        s.clear();
        l.clear();
        runStaged(save, true, (size_t)staged << 20, t, buffers, call, ctx, st);
        for (int r = 0; r < runs; r++) s.push_back(runStaged(save, true, (size_t)staged << 20, t, buffers, call, ctx, st));
        runStaged(load, false, (size_t)staged << 20, t, buffers, call, ctx, st);
        for (int r = 0; r < runs; r++) l.push_back(runStaged(load, false, (size_t)staged << 20, t, buffers, call, ctx, st));
        double a1 = median(s), a2 = median(l);
        std::printf("| %d KiB | %zu staged, %d MiB x %d | %.1f / %.1f | %d | %.1f | %.2f | %.1f | %.2f |\n", f,
                    save.size.size(), staged, buffers, c2h, c2d, t, a1, a1 / c2h, a2, a2 / c2d);
        std::fflush(stdout);
        for (CUdeviceptr b : st.buf) CK(cuMemFree(b));
      }
      if (save.ops.empty()) continue;
      s.clear();
      l.clear();
      run3d(save, t, call, ctx, streams);
      for (int r = 0; r < runs; r++) s.push_back(run3d(save, t, call, ctx, streams));
      run3d(load, t, call, ctx, streams);
      for (int r = 0; r < runs; r++) l.push_back(run3d(load, t, call, ctx, streams));
      ms = median(s), ml = median(l);
      std::printf("| %d KiB | %zu two-row ops | %.1f / %.1f | %d | %.1f | %.2f | %.1f | %.2f |\n", f, save.ops.size(),
                  c2h, c2d, t, ms, ms / c2h, ml, ml / c2d);
      std::fflush(stdout);
    }
  }
  CK(cuMemFreeHost(host));
  CK(cuMemFree(dA));
  CK(cuMemFree(dB));
  return 0;
}
