package io.pegaflow.core.device.cuda;

import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.sys.OffHeap;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a plan into the copy kernel's work: (dst, src, bytes) descriptors of at most {@link #PIECE_BYTES} each, in
 * plan order, grouped into launches of at most {@code maxLaunchBytes} and {@link #MAX_LAUNCH_DESCRIPTORS}.
 *
 * <pre>
 *   descriptor i at base + 24·i:   u64 dst | u64 src | u64 bytes      (copy_kernel.cu, CopyDescriptor)
 *   a range of L bytes → ⌈L / 64 KiB⌉ pieces at offsets 0, 64 KiB, …   (a multiple of 16: a piece keeps the range's
 *                                                                      alignment, so the vector path still applies)
 *   a launch ends before the piece that would take it past maxLaunchBytes: a range may span launches
 * </pre>
 *
 * Pieces bound one warp's share of a launch, so a few CTAs stay evenly loaded whatever the range sizes. Stateless.
 */
final class KernelDescriptors {
    static final long PIECE_BYTES = 64L << 10;
    static final int DESCRIPTOR_BYTES = 24;
    /** Bounds one launch's descriptor count (the kernel takes a u32) and so its running time with tiny ranges. */
    static final int MAX_LAUNCH_DESCRIPTORS = 1 << 16;

    /** One launch: descriptors {@code [first, first + count)}, {@code bytes} in all. */
    record Launch(int first, int count, long bytes) {}

    private KernelDescriptors() {}

    /**
     * How many descriptors the plan becomes.
     *
     * @throws IllegalArgumentException when that exceeds an int (a plan of more than 128 TiB)
     */
    static int count(RangePlan plan) {
        long n = 0;
        for (int i = 0; i < plan.size(); i++) {
            n += (plan.lengthBytes(i) + PIECE_BYTES - 1) / PIECE_BYTES;
        }
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a plan of " + n + " kernel descriptors is too large");
        }
        return (int) n;
    }

    /**
     * Writes the plan's descriptors at {@code base} ({@code 24 · count(plan)} writable bytes) and returns the launches.
     * The plan's host addresses must be the ones the device reaches the pool at.
     */
    static List<Launch> write(RangePlan plan, long maxLaunchBytes, long base) {
        List<Launch> launches = new ArrayList<>();
        int index = 0;
        int first = 0;
        long launchBytes = 0;
        for (int r = 0; r < plan.size(); r++) {
            long src = plan.srcAddress(r);
            long dst = plan.dstAddress(r);
            long length = plan.lengthBytes(r);
            for (long off = 0; off < length; off += PIECE_BYTES) {
                long piece = Math.min(PIECE_BYTES, length - off);
                if (index > first
                        && (launchBytes + piece > maxLaunchBytes || index - first == MAX_LAUNCH_DESCRIPTORS)) {
                    launches.add(new Launch(first, index - first, launchBytes));
                    first = index;
                    launchBytes = 0;
                }
                long at = base + (long) index * DESCRIPTOR_BYTES;
                // OFF-HEAP: the caller sized [base, base + 24·count(plan)) for exactly these writes.
                OffHeap.putLong(at, dst + off);
                OffHeap.putLong(at + 8, src + off);
                OffHeap.putLong(at + 16, piece);
                launchBytes += piece;
                index++;
            }
        }
        if (index > first) {
            launches.add(new Launch(first, index - first, launchBytes));
        }
        return launches;
    }

    /** CTAs for a launch of {@code descriptors}: one warp per descriptor, at most {@code maxCtas}. */
    static int ctas(int descriptors, int threadsPerCta, int maxCtas) {
        int warpsPerCta = Math.max(1, threadsPerCta / 32);
        int needed = (descriptors + warpsPerCta - 1) / warpsPerCta;
        return Math.max(1, Math.min(maxCtas, needed));
    }
}
