package io.pegaflow.core.ssd;

import static io.pegaflow.core.ssd.SsdFixtures.KIB;
import static io.pegaflow.core.ssd.SsdFixtures.MIB;
import static io.pegaflow.core.ssd.SsdFixtures.bytesOf;
import static io.pegaflow.core.ssd.SsdFixtures.get;
import static io.pegaflow.core.ssd.SsdFixtures.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Each fault of a shard (I/O error, disk full, read-only, short write, short read, file removed) takes only that
 * shard out of service: counted, reported with its reason, its reads miss, other shards keep serving, nothing throws
 * and no block with wrong bytes is ever returned. Removal and truncation are real; errno faults are injected into a
 * real file through {@link FaultyFile}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SsdFaultTest {
    @TempDir
    Path dir;

    private SsdFixtures fx;
    private SsdStore store;
    private final List<FaultyFile> files = new ArrayList<>();

    @BeforeEach
    void open() {
        fx = new SsdFixtures(8 * MIB);
        List<Path> paths = List.of(dir.resolve("shard-0.dat"), dir.resolve("shard-1.dat"));
        store = FaultyFile.openStore(SsdConfig.of(paths, 2 * MIB), files);
    }

    @AfterEach
    void close() {
        store.close();
        fx.close();
    }

    /** Writes blocks 0..n-1 (even keys land on shard 0, odd on shard 1) and returns their bytes. */
    private List<byte[]> write(int from, int n) {
        List<BlockKey> keys = new ArrayList<>();
        List<SealedBlock> blocks = new ArrayList<>();
        List<byte[]> bytes = new ArrayList<>();
        for (int i = from; i < from + n; i++) {
            keys.add(key(i));
            SealedBlock b = fx.block(i, 2, KIB);
            blocks.add(b);
            bytes.add(bytesOf(b));
        }
        store.offer(keys, blocks);
        get(store.flush());
        SsdFixtures.releaseAll(blocks);
        return bytes;
    }

    private List<SealedBlock> read(BlockKey... keys) {
        return get(store.readPrefix(List.of(keys), fx.allocator()));
    }

    private void assertShard0Down(SsdErrorKind kind) {
        ShardStatus s0 = store.shardStatus().get(0);
        assertThat(s0.healthy()).isFalse();
        assertThat(s0.failureKind()).isEqualTo(kind);
        assertThat(s0.failureDetail()).isNotBlank();
        assertThat(s0.entries()).isZero();
        assertThat(store.shardStatus().get(1).healthy()).isTrue();
        assertThat(store.healthy()).isFalse();
        assertThat(store.metrics().errors(kind)).isPositive();
    }

    /** Shard 1 still serves byte-exact blocks, and new writes go only there. */
    private void assertShard1Serves(List<byte[]> written) {
        List<SealedBlock> got = read(key(1));
        try {
            assertThat(got).hasSize(1);
            assertThat(bytesOf(got.get(0))).isEqualTo(written.get(1));
        } finally {
            SsdFixtures.releaseAll(got);
        }
        long entriesBefore = store.shardStatus().get(1).entries();
        List<byte[]> more = write(100, 2);
        List<SealedBlock> again = read(key(100), key(101));
        try {
            assertThat(again).hasSize(2);
            assertThat(bytesOf(again.get(0))).isEqualTo(more.get(0));
            assertThat(bytesOf(again.get(1))).isEqualTo(more.get(1));
        } finally {
            SsdFixtures.releaseAll(again);
        }
        assertThat(store.shardStatus().get(1).entries()).isEqualTo(entriesBefore + 2);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"EIO,IO_ERROR", "ENOSPC,NO_SPACE", "EROFS,READ_ONLY", "SHORT,SHORT_WRITE"})
    void shouldTakeAShardOutOfServiceOnAWriteFault(FaultyFile.Fault fault, SsdErrorKind kind) {
        List<byte[]> before = write(0, 2);
        files.get(0).writeFault = fault;

        write(2, 2); // key 2 goes to shard 0 and fails
        assertShard0Down(kind);
        assertThat(store.metrics().count(SsdCounter.WRITE_FAILURES)).isEqualTo(1);
        assertThat(store.readablePrefix(List.of(key(0))))
                .as("shard 0's entries now miss")
                .isZero();
        assertThat(read(key(0))).isEmpty();
        assertShard1Serves(before);
        assertThat(files.get(0).writes.get())
                .as("superblock, key 0, failed key 2, and nothing after")
                .isEqualTo(3);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"EIO,IO_ERROR", "EROFS,READ_ONLY", "SHORT,SHORT_READ"})
    void shouldTurnReadsIntoMissesOnAReadFault(FaultyFile.Fault fault, SsdErrorKind kind) {
        List<byte[]> before = write(0, 2);
        files.get(0).readFault = fault;

        assertThat(read(key(0), key(1)))
                .as("the first key is on the failed shard")
                .isEmpty();
        assertShard0Down(kind);
        assertThat(store.metrics().count(SsdCounter.PREFETCH_FAILURES)).isEqualTo(1);
        assertShard1Serves(before);
    }

    @Test
    void shouldTurnReadsIntoMissesWhenTheFileWasTruncatedUnderneath() throws IOException {
        List<byte[]> before = write(0, 2);
        try (FileChannel ch = FileChannel.open(dir.resolve("shard-0.dat"), StandardOpenOption.WRITE)) {
            ch.truncate(4096 + 1024); // the first entry's payload is now past the end of the file
        }

        assertThat(read(key(0))).isEmpty();
        assertShard0Down(SsdErrorKind.SHORT_READ);
        assertShard1Serves(before);
    }

    @Test
    void shouldTakeAShardOutOfServiceWhenItsFileIsRemoved() throws IOException {
        List<byte[]> before = write(0, 2);
        Files.delete(dir.resolve("shard-0.dat"));
        assertThat(read(key(0)))
                .as("the read path checks the file before reading")
                .isEmpty();

        assertShard0Down(SsdErrorKind.FILE_REMOVED);
        store.checkShardFiles(); // idempotent: still one error, logged once
        assertThat(store.metrics().errors(SsdErrorKind.FILE_REMOVED)).isEqualTo(1);
        assertShard1Serves(before);
    }

    @Test
    void shouldRewriteKeysOfAFailedShardToAHealthyOne() {
        write(0, 2);
        files.get(0).readFault = FaultyFile.Fault.EIO;
        assertThat(read(key(0))).isEmpty();

        List<byte[]> again = write(0, 1); // the key is no longer indexed, so it is written again, to shard 1
        List<SealedBlock> got = read(key(0));
        try {
            assertThat(got).hasSize(1);
            assertThat(bytesOf(got.get(0))).isEqualTo(again.get(0));
        } finally {
            SsdFixtures.releaseAll(got);
        }
    }

    @Test
    void shouldKeepServingFromRamWhenEveryShardFailed() {
        write(0, 2);
        files.get(0).writeFault = FaultyFile.Fault.EIO;
        files.get(1).writeFault = FaultyFile.Fault.EIO;
        write(2, 2);

        assertThat(store.shardStatus()).noneMatch(ShardStatus::healthy);
        assertThat(store.entryCount()).isZero();
        write(4, 2); // nothing to write to: dropped quietly
        assertThat(store.metrics().count(SsdCounter.WRITE_FAILURES)).isEqualTo(2);
    }
}
