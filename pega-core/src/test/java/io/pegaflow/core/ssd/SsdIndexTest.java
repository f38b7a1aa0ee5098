package io.pegaflow.core.ssd;

import static io.pegaflow.core.ssd.SsdFixtures.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.block.BlockKey;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The ring and two-phase index alone ({@code docs/ssd.md}), without files. */
@Timeout(10)
class SsdIndexTest {
    private static final SlotLayout ONE_KIB = new SlotLayout(new int[] {1}, new byte[] {1}, new long[] {512});
    /** Ring bytes of one such entry. */
    private static final long E = 4096;

    private final SsdMetrics metrics = new SsdMetrics();

    private static SsdShard shard(int id, long capacity) {
        return new SsdShard(id, new NoFile(), capacity, 1);
    }

    /** Prepares keys of one-block entries (512 header + 512 payload, padded to 4 KiB). */
    private SsdEntry[] prepare(SsdIndex index, int... ids) {
        List<BlockKey> keys = new ArrayList<>();
        List<SlotLayout> layouts = new ArrayList<>();
        int[] headers = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            keys.add(key(ids[i]));
            layouts.add(ONE_KIB);
            headers[i] = 512;
        }
        return index.prepare(keys, layouts, headers, metrics);
    }

    @Test
    void shouldAllocateBackToBackAndOnlyServeCommittedEntries() {
        SsdShard s = shard(0, 4 * E);
        SsdIndex index = new SsdIndex(new SsdShard[] {s});
        SsdEntry[] e = prepare(index, 0, 1);

        assertThat(e[0].begin).isZero();
        assertThat(e[1].begin).isEqualTo(E);
        assertThat(index.readablePrefixLength(List.of(key(0), key(1)))).isZero();
        assertThat(index.commit(e[0], true)).isTrue();
        assertThat(index.readablePrefixLength(List.of(key(0), key(1)))).isEqualTo(1);
        assertThat(index.commit(e[1], false)).isFalse();
        assertThat(index.readablePrefixLength(List.of(key(0), key(1)))).isEqualTo(1);
        assertThat(prepare(index, 1)[0]).as("a failed key can be written again").isNotNull();
    }

    @Test
    void shouldSkipTheEndOfTheRingAndExpireWhatTheTailPasses() {
        SsdShard s = shard(0, 3 * E + 2048); // three entries, 2 KiB left over
        SsdIndex index = new SsdIndex(new SsdShard[] {s});
        for (SsdEntry e : prepare(index, 0, 1, 2)) {
            index.commit(e, true);
        }
        SsdEntry fourth = prepare(index, 3)[0];

        assertThat(fourth.begin).as("skipped the 2 KiB gap").isEqualTo(3 * E + 2048);
        assertThat(fourth.fileOffset()).as("after the superblock").isEqualTo(4096);
        assertThat(s.tail).isEqualTo(E);
        assertThat(index.readablePrefixLength(List.of(key(0)))).isZero();
        assertThat(index.readablePrefixLength(List.of(key(1)))).isEqualTo(1);
        assertThat(index.size()).isEqualTo(3);
        assertThat(s.liveBytes).isEqualTo(3 * E);
    }

    @Test
    void shouldNotCommitAnEntryOverwrittenWhileItWasWritten() {
        SsdShard s = shard(0, 2 * E);
        SsdIndex index = new SsdIndex(new SsdShard[] {s});
        SsdEntry first = prepare(index, 0)[0];
        prepare(index, 1, 2); // the ring wraps over the first entry before its write completes

        assertThat(index.isLive(first)).isFalse();
        assertThat(index.commit(first, true)).isFalse();
        assertThat(index.readablePrefixLength(List.of(key(0)))).isZero();
    }

    @Test
    void shouldCleanGhostsOffTheFrontAndKeepAValidWritingEntry() {
        SsdShard s = shard(0, 4 * E);
        SsdIndex index = new SsdIndex(new SsdShard[] {s});
        SsdEntry[] e = prepare(index, 0, 1, 2, 3);
        index.commit(e[0], false); // a ghost at the front
        SsdEntry fifth = prepare(index, 4)[0]; // the tail moves to E: only the ghost lies below it

        assertThat(s.order.peekFirst()).isSameAs(e[1]);
        assertThat(index.isLive(e[1])).as("still writing, still valid").isTrue();
        assertThat(fifth.begin).isEqualTo(4 * E);
    }

    @Test
    void shouldRoundRobinOverHealthyShardsAndSkipDuplicates() {
        SsdShard a = shard(0, 1 << 20);
        SsdShard b = shard(1, 1 << 20);
        SsdIndex index = new SsdIndex(new SsdShard[] {a, b});
        SsdEntry[] e = prepare(index, 0, 1, 0, 2);

        assertThat(e[0].shard).isSameAs(a);
        assertThat(e[1].shard).isSameAs(b);
        assertThat(e[2]).as("duplicate in the batch").isNull();
        assertThat(e[3].shard).isSameAs(a);
        b.markUnhealthy(SsdErrorKind.IO_ERROR, "test");
        index.dropShard(b);
        assertThat(prepare(index, 5, 6)).allSatisfy(x -> assertThat(x.shard).isSameAs(a));
        assertThat(prepare(index, 1)[0])
                .as("dropped with its shard, writable again")
                .isNotNull();
    }

    @Test
    void shouldDropABlockLargerThanTheShardWithoutMovingTheCursor() {
        SsdShard s = shard(0, 2048);
        SsdIndex index = new SsdIndex(new SsdShard[] {s});
        assertThat(prepare(index, 0)[0]).isNull();
        assertThat(metrics.errors(SsdErrorKind.OVERSIZED)).isEqualTo(1);
    }

    @Test
    void shouldRestoreTheNewestCopyOfAKeyAndExpireWhatTheHeadImplies() {
        SsdShard s = shard(0, 2 * E);
        SsdIndex index = new SsdIndex(new SsdShard[] {s});
        List<SsdEntry> found = List.of(
                new SsdEntry(key(0), ONE_KIB, s, 0, 512),
                new SsdEntry(key(1), ONE_KIB, s, E, 512),
                new SsdEntry(key(1), ONE_KIB, s, 2 * E, 512));

        int mapped = index.restore(s, found, 3 * E);

        assertThat(mapped).isEqualTo(1);
        assertThat(s.tail).isEqualTo(E);
        assertThat(index.readablePrefixLength(List.of(key(1)))).isEqualTo(1);
        assertThat(index.readablePrefix(List.of(key(1))).get(0).begin).isEqualTo(2 * E);
        assertThat(index.readablePrefixLength(List.of(key(0)))).isZero();
    }

    /** A file the index never touches. */
    private static final class NoFile implements ShardFile {
        @Override
        public Path path() {
            return Path.of("/nonexistent");
        }

        @Override
        public long sizeBytes() {
            return 0;
        }

        @Override
        public void resize(long bytes) {}

        @Override
        public long writev(long iovAddress, int iovCount, long fileOffset) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long read(long address, long length, long fileOffset) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void sync() {}

        @Override
        public boolean isReplaced() {
            return false;
        }

        @Override
        public void close() {}
    }
}
