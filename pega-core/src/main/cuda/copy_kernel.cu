// The cuda backend's gather/scatter copy kernel (docs/gpu.md, "Copy methods").
//
// One launch copies a list of fragments between device memory and the pinned pool, which the kernel reaches through
// the pool's mapped device address (the pool is registered with CU_MEMHOSTREGISTER_DEVICEMAP). The host side builds
// the descriptor array (CopyDescriptors.java), uploads it to device memory on the lane's stream and launches a small,
// fixed grid (at most pega.cuda.kernel-max-ctas CTAs, at most pega.cuda.kernel-max-launch-bytes per launch), so the
// kernel never holds more than a few SMs, and never for long, while the model runs beside it.
//
// Work split: one warp per fragment, warps striding over the list. A fragment is at most 64 KiB (the host splits
// longer ranges), so a warp's share is bounded and the few CTAs stay evenly loaded.
//
// Width: 16-byte vector loads and stores need source and destination 16-byte aligned to each other; the kernel picks
// the widest width at which the two addresses are co-aligned (16, 8, 4 or 1 byte), copies a head until the
// destination is aligned, the body at that width and the tail bytewise. Every fragment is copied correctly whatever
// its alignment; only its speed depends on it.
//
// Cache policy: streaming loads and stores (evict-first) so the copied bytes do not push the model's working set out
// of L2.
//
// Build: scripts/build-ptx.sh (nvcc -ptx); the PTX ships as a resource and is loaded with cuModuleLoadData.

namespace {

constexpr unsigned kWarpSize = 32;
constexpr unsigned kUnroll = 4;  // independent loads in flight per thread before the first store

struct CopyDescriptor {
    unsigned long long dst;
    unsigned long long src;
    unsigned long long bytes;
};

__device__ __forceinline__ int4 load_streaming(const int4* p) { return __ldcs(p); }
__device__ __forceinline__ unsigned long long load_streaming(const unsigned long long* p) { return __ldcs(p); }
__device__ __forceinline__ unsigned int load_streaming(const unsigned int* p) { return __ldcs(p); }
__device__ __forceinline__ void store_streaming(int4* p, int4 v) { __stcs(p, v); }
__device__ __forceinline__ void store_streaming(unsigned long long* p, unsigned long long v) { __stcs(p, v); }
__device__ __forceinline__ void store_streaming(unsigned int* p, unsigned int v) { __stcs(p, v); }

__device__ __forceinline__ void copy_bytes(char* dst, const char* src, unsigned long long n, unsigned lane) {
    for (unsigned long long i = lane; i < n; i += kWarpSize) {
        dst[i] = src[i];
    }
}

template <typename T>
__device__ __forceinline__ void copy_units(T* dst, const T* src, unsigned long long units, unsigned lane) {
    unsigned long long i = lane;
    for (; i + (kUnroll - 1) * kWarpSize < units; i += kUnroll * kWarpSize) {
        T v[kUnroll];
#pragma unroll
        for (unsigned u = 0; u < kUnroll; ++u) {
            v[u] = load_streaming(src + i + u * kWarpSize);
        }
#pragma unroll
        for (unsigned u = 0; u < kUnroll; ++u) {
            store_streaming(dst + i + u * kWarpSize, v[u]);
        }
    }
    for (; i < units; i += kWarpSize) {
        store_streaming(dst + i, load_streaming(src + i));
    }
}

template <typename T>
__device__ __forceinline__ void copy_at_width(char* dst, const char* src, unsigned long long n, unsigned lane) {
    constexpr unsigned long long kWidth = sizeof(T);
    unsigned long long head = (kWidth - (reinterpret_cast<unsigned long long>(dst) & (kWidth - 1))) & (kWidth - 1);
    if (head > n) {
        head = n;
    }
    copy_bytes(dst, src, head, lane);
    dst += head;
    src += head;
    n -= head;
    const unsigned long long units = n / kWidth;
    copy_units(reinterpret_cast<T*>(dst), reinterpret_cast<const T*>(src), units, lane);
    const unsigned long long body = units * kWidth;
    copy_bytes(dst + body, src + body, n - body, lane);
}

__device__ __forceinline__ void copy_fragment(const CopyDescriptor& d, unsigned lane) {
    char* dst = reinterpret_cast<char*>(d.dst);
    const char* src = reinterpret_cast<const char*>(d.src);
    const unsigned long long skew = d.dst ^ d.src;
    if ((skew & 15) == 0) {
        copy_at_width<int4>(dst, src, d.bytes, lane);
    } else if ((skew & 7) == 0) {
        copy_at_width<unsigned long long>(dst, src, d.bytes, lane);
    } else if ((skew & 3) == 0) {
        copy_at_width<unsigned int>(dst, src, d.bytes, lane);
    } else {
        copy_bytes(dst, src, d.bytes, lane);
    }
}

}  // namespace

// descriptors: `count` (dst, src, bytes) triples in device memory. Any grid and any block size that is a multiple of
// 32 threads (at most 1024) is correct.
extern "C" __global__ void __launch_bounds__(1024)
    pega_copy_fragments(const CopyDescriptor* __restrict__ descriptors, unsigned int count) {
    const unsigned lane = threadIdx.x & (kWarpSize - 1);
    const unsigned warps = gridDim.x * (blockDim.x / kWarpSize);
    for (unsigned f = blockIdx.x * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize; f < count; f += warps) {
        const CopyDescriptor d = descriptors[f];
        copy_fragment(d, lane);
    }
}
