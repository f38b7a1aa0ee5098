package io.pegaflow.core.ssd;

import static io.pegaflow.core.ssd.SsdFixtures.KIB;
import static io.pegaflow.core.ssd.SsdFixtures.MIB;
import static io.pegaflow.core.ssd.SsdFixtures.bytesOf;
import static io.pegaflow.core.ssd.SsdFixtures.get;
import static io.pegaflow.core.ssd.SsdFixtures.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The store on real files in a temp dir: round trips, shards, ring wrap, restart recovery, corruption, queues. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SsdStoreTest {
    /** One 4 KiB single-slot block: a 512-byte header, its payload, padding to the next 4 KiB. */
    private static final long ENTRY_4K = 8 * KIB;
    /** A 2 KiB payload plus its header fits one 4 KiB entry block. */
    private static final long ENTRY_2K = 4 * KIB;

    @TempDir
    Path dir;

    private SsdFixtures fx;
    private final List<SsdStore> stores = new ArrayList<>();

    @BeforeEach
    void pool() {
        fx = new SsdFixtures(8 * MIB);
    }

    @AfterEach
    void closeAll() {
        stores.forEach(SsdStore::close);
        fx.close();
    }

    private SsdStore open(SsdConfig config) {
        SsdStore store = SsdStore.open(config);
        stores.add(store);
        return store;
    }

    private SsdStore open(int shards, long shardCapacity) {
        List<Path> paths = new ArrayList<>();
        for (int i = 0; i < shards; i++) {
            paths.add(dir.resolve("shard-" + i + ".dat"));
        }
        return open(SsdConfig.of(paths, shardCapacity * shards));
    }

    private void reopen(SsdStore store) {
        store.close();
        stores.remove(store);
    }

    /** Writes blocks, waits for the writer, then drops the test's references (the "RAM copy"). */
    private static List<byte[]> writeAndForget(SsdStore store, List<BlockKey> keys, List<SealedBlock> blocks) {
        List<byte[]> expected = new ArrayList<>();
        for (SealedBlock b : blocks) {
            expected.add(bytesOf(b));
        }
        store.offer(keys, blocks);
        get(store.flush());
        SsdFixtures.releaseAll(blocks);
        return expected;
    }

    private List<SealedBlock> read(SsdStore store, List<BlockKey> keys) {
        return get(store.readPrefix(keys, fx.allocator()));
    }

    private void assertReads(SsdStore store, List<BlockKey> keys, List<byte[]> expected) {
        List<SealedBlock> got = read(store, keys);
        try {
            assertThat(got).hasSize(expected.size());
            for (int i = 0; i < expected.size(); i++) {
                assertThat(bytesOf(got.get(i))).as("block %d", i).isEqualTo(expected.get(i));
            }
        } finally {
            SsdFixtures.releaseAll(got);
        }
    }

    @Test
    void shouldRoundTripEveryLayoutByteExactAfterTheRamCopyIsGone() {
        SsdStore store = open(1, 4 * MIB);
        List<BlockKey> keys = List.of(key(0), key(1), key(2), key(3), key(4));
        List<SealedBlock> blocks = List.of(
                fx.block(10, 1, 4 * KIB),
                fx.block(11, 4, KIB, false, true),
                fx.block(12, 3, 512, true, false),
                fx.block(13, 2, 2 * KIB, true, true),
                fx.block(14, 61, 512));
        List<SealedBlock> shapes = new ArrayList<>();
        for (SealedBlock b : blocks) {
            b.retain();
            shapes.add(b);
        }
        List<byte[]> expected = writeAndForget(store, keys, blocks);

        List<SealedBlock> got = read(store, keys);
        try {
            assertThat(got).hasSize(5);
            for (int i = 0; i < 5; i++) {
                SsdFixtures.assertSameShape(shapes.get(i), got.get(i));
                assertThat(bytesOf(got.get(i))).isEqualTo(expected.get(i));
            }
        } finally {
            SsdFixtures.releaseAll(got);
            SsdFixtures.releaseAll(shapes);
        }
        assertThat(store.metrics().count(SsdCounter.WRITE_BLOCKS)).isEqualTo(5);
        assertThat(store.metrics().count(SsdCounter.PREFETCH_BLOCKS)).isEqualTo(5);
    }

    @Test
    void shouldStopTheReadAtTheFirstKeyNotOnDisk() {
        SsdStore store = open(1, MIB);
        List<byte[]> expected = writeAndForget(
                store,
                List.of(key(0), key(1), key(3)),
                List.of(fx.block(0, 1, KIB), fx.block(1, 1, KIB), fx.block(3, 1, KIB)));

        List<BlockKey> asked = List.of(key(0), key(1), key(2), key(3));
        assertThat(store.readablePrefix(asked)).isEqualTo(2);
        assertReads(store, asked, expected.subList(0, 2));
        assertThat(read(store, List.of(key(9)))).isEmpty();
    }

    @Test
    void shouldSpreadBlocksRoundRobinOverShardFilesAtTheirOwnPaths() throws IOException {
        List<Path> paths = List.of(
                dir.resolve("a/shard.dat"), dir.resolve("b/shard.dat"), dir.resolve("c/x.bin"), dir.resolve("d.dat"));
        SsdStore store = open(SsdConfig.of(paths, 4 * 256 * KIB));
        List<BlockKey> keys = new ArrayList<>();
        List<SealedBlock> blocks = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            keys.add(key(i));
            blocks.add(fx.block(i, 2, KIB));
        }
        List<byte[]> expected = writeAndForget(store, keys, blocks);

        for (Path p : paths) {
            assertThat(Files.size(p)).isEqualTo(4096 + 256 * KIB);
        }
        assertThat(store.shardStatus()).allSatisfy(s -> {
            assertThat(s.healthy()).isTrue();
            assertThat(s.entries()).isEqualTo(2);
            assertThat(s.usedBytes()).isEqualTo(2 * ENTRY_2K);
            assertThat(s.capacityBytes()).isEqualTo(256 * KIB);
            assertThat(s.bytesWritten()).isEqualTo(2 * ENTRY_2K);
        });
        assertReads(store, keys, expected);
        assertThat(store.shardStatus())
                .allSatisfy(s -> assertThat(s.bytesRead()).isEqualTo(2 * 2 * KIB));
    }

    @Test
    void shouldWrapAFullRingOverwritingTheOldestEntries() {
        SsdStore store = open(1, 3 * ENTRY_4K + 2048); // three entries fit; the fourth wraps to the start
        List<byte[]> expected = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            expected.addAll(writeAndForget(store, List.of(key(i)), List.of(fx.block(100 + i, 1, 4 * KIB))));
        }

        for (int i = 0; i < 7; i++) {
            assertThat(store.readablePrefix(List.of(key(i)))).as("key %d", i).isZero();
        }
        for (int i = 7; i < 10; i++) {
            assertReads(store, List.of(key(i)), List.of(expected.get(i)));
        }
        assertThat(store.entryCount()).isEqualTo(3);
        assertThat(store.shardStatus().get(0).usedBytes()).isEqualTo(3 * ENTRY_4K);

        reopen(store);
        SsdStore again = open(1, 3 * ENTRY_4K + 512);
        assertThat(again.entryCount()).isEqualTo(3);
        for (int i = 7; i < 10; i++) {
            assertReads(again, List.of(key(i)), List.of(expected.get(i)));
        }
        // Writing continues where the ring left off and keeps overwriting the oldest.
        expected.addAll(writeAndForget(again, List.of(key(10)), List.of(fx.block(110, 1, 4 * KIB))));
        assertThat(again.readablePrefix(List.of(key(7)))).isZero();
        assertReads(again, List.of(key(8), key(9), key(10)), expected.subList(8, 11));
    }

    @Test
    void shouldNotWriteABlockLargerThanTheShard() {
        SsdStore store = open(1, 4 * KIB);
        writeAndForget(store, List.of(key(0)), List.of(fx.block(0, 1, 4 * KIB)));

        assertThat(store.entryCount()).isZero();
        assertThat(store.metrics().errors(SsdErrorKind.OVERSIZED)).isEqualTo(1);
        assertThat(store.healthy()).isTrue();
    }

    @Test
    void shouldServeEntriesWrittenBeforeARestart() {
        SsdStore store = open(2, MIB);
        List<BlockKey> keys = List.of(key(0), key(1), key(2), key(3), key(4));
        List<SealedBlock> blocks = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            blocks.add(fx.block(i, 3, KIB, i % 2 == 0, i % 3 == 0));
        }
        List<byte[]> expected = writeAndForget(store, keys, blocks);
        reopen(store);

        SsdStore again = open(2, MIB);
        assertThat(again.entryCount()).isEqualTo(5);
        assertThat(again.metrics().count(SsdCounter.RECOVERED_ENTRIES)).isEqualTo(5);
        assertThat(again.metrics().count(SsdCounter.RECOVERY_DROPPED_ENTRIES)).isZero();
        assertReads(again, keys, expected);
    }

    @Test
    void shouldDropACorruptPayloadAtStartAndServeTheRest() throws IOException {
        SsdStore store = open(1, MIB);
        List<BlockKey> keys = List.of(key(0), key(1), key(2));
        List<byte[]> expected = writeAndForget(
                store, keys, List.of(fx.block(0, 1, 4 * KIB), fx.block(1, 1, 4 * KIB), fx.block(2, 1, 4 * KIB)));
        reopen(store);
        flipByte(dir.resolve("shard-0.dat"), 4096 + ENTRY_4K + 512 + 100); // entry 1's payload

        SsdStore again = open(1, MIB);
        assertThat(again.entryCount()).isEqualTo(2);
        assertThat(again.metrics().count(SsdCounter.RECOVERY_DROPPED_ENTRIES)).isEqualTo(1);
        assertReads(again, keys, expected.subList(0, 1));
        assertReads(again, List.of(key(2)), expected.subList(2, 3));
    }

    @Test
    void shouldDropATornHeaderAtStart() throws IOException {
        SsdStore store = open(1, MIB);
        List<BlockKey> keys = List.of(key(0), key(1), key(2));
        List<byte[]> expected = writeAndForget(
                store, keys, List.of(fx.block(0, 1, 4 * KIB), fx.block(1, 1, 4 * KIB), fx.block(2, 1, 4 * KIB)));
        reopen(store);
        flipByte(dir.resolve("shard-0.dat"), 4096 + 2 * ENTRY_4K + 20); // entry 2's header

        SsdStore again = open(1, MIB);
        assertThat(again.entryCount()).isEqualTo(2);
        assertReads(again, keys, expected.subList(0, 2));
    }

    @Test
    void shouldDetectACorruptPayloadOnReadWhenStartSkipsVerification() throws IOException {
        Path path = dir.resolve("shard-0.dat");
        SsdConfig config = SsdConfig.of(List.of(path), MIB).withVerifyOnStart(false);
        SsdStore store = open(config);
        List<BlockKey> keys = List.of(key(0), key(1), key(2));
        List<byte[]> expected = writeAndForget(
                store, keys, List.of(fx.block(0, 1, 4 * KIB), fx.block(1, 1, 4 * KIB), fx.block(2, 1, 4 * KIB)));
        reopen(store);
        flipByte(path, 4096 + ENTRY_4K + 512 + 4000);

        SsdStore again = open(config);
        assertThat(again.readablePrefix(keys)).isEqualTo(3);
        assertReads(again, keys, expected.subList(0, 1));
        assertThat(again.metrics().errors(SsdErrorKind.CHECKSUM)).isEqualTo(1);
        assertThat(again.readablePrefix(keys))
                .as("the corrupt entry left the index")
                .isEqualTo(1);
        assertThat(again.healthy()).isTrue();
    }

    @Test
    void shouldLoseOnlyTheEntryWhoseWriteWasTorn() throws IOException {
        Path path = dir.resolve("shard-0.dat");
        SsdStore store = open(1, 3 * ENTRY_4K + 512);
        List<byte[]> expected = new ArrayList<>();
        for (int i = 0; i < 4; i++) { // the fourth entry overwrote the first at the start of the ring
            expected.addAll(writeAndForget(store, List.of(key(i)), List.of(fx.block(i, 1, 4 * KIB))));
        }
        reopen(store);
        // A torn write of entry 3: its header landed, half of its payload did not.
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(2048), 4096 + 512 + 2048);
        }

        SsdStore again = open(1, 3 * ENTRY_4K + 512);
        assertThat(again.readablePrefix(List.of(key(3)))).isZero();
        assertThat(again.readablePrefix(List.of(key(0))))
                .as("overwritten before the crash")
                .isZero();
        assertReads(again, List.of(key(1), key(2)), expected.subList(1, 3));
    }

    @Test
    void shouldReformatWhenTheCapacityChanges() throws IOException {
        SsdStore store = open(1, MIB);
        writeAndForget(store, List.of(key(0)), List.of(fx.block(0, 1, KIB)));
        reopen(store);

        SsdStore again = open(1, 2 * MIB);
        assertThat(again.entryCount()).isZero();
        assertThat(Files.size(dir.resolve("shard-0.dat"))).isEqualTo(4096 + 2 * MIB);
    }

    @Test
    void shouldRefuseAShardFileAnotherStoreHolds() {
        open(1, MIB);
        assertThatThrownBy(() -> open(1, MIB))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("in use");
    }

    @Test
    void shouldWriteAKeyOnlyOnce() {
        SsdStore store = open(1, MIB);
        SealedBlock a = fx.block(1, 1, KIB);
        SealedBlock b = fx.block(2, 1, KIB);
        store.offer(List.of(key(0), key(0)), List.of(a, b));
        get(store.flush());
        store.offer(List.of(key(0)), List.of(a));
        get(store.flush());

        assertThat(store.metrics().count(SsdCounter.WRITE_BLOCKS)).isEqualTo(1);
        assertThat(store.shardStatus().get(0).bytesWritten()).isEqualTo(ENTRY_2K);
        List<byte[]> expected = List.of(bytesOf(a));
        a.release();
        b.release();
        assertReads(store, List.of(key(0)), expected);
    }

    @Test
    void shouldSkipABlockFreedWhileItWaitedInTheQueue() {
        Path path = dir.resolve("shard-0.dat");
        List<FaultyFile> files = new ArrayList<>();
        SsdStore store = FaultyFile.openStore(SsdConfig.of(List.of(path), MIB).withQueues(4, 2, 1, 4), files);
        stores.add(store);
        CountDownLatch gate = new CountDownLatch(1);
        files.get(0).writeGate = gate;
        SealedBlock first = fx.block(1, 1, KIB);
        SealedBlock second = fx.block(2, 1, KIB);
        SealedBlock third = fx.block(3, 1, KIB);
        store.offer(List.of(key(1)), List.of(first)); // its write stalls
        await().atMost(Duration.ofSeconds(5)).until(() -> store.metrics().gauge(SsdGauge.WRITE_INFLIGHT) == 1);
        store.offer(List.of(key(2)), List.of(second)); // taken; the dispatcher waits for the write slot
        await().atMost(Duration.ofSeconds(5)).until(() -> store.metrics().gauge(SsdGauge.WRITE_QUEUE_PENDING) == 0);
        store.offer(List.of(key(3)), List.of(third)); // waits in the queue
        third.release(); // evicted from RAM before the writer got to it

        gate.countDown();
        get(store.flush());
        first.release();
        second.release();
        assertThat(store.metrics().count(SsdCounter.WRITE_SKIPPED_FREED)).isEqualTo(1);
        assertThat(store.metrics().count(SsdCounter.WRITE_BLOCKS)).isEqualTo(2);
        assertThat(store.readablePrefix(List.of(key(3)))).isZero();
    }

    @Test
    void shouldDropBatchesWhenTheWriteQueueIsFull() {
        Path path = dir.resolve("shard-0.dat");
        List<FaultyFile> files = new ArrayList<>();
        SsdStore store = FaultyFile.openStore(SsdConfig.of(List.of(path), MIB).withQueues(1, 1, 1, 1), files);
        stores.add(store);
        CountDownLatch gate = new CountDownLatch(1);
        files.get(0).writeGate = gate;
        List<SealedBlock> blocks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            blocks.add(fx.block(i, 1, KIB));
        }
        store.offer(List.of(key(0)), List.of(blocks.get(0))); // taken, its write stalls
        await().atMost(Duration.ofSeconds(5)).until(() -> store.metrics().gauge(SsdGauge.WRITE_INFLIGHT) == 1);
        store.offer(List.of(key(1)), List.of(blocks.get(1))); // taken, the dispatcher waits for a write slot
        await().atMost(Duration.ofSeconds(5)).until(() -> store.metrics().gauge(SsdGauge.WRITE_QUEUE_PENDING) == 0);
        store.offer(List.of(key(2)), List.of(blocks.get(2))); // queued
        store.offer(List.of(key(3)), List.of(blocks.get(3))); // queue full: dropped

        assertThat(store.metrics().count(SsdCounter.WRITE_QUEUE_FULL)).isEqualTo(1);
        assertThat(store.metrics().gauge(SsdGauge.WRITE_QUEUE_PENDING)).isEqualTo(1);
        gate.countDown();
        get(store.flush());
        SsdFixtures.releaseAll(blocks);
        assertThat(store.readablePrefix(List.of(key(0), key(1), key(2), key(3))))
                .isEqualTo(3);
    }

    static void flipByte(Path path, long offset) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            b.put(0, (byte) (b.get(0) ^ 0x5A)).rewind();
            ch.write(b, offset);
        }
    }
}
