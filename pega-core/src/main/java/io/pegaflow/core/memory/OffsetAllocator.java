package io.pegaflow.core.memory;

import java.util.Arrays;

/**
 * A constant-time range allocator over {@code [0, sizeUnits)}, after Sebastian Aaltonen's OffsetAllocator (a two-level
 * segregated-fit design in the TLSF family). It hands out offsets, never memory; the caller maps offsets to addresses.
 *
 * <h2>Bins</h2>
 *
 * Free regions are filed in 256 bins keyed by {@link SmallFloat} size classes (32 top bins of 8 leaf bins). A 32-bit
 * mask marks the top bins holding anything, and one 8-bit mask per top bin marks its non-empty leaf bins, so finding
 * a bin is two bit scans. Each bin is a LIFO doubly-linked list of free regions.
 *
 * <ul>
 *   <li>A free region is filed under its size <em>rounded down</em>: every region in bin {@code b} is at least
 *       {@code binLowerBound(b)}.
 *   <li>A request looks from its size <em>rounded up</em>: the lowest non-empty leaf at or above that bin in the same
 *       top bin, else the lowest leaf of the next non-empty top bin. Whatever it finds fits, so it takes the head of that
 *       bin without a search, and files the tail it did not use as a new free region.
 *   <li>Consequence: a region of 17 units sits in bin 16 while a 17-unit request starts at bin 18, so that request fails
 *       although the region would fit. Requests never scan within a bin; fragmentation is bounded by the bin step.
 * </ul>
 *
 * <h2>Nodes</h2>
 *
 * Every region, free or allocated, is a node that knows its physical neighbours, so a free merges with free neighbours
 * in O(1) and files the merged region again. Nodes live in preallocated parallel {@code int} arrays indexed by node id
 * (struct of arrays: no object per allocation), and unused ids sit on a stack. Offsets and sizes are unsigned 32-bit
 * values kept in {@code int}s. The node id is the allocation handle.
 *
 * <p>Node ids are bounded by {@code maxAllocs}. An allocation may need one fresh id for the tail it leaves behind, so
 * {@link #allocate} refuses once no id is left, and {@link #largestFreeUnits()} then reports 0. The regions of a range
 * of {@code n} units never number more than {@code n}, so {@code maxAllocs = n + 1} never runs out.
 *
 * <p>Not thread-safe: the owning shard serialises every call under its lock.
 */
final class OffsetAllocator {
    /** Returned by {@link #allocate} when no bin can serve the request or no node id is left. */
    static final int NO_SPACE = -1;

    /** Largest size, in units, the 32-bit offsets can express. */
    static final long MAX_UNITS = 0xFFFF_FFFFL;

    private static final int NONE = -1;
    private static final int TOP_BIN_COUNT = 32;
    private static final int LEAF_BINS_PER_TOP = SmallFloat.MANTISSA_VALUE;
    private static final int BIN_COUNT = TOP_BIN_COUNT * LEAF_BINS_PER_TOP;
    private static final int TOP_SHIFT = SmallFloat.MANTISSA_BITS;
    private static final int LEAF_MASK = SmallFloat.MANTISSA_MASK;

    private final long sizeUnits;
    private final int maxAllocs;

    // Node fields, one array per field. Links use NONE for "no node".
    private final int[] nodeOffset;
    private final int[] nodeSize;
    private final int[] binPrev;
    private final int[] binNext;
    private final int[] neighborPrev;
    private final int[] neighborNext;
    private final boolean[] nodeUsed;

    private final int[] spareNodes;
    private int spareCount;

    private final int[] binHead = new int[BIN_COUNT];
    private final int[] leafMasks = new int[TOP_BIN_COUNT];
    private int topMask;
    private long freeUnits;

