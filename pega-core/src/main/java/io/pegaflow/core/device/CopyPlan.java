package io.pegaflow.core.device;

import java.util.Arrays;

/**
 * A batch of (device address, host address, length) copies, merged as they are added: a range that continues the
 * previous one on both sides extends it instead of adding a new entry (spec/engine-api.md §3.4), so a run of
 * consecutive blocks costs one memcpy or one DMA call.
 *
 * <p>Struct-of-arrays over primitive {@code long[]}: a 32768-block plan allocates three arrays, not 32768 objects.
 * Not thread-safe; built by one thread and handed to a lane thread through a happens-before edge (a queue).
 */
public final class CopyPlan {
    private long[] device;
    private long[] host;
    private long[] length;
    private int count;
    private long totalBytes;

    public CopyPlan(int expectedRanges) {
        int capacity = Math.max(4, expectedRanges);
        device = new long[capacity];
        host = new long[capacity];
        length = new long[capacity];
    }

    /** Adds one range, merging it into the previous range when both sides are contiguous. */
    public void add(long deviceAddress, long hostAddress, long lengthBytes) {
        if (lengthBytes <= 0) {
            return;
        }
        totalBytes += lengthBytes;
        if (count > 0) {
            int last = count - 1;
            if (device[last] + length[last] == deviceAddress && host[last] + length[last] == hostAddress) {
                length[last] += lengthBytes;
                return;
            }
        }
        if (count == device.length) {
            int capacity = count * 2;
            device = Arrays.copyOf(device, capacity);
            host = Arrays.copyOf(host, capacity);
            length = Arrays.copyOf(length, capacity);
        }
        device[count] = deviceAddress;
        host[count] = hostAddress;
        length[count] = lengthBytes;
        count++;
    }

    /** Number of merged ranges. */
    public int size() {
        return count;
    }

    public long deviceAddress(int i) {
        return device[i];
    }

    public long hostAddress(int i) {
        return host[i];
    }

    public long lengthBytes(int i) {
        return length[i];
    }

    /** Sum of all added lengths. */
    public long totalBytes() {
        return totalBytes;
    }

    public boolean isEmpty() {
        return count == 0;
    }
}
