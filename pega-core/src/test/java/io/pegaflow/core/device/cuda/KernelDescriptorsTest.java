package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.pegaflow.kernel.plan.RangePlan;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The copy kernel's descriptors and launches, read back from the native memory they are written to. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KernelDescriptorsTest {
    private static final long MIB = 1L << 20;
    private static final long LAUNCH = 64 * MIB;
    private static final long PIECE = KernelDescriptors.PIECE_BYTES;
    private static final long DEVICE = 0x7f00_0000_0000L;
    private static final long HOST = 0x7e00_0000_0000L;

    /** Descriptors as read back: {dst, src, bytes} each. */
    private record Written(List<KernelDescriptors.Launch> launches, long[][] descriptors) {}

    private static Written write(RangePlan plan, long maxLaunchBytes) {
        int n = KernelDescriptors.count(plan);
        try (Memory m = new Memory(Math.max(1, (long) n * KernelDescriptors.DESCRIPTOR_BYTES))) {
            List<KernelDescriptors.Launch> launches =
                    KernelDescriptors.write(plan, maxLaunchBytes, Pointer.nativeValue(m));
            long[][] d = new long[n][];
            for (int i = 0; i < n; i++) {
                long at = (long) i * KernelDescriptors.DESCRIPTOR_BYTES;
                d[i] = new long[] {m.getLong(at), m.getLong(at + 8), m.getLong(at + 16)};
            }
            return new Written(launches, d);
        }
    }

    /** Every byte of every range is covered exactly once, in order, by pieces of at most PIECE bytes. */
    private static void assertCovers(RangePlan plan, long[][] d) {
        int k = 0;
        for (int r = 0; r < plan.size(); r++) {
            for (long off = 0; off < plan.lengthBytes(r); off += d[k - 1][2]) {
                long[] x = d[k++];
                assertThat(x[0]).isEqualTo(plan.dstAddress(r) + off);
                assertThat(x[1]).isEqualTo(plan.srcAddress(r) + off);
                assertThat(x[2]).isBetween(1L, PIECE).isLessThanOrEqualTo(plan.lengthBytes(r) - off);
            }
        }
        assertThat(k).isEqualTo(d.length);
    }

    private static void assertLaunchesPartition(List<KernelDescriptors.Launch> launches, long[][] d, long max) {
        int next = 0;
        for (KernelDescriptors.Launch l : launches) {
            assertThat(l.first()).isEqualTo(next);
            assertThat(l.count()).isBetween(1, KernelDescriptors.MAX_LAUNCH_DESCRIPTORS);
            long bytes = 0;
            for (int i = l.first(); i < l.first() + l.count(); i++) {
                bytes += d[i][2];
            }
            assertThat(l.bytes()).isEqualTo(bytes).isLessThanOrEqualTo(max);
            next += l.count();
        }
        assertThat(next).isEqualTo(d.length);
    }

    @Test
    void shouldLaunchNothingForAnEmptyPlan() {
        RangePlan plan = new RangePlan(1);
        assertThat(KernelDescriptors.count(plan)).isZero();
        assertThat(write(plan, LAUNCH).launches()).isEmpty();
    }

    @Test
    void shouldSplitOneHugeRangeIntoPiecesAndFullLaunches() {
        RangePlan plan = new RangePlan(1);
        plan.add(DEVICE, HOST, 1L << 30);
        Written w = write(plan, LAUNCH);
        assertThat(w.descriptors().length).isEqualTo((int) ((1L << 30) / PIECE));
        assertCovers(plan, w.descriptors());
        assertThat(w.launches())
                .hasSize(16)
                .allSatisfy(l -> assertThat(l.bytes()).isEqualTo(LAUNCH));
        assertLaunchesPartition(w.launches(), w.descriptors(), LAUNCH);
    }

    @Test
    void shouldSplitARangeThatCrossesALaunchBoundaryBetweenTwoLaunches() {
        RangePlan plan = new RangePlan(3);
        long part = 48 * MIB + 4096 + 16; // not a multiple of the piece: the last piece of each range is short
        for (int i = 0; i < 3; i++) {
            plan.add(DEVICE + 2L * i * part, HOST + i * part, part);
        }
        for (RangePlan p : new RangePlan[] {plan, plan.reversed()}) {
            Written w = write(p, LAUNCH);
            assertCovers(p, w.descriptors());
            assertLaunchesPartition(w.launches(), w.descriptors(), LAUNCH);
            assertThat(w.launches()).hasSize(3);
            // the second range starts in the first launch and ends in the second
            long firstLaunchEnd = w.descriptors()[w.launches().get(0).count() - 1][p == plan ? 1 : 0];
            assertThat(firstLaunchEnd).isBetween(DEVICE + 2 * part, DEVICE + 3 * part);
        }
    }

    @Test
    void shouldKeepEachRangesAlignmentInEveryPiece() {
        RangePlan plan = new RangePlan(2);
        plan.add(DEVICE + 3, HOST + 3, 3 * PIECE + 5); // co-aligned at 16 once shifted
        plan.add(DEVICE + 8 * MIB + 1, HOST + 8 * MIB + 6, 2 * PIECE); // skewed: the kernel's narrow path
        Written w = write(plan, LAUNCH);
        assertCovers(plan, w.descriptors());
        long skewed = ((HOST + 8 * MIB + 6) ^ (DEVICE + 8 * MIB + 1)) & 15;
        for (long[] d : w.descriptors()) {
            assertThat((d[0] ^ d[1]) & 15).isIn(0L, skewed);
        }
        assertThat((w.descriptors()[4][0] ^ w.descriptors()[4][1]) & 15)
                .isEqualTo(skewed)
                .isNotZero();
        assertThat(w.descriptors()[0][0] & 15).isEqualTo(3);
        assertThat(w.descriptors()[1][0] & 15).isEqualTo(3);
        assertThat(w.descriptors()[3][2]).isEqualTo(5);
    }

    @Test
    void shouldCapDescriptorsPerLaunchForTinyRanges() {
        int n = KernelDescriptors.MAX_LAUNCH_DESCRIPTORS + 10;
        RangePlan plan = new RangePlan(n);
        for (int i = 0; i < n; i++) {
            plan.add(DEVICE + 256L * i, HOST + 128L * i, 64);
        }
        Written w = write(plan.reversed(), LAUNCH);
        assertCovers(plan.reversed(), w.descriptors());
        assertThat(w.launches())
                .extracting(KernelDescriptors.Launch::count)
                .containsExactly(KernelDescriptors.MAX_LAUNCH_DESCRIPTORS, 10);
    }

    @Test
    void shouldLaunchAtLeastOnePieceEvenBelowThePieceSizeCap() {
        RangePlan plan = new RangePlan(2);
        plan.add(DEVICE, HOST, PIECE);
        plan.add(DEVICE + 4 * PIECE, HOST + PIECE, PIECE);
        Written w = write(plan, PIECE);
        assertThat(w.launches()).hasSize(2);
        assertLaunchesPartition(w.launches(), w.descriptors(), PIECE);
    }

    @Test
    void shouldSizeTheGridByWarpsUpToTheCap() {
        assertThat(KernelDescriptors.ctas(1, 512, 16)).isEqualTo(1);
        assertThat(KernelDescriptors.ctas(16, 512, 16)).isEqualTo(1);
        assertThat(KernelDescriptors.ctas(17, 512, 16)).isEqualTo(2);
        assertThat(KernelDescriptors.ctas(4096, 512, 16)).isEqualTo(16);
        assertThat(KernelDescriptors.ctas(4096, 256, 64)).isEqualTo(64);
        assertThat(KernelDescriptors.ctas(0, 512, 16)).isEqualTo(1);
    }
}
