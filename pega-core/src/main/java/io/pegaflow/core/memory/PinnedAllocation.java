package io.pegaflow.core.memory;

import java.lang.invoke.MethodHandles;

/**
 * A reference-counted slice of a {@link PinnedMemoryPool} shard: {@link #address()} to
 * {@code address() + sizeBytes()}.
 *
 * <p>Ownership: the count starts at 1, owned by whoever called {@link PinnedMemoryPool#allocate}. Every holder that
 * keeps the slice beyond its caller's reference calls {@link #retain()} (or {@link #tryRetain()} when it may race with
 * the last release) and later exactly one {@link #release()}. The release that brings the count to 0 returns the slice
 * to its shard; from then on the address must not be used and the count can never rise again.
 *
 * <p>Thread-safe: the count is changed only by compare-and-set ({@link RefCount}), so the slice is freed exactly once.
 */
public final class PinnedAllocation {
    private static final RefCount REF_COUNT =
            RefCount.of(MethodHandles.lookup(), PinnedAllocation.class, "refCount", "allocation");

    private final PoolShard shard;
    private final int handle;
    private final long address;
    private final long sizeBytes;

    @SuppressWarnings("unused") // accessed through REF_COUNT
    private volatile int refCount = 1;

    PinnedAllocation(PoolShard shard, int handle, long address, long sizeBytes) {
        this.shard = shard;
        this.handle = handle;
        this.address = address;
        this.sizeBytes = sizeBytes;
    }

    /** First byte of the slice; a multiple of 512. Valid while the count is above 0. */
    public long address() {
        return address;
    }

    /** Usable bytes: the requested size rounded up to whole allocator units. */
    public long sizeBytes() {
        return sizeBytes;
    }

    /** The current count; 0 once freed. A snapshot, for metrics and assertions. */
    public int refCount() {
        return REF_COUNT.get(this);
    }

    /**
     * Adds a reference.
     *
     * @throws IllegalStateException when the slice was already freed
     */
    public void retain() {
        REF_COUNT.retain(this);
    }

    /** Adds a reference unless the slice was already freed; false then. */
    public boolean tryRetain() {
        return REF_COUNT.tryRetain(this);
    }

    /**
     * Drops a reference; the last one returns the slice to its shard.
     *
     * @throws IllegalStateException when the count is already 0 (a release without a matching reference)
     */
    public void release() {
        if (REF_COUNT.release(this)) {
            shard.free(handle, sizeBytes);
        }
    }

    /** The shard this slice came from. */
    PoolShard shard() {
        return shard;
    }

    @Override
    public String toString() {
        return "PinnedAllocation[address=0x" + Long.toHexString(address) + ", sizeBytes=" + sizeBytes + ", " + shard
                + ", refCount=" + refCount() + "]";
    }
}