    /**
     * @param sizeUnits size of the managed range, 1 to {@link #MAX_UNITS}
     * @param maxAllocs node ids to preallocate, at least 1; bounds live regions (free and allocated together)
     */
    OffsetAllocator(long sizeUnits, int maxAllocs) {
        if (sizeUnits <= 0 || sizeUnits > MAX_UNITS) {
            throw new IllegalArgumentException("sizeUnits must be in [1, 2^32-1], was " + sizeUnits);
        }
        if (maxAllocs < 1) {
            throw new IllegalArgumentException("maxAllocs must be >= 1, was " + maxAllocs);
        }
        this.sizeUnits = sizeUnits;
        this.maxAllocs = maxAllocs;
        nodeOffset = new int[maxAllocs];
        nodeSize = new int[maxAllocs];
        binPrev = new int[maxAllocs];
        binNext = new int[maxAllocs];
        neighborPrev = new int[maxAllocs];
        neighborNext = new int[maxAllocs];
        nodeUsed = new boolean[maxAllocs];
        spareNodes = new int[maxAllocs];
        reset();
    }

    /** Forgets every allocation: the whole range becomes one free region. */
    void reset() {
        Arrays.fill(binHead, NONE);
        Arrays.fill(leafMasks, 0);
        Arrays.fill(nodeUsed, false);
        topMask = 0;
        freeUnits = 0;
        for (int i = 0; i < maxAllocs; i++) {
            spareNodes[i] = maxAllocs - 1 - i;
        }
        spareCount = maxAllocs;
        fileFreeRegion(sizeUnits, 0);
    }

    /**
     * Reserves {@code units} contiguous units.
     *
     * @param units 1 to {@link #MAX_UNITS}
     * @return the allocation handle (a node id, read it with {@link #offsetUnits}), or {@link #NO_SPACE}
     * @throws IllegalArgumentException when {@code units} is outside {@code [1, 2^32-1]}
     */
    int allocate(long units) {
        if (units <= 0 || units > MAX_UNITS) {
            throw new IllegalArgumentException("units must be in [1, 2^32-1], was " + units);
        }
        if (spareCount == 0) {
            return NO_SPACE;
        }
        int bin = findBinAtLeast(SmallFloat.binRoundUp(units));
        if (bin == NONE) {
            return NO_SPACE;
        }
        int node = binHead[bin];
        long regionUnits = size(node);
        unlinkFromBin(node, bin);
        freeUnits -= regionUnits;
        nodeUsed[node] = true;
        nodeSize[node] = (int) units;

        long tailUnits = regionUnits - units;
        if (tailUnits > 0) {
            int tail = fileFreeRegion(tailUnits, offset(node) + units);
            int after = neighborNext[node];
            if (after != NONE) {
                neighborPrev[after] = tail;
            }
            neighborPrev[tail] = node;
            neighborNext[tail] = after;
            neighborNext[node] = tail;
        }
        return node;
    }

    /**
     * Returns an allocation's units, merging them with free physical neighbours.
     *
     * @throws IllegalStateException when {@code handle} is not a live allocation (a double free)
     */
    void free(int handle) {
        if (handle < 0 || handle >= maxAllocs || !nodeUsed[handle]) {
            throw new IllegalStateException("handle " + handle + " is not a live allocation");
        }
        long start = offset(handle);
        long units = size(handle);
        int before = neighborPrev[handle];
        int after = neighborNext[handle];

        if (before != NONE && !nodeUsed[before]) {
            start = offset(before);
            units += size(before);
            int beforeBefore = neighborPrev[before];
            removeFreeRegion(before);
            before = beforeBefore;
        }
        if (after != NONE && !nodeUsed[after]) {
            units += size(after);
            int afterAfter = neighborNext[after];
            removeFreeRegion(after);
            after = afterAfter;
        }
        nodeUsed[handle] = false;
        spareNodes[spareCount++] = handle;

        int merged = fileFreeRegion(units, start);
        neighborPrev[merged] = before;
        neighborNext[merged] = after;
        if (before != NONE) {
            neighborNext[before] = merged;
        }
        if (after != NONE) {
            neighborPrev[after] = merged;
        }
    }

    /** Offset of a live allocation, in units from the start of the range. */
    long offsetUnits(int handle) {
        return offset(handle);
    }

    /** Size of a live allocation in units: exactly what was requested. */
    long sizeUnits(int handle) {
        return size(handle);
    }

    /** Size of the managed range in units. */
    long capacityUnits() {
        return sizeUnits;
    }

