package io.pegaflow.core.device.cuda;

import com.sun.jna.Pointer;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.sys.LibC;
import io.pegaflow.sys.Posix;

/** An anonymous, pre-touched host mapping for GPU tests; the backend registers it with the driver. */
final class GpuHostBuffer implements AutoCloseable {
    final long address;
    final long length;

    GpuHostBuffer(long length) {
        this.length = length;
        this.address = Posix.mmapAnonymous(length, false);
        LibC.memset(address, 0, length);
    }

    MemoryRegionInfo region() {
        return new MemoryRegionInfo(address, length);
    }

    byte get(long offset) {
        return new Pointer(address).getByte(offset);
    }

    byte[] read(long offset, int n) {
        return new Pointer(address).getByteArray(offset, n);
    }

    void fill(long offset, long n, int value) {
        LibC.memset(address + offset, value, n);
    }

    @Override
    public void close() {
        Posix.munmap(address, length);
    }
}
