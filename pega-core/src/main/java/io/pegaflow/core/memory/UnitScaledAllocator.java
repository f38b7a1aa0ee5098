package io.pegaflow.core.memory;

/**
 * Byte-level front of {@link OffsetAllocator}: a byte range is managed in fixed units so that 32-bit unit offsets
 * cover pools of many TiB. Requests round up to whole units, the range rounds down to whole units, and every offset
 * is a multiple of the unit.
 *
 * <p>Not thread-safe: the owning shard serialises every call under its lock.
 */
final class UnitScaledAllocator {
    /** Units are multiples of this, so every allocation suits {@code O_DIRECT}. */
    static final long UNIT_ALIGNMENT_BYTES = 512;

    /** Upper bound on node ids per allocator; about 100 MB of heap at 25 bytes per node. */
    static final int MAX_ALLOCS_CAP = 4_000_000;

    private final long unitBytes;
    private final OffsetAllocator units;

    /**
     * @param totalBytes bytes to manage; the part beyond the last whole unit is never handed out
     * @param unitBytes allocation granule, greater than 0
     * @param maxAllocs node id limit of the inner allocator
     * @throws IllegalArgumentException when the unit is not positive, or the range is below one unit or above 2^32-1
     *     units
     */
    UnitScaledAllocator(long totalBytes, long unitBytes, int maxAllocs) {
        if (unitBytes <= 0) {
            throw new IllegalArgumentException("unitBytes must be > 0, was " + unitBytes);
        }
        long totalUnits = totalBytes / unitBytes;
        if (totalUnits < 1 || totalUnits > OffsetAllocator.MAX_UNITS) {
            throw new IllegalArgumentException("capacity of " + totalBytes + " bytes in units of " + unitBytes
                    + " gives " + totalUnits + " units, outside [1, 2^32-1]");
        }
        this.unitBytes = unitBytes;
        this.units = new OffsetAllocator(totalUnits, maxAllocs);
    }

    /**
     * The pool's unit for a backing region: the hint (or 512 when there is none), raised until the region fits in
     * 2^32-1 units, then rounded up to a multiple of 512.
     *
     * @param backingBytes size of the backing region, greater than 0
     * @param hintBytes expected allocation size, or 0 for none
     */
    static long unitBytesFor(long backingBytes, long hintBytes) {
        if (backingBytes <= 0 || hintBytes < 0) {
            throw new IllegalArgumentException(
                    "backingBytes must be > 0 and hintBytes >= 0, were " + backingBytes + ", " + hintBytes);
        }
        long base = hintBytes > 0 ? hintBytes : UNIT_ALIGNMENT_BYTES;
        long minForCapacity = ceilDiv(backingBytes, OffsetAllocator.MAX_UNITS);
        return ceilDiv(Math.max(base, minForCapacity), UNIT_ALIGNMENT_BYTES) * UNIT_ALIGNMENT_BYTES;
    }

    /** Node ids for a range of {@code totalUnits}: enough never to run out, capped at {@link #MAX_ALLOCS_CAP}. */
    static int maxAllocsFor(long totalUnits) {
        return (int) Math.min(MAX_ALLOCS_CAP, totalUnits + 1);
    }

    /**
     * Reserves {@code ceil(bytes / unit)} units.
     *
     * @return a handle for {@link #offsetBytes}, {@link #sizeBytes} and {@link #free}, or
     *     {@link OffsetAllocator#NO_SPACE}
     * @throws IllegalArgumentException when {@code bytes <= 0} or the request exceeds 2^32-1 units
     */
    int allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes must be > 0, was " + bytes);
        }
        long requestUnits = ceilDiv(bytes, unitBytes);
        if (requestUnits > OffsetAllocator.MAX_UNITS) {
            throw new IllegalArgumentException(
                    "request of " + bytes + " bytes in units of " + unitBytes + " exceeds 2^32-1 units");
        }
        return units.allocate(requestUnits);
    }

    /** Gives a live allocation back. */
    void free(int handle) {
        units.free(handle);
    }

    /** Offset of a live allocation from the start of the range; a multiple of the unit. */
    long offsetBytes(int handle) {
        return units.offsetUnits(handle) * unitBytes;
    }

    /** Size of a live allocation: the request rounded up to whole units. */
    long sizeBytes(int handle) {
        return units.sizeUnits(handle) * unitBytes;
    }

    long unitBytes() {
        return unitBytes;
    }

    /** Managed bytes: whole units only. */
    long capacityBytes() {
        return units.capacityUnits() * unitBytes;
    }

    long freeBytes() {
        return units.freeUnits() * unitBytes;
    }

    /** {@link OffsetAllocator#largestFreeUnits()} in bytes. */
    long largestFreeBytes() {
        return units.largestFreeUnits() * unitBytes;
    }

    /** The unit-level allocator, for tests that check node bookkeeping. */
    OffsetAllocator units() {
        return units;
    }

    static long ceilDiv(long dividend, long divisor) {
        return -Math.floorDiv(-dividend, divisor);
    }
}