    /** Units not allocated, summed over all free regions (exact, whether or not a request could use them). */
    long freeUnits() {
        return freeUnits;
    }

    /**
     * A lower bound on the largest request that succeeds now: the lower bound of the highest non-empty bin, so it may
     * be below the largest free region. 0 when nothing is free or no node id is left.
     */
    long largestFreeUnits() {
        if (spareCount == 0 || topMask == 0) {
            return 0;
        }
        int top = 31 - Integer.numberOfLeadingZeros(topMask);
        int leaf = 31 - Integer.numberOfLeadingZeros(leafMasks[top]);
        return SmallFloat.binLowerBound((top << TOP_SHIFT) | leaf);
    }

    /** Node ids in use by free and allocated regions together; 1 when everything is free and merged. */
    int nodesInUse() {
        return maxAllocs - spareCount;
    }

    /** The node id limit this allocator was built with. */
    int maxAllocs() {
        return maxAllocs;
    }

    /** The lowest non-empty bin at or above {@code minBin}, or NONE. */
    private int findBinAtLeast(int minBin) {
        int minTop = minBin >>> TOP_SHIFT;
        if (minTop >= TOP_BIN_COUNT) {
            return NONE;
        }
        if ((topMask & (1 << minTop)) != 0) {
            int leaf = lowestSetBitFrom(leafMasks[minTop], minBin & LEAF_MASK);
            if (leaf != NONE) {
                return (minTop << TOP_SHIFT) | leaf;
            }
        }
        // Every leaf of a higher top bin fits, because the request was rounded up before the split.
        int top = lowestSetBitFrom(topMask, minTop + 1);
        if (top == NONE) {
            return NONE;
        }
        return (top << TOP_SHIFT) | Integer.numberOfTrailingZeros(leafMasks[top]);
    }

    private static int lowestSetBitFrom(int mask, int fromBit) {
        if (fromBit >= Integer.SIZE) {
            return NONE;
        }
        int candidates = mask & (-1 << fromBit);
        return candidates == 0 ? NONE : Integer.numberOfTrailingZeros(candidates);
    }

    /** Takes a fresh node id for a free region and pushes it on the head of its bin. */
    private int fileFreeRegion(long units, long start) {
        if (spareCount == 0) {
            throw new IllegalStateException("offset allocator ran out of node ids");
        }
        int node = spareNodes[--spareCount];
        int bin = SmallFloat.binRoundDown(units);
        int head = binHead[bin];
        if (head == NONE) {
            int top = bin >>> TOP_SHIFT;
            leafMasks[top] |= 1 << (bin & LEAF_MASK);
            topMask |= 1 << top;
        } else {
            binPrev[head] = node;
        }
        nodeOffset[node] = (int) start;
        nodeSize[node] = (int) units;
        nodeUsed[node] = false;
        binPrev[node] = NONE;
        binNext[node] = head;
        neighborPrev[node] = NONE;
        neighborNext[node] = NONE;
        binHead[bin] = node;
        freeUnits += units;
        return node;
    }

    /** Unlinks a free region absorbed by a merge and gives its node id back. */
    private void removeFreeRegion(int node) {
        unlinkFromBin(node, SmallFloat.binRoundDown(size(node)));
        freeUnits -= size(node);
        spareNodes[spareCount++] = node;
    }

    private void unlinkFromBin(int node, int bin) {
        int prev = binPrev[node];
        int next = binNext[node];
        if (next != NONE) {
            binPrev[next] = prev;
        }
        if (prev != NONE) {
            binNext[prev] = next;
            return;
        }
        binHead[bin] = next;
        if (next == NONE) {
            int top = bin >>> TOP_SHIFT;
            leafMasks[top] &= ~(1 << (bin & LEAF_MASK));
            if (leafMasks[top] == 0) {
                topMask &= ~(1 << top);
            }
        }
    }

    private long offset(int node) {
        return Integer.toUnsignedLong(nodeOffset[node]);
    }

    private long size(int node) {
        return Integer.toUnsignedLong(nodeSize[node]);
    }
}
