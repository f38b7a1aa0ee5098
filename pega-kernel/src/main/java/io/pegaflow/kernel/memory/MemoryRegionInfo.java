package io.pegaflow.kernel.memory;

/**
 * One shard's whole mapped region, for registering it with RDMA or CUDA once instead of per allocation.
 *
 * @param address first byte of the mapping
 * @param lengthBytes mapped length; can exceed the shard's allocatable bytes by the unit and huge-page rounding
 */
public record MemoryRegionInfo(long address, long lengthBytes) {

    /** Whether {@code [addr, addr + len)} lies entirely inside this region. */
    public boolean contains(long addr, long len) {
        return addr >= address && len >= 0 && addr - address <= lengthBytes - len;
    }
}
