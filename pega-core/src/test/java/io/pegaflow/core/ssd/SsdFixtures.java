package io.pegaflow.core.ssd;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.sys.Posix;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

/** A small pinned pool and blocks filled with seeded random bytes, for SSD store tests. */
final class SsdFixtures implements AutoCloseable {
    static final long KIB = 1024;
    static final long MIB = 1024 * KIB;

    final PinnedMemoryPool pool;
    private final boolean ownsPool;

    SsdFixtures(long poolBytes) {
        this.pool = PinnedMemoryPool.create(PoolConfig.of(poolBytes));
        this.ownsPool = true;
    }

    /** Blocks from a pool the caller owns (and closes). */
    SsdFixtures(PinnedMemoryPool pool) {
        this.pool = pool;
        this.ownsPool = false;
    }

    static BlockKey key(int i) {
        return new BlockKey("ns", ByteBuffer.allocate(5).put((byte) 7).putInt(i).array());
    }

    static BlockKey key(String namespace, int i) {
        return new BlockKey(namespace, ("h-" + i).getBytes(StandardCharsets.UTF_8));
    }

    /** A block of {@code slots} contiguous slots of {@code segBytes}, all in one allocation. */
    SealedBlock block(int seed, int slots, long segBytes) {
        return block(seed, slots, segBytes, false, false);
    }

    /**
     * @param split two segments per slot (K and V)
     * @param scattered one allocation per slot instead of one per block (iovecs cannot coalesce)
     */
    SealedBlock block(int seed, int slots, long segBytes, boolean split, boolean scattered) {
        int segs = split ? 2 : 1;
        long slotBytes = segs * segBytes;
        Random random = new Random(seed);
        SlotData[] data = new SlotData[slots];
        PinnedAllocation shared = scattered ? null : allocate(slots * slotBytes);
        for (int s = 0; s < slots; s++) {
            PinnedAllocation a = scattered ? allocate(slotBytes) : shared;
            long base = scattered ? a.address() : a.address() + s * slotBytes;
            byte[] bytes = new byte[(int) slotBytes];
            random.nextBytes(bytes);
            Posix.copyFromArray(bytes, 0, base, bytes.length);
            data[s] = split
                    ? SlotData.split(a, base, a, base + segBytes, segBytes)
                    : SlotData.contiguous(a, base, segBytes);
            if (scattered) {
                a.release();
            }
        }
        if (shared != null) {
            shared.release();
        }
        return new SealedBlock(data);
    }

    private PinnedAllocation allocate(long bytes) {
        PinnedAllocation a = pool.allocate(bytes);
        assertThat(a).as("test pool allocation of %d bytes", bytes).isNotNull();
        return a;
    }

    LongFunction<PinnedAllocation> allocator() {
        return pool::allocate;
    }

    /** Every segment's bytes, in slot order. */
    static byte[] bytesOf(SealedBlock block) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int s = 0; s < block.slotCount(); s++) {
            SlotData slot = block.slot(s);
            for (int g = 0; g < slot.segments(); g++) {
                byte[] b = new byte[(int) slot.length(g)];
                Posix.copyToArray(slot.address(g), b, 0, b.length);
                out.writeBytes(b);
            }
        }
        return out.toByteArray();
    }

    static void assertSameShape(SealedBlock expected, SealedBlock actual) {
        assertThat(actual.slotCount()).isEqualTo(expected.slotCount());
        for (int s = 0; s < expected.slotCount(); s++) {
            assertThat(actual.slot(s).segments()).isEqualTo(expected.slot(s).segments());
            assertThat(actual.slot(s).length(0)).isEqualTo(expected.slot(s).length(0));
        }
        assertThat(bytesOf(actual)).isEqualTo(bytesOf(expected));
    }

    static void releaseAll(List<SealedBlock> blocks) {
        blocks.forEach(SealedBlock::release);
    }

    static <T> T get(java.util.concurrent.CompletableFuture<T> f) {
        try {
            return f.get(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        if (!ownsPool) {
            return;
        }
        assertThat(pool.outstandingAllocations())
                .as("pool allocations leaked by the test")
                .isZero();
        pool.close();
    }
}
