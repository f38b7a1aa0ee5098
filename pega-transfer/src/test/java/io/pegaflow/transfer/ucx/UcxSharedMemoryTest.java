package io.pegaflow.transfer.ucx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.kernel.memory.ShardMemory;
import io.pegaflow.sys.LibC;
import io.pegaflow.sys.Posix;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TestMemory;
import io.pegaflow.transfer.TransferBatch;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The pool's shards allocated by UCX: where they live, who releases them, and the order the context allows. */
@Timeout(60)
class UcxSharedMemoryTest {
    private static final long MIB = 1024 * 1024;
    private static final TransferConfig SHM = TransferConfig.of("lo", 1).withTransports("shm,self");

    @Test
    void shouldPlaceEveryShardInSharedMemoryAndHandItBackWhenThePoolCloses() {
        try (UcxSharedMemory memory = UcxSharedMemory.open(SHM)) {
            PinnedMemoryPool pool =
                    PinnedMemoryPool.create(new PoolConfig(8 * MIB, 2, false, PoolConfig.NO_NUMA_NODE, 0, 0), memory);
            assertThat(memory.outstanding()).isEqualTo(2);
            assertThat(memory.sharedOutstanding()).isEqualTo(2);
            for (MemoryRegionInfo r : pool.regions()) {
                // a private anonymous mapping is what a peer cannot attach; UCX's segments are shared ("s")
                assertThat(ProcMaps.isShared(r.address()))
                        .as("%s", ProcMaps.mappingOf(r.address()))
                        .isTrue();
            }
            pool.close();
            assertThat(memory.outstanding()).isZero();
        }
    }

    @Test
    void shouldTellASharedMappingFromThePoolsOwnPrivateOne() {
        try (PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(4 * MIB))) {
            long address = pool.regions().get(0).address();
            assertThat(ProcMaps.mappingOf(address)).isNotNull();
            assertThat(ProcMaps.isShared(address)).isFalse();
        }
        assertThat(ProcMaps.mappingOf(0)).isNull();
    }

    /** The SSD tier writes and reads pool memory with O_DIRECT; shared-memory pages must take that as anonymous ones do. */
    @Test
    void shouldWriteAndReadSharedPoolMemoryWithODirect() throws Exception {
        // in the build directory, on a disk: tmpfs, where /tmp may be, refuses O_DIRECT
        Path dir = Files.createDirectories(
                Path.of("target", "odirect-" + ProcessHandle.current().pid()));
        Path file = dir.resolve("shard.bin");
        try (UcxSharedMemory memory = UcxSharedMemory.open(SHM);
                PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(8 * MIB), memory)) {
            PinnedAllocation out = pool.allocate(MIB);
            PinnedAllocation in = pool.allocate(MIB);
            assertThat(out).isNotNull();
            assertThat(in).isNotNull();
            TestMemory.fill(out.address(), MIB, 11);
            TestMemory.zero(in.address(), MIB);
            int fd = Posix.open(file.toString(), LibC.O_RDWR | LibC.O_CREAT | LibC.O_DIRECT, 0600);
            try {
                Posix.pwrite(fd, out.address(), MIB, 0, "shard.bin");
                assertThat(Posix.pread(fd, in.address(), MIB, 0, "shard.bin")).isEqualTo(MIB);
            } finally {
                Posix.closeQuietly(fd);
                Files.deleteIfExists(file);
                Files.deleteIfExists(dir);
            }
            assertThat(TestMemory.firstMismatch(in.address(), MIB, 11)).isEqualTo(-1);
            out.release();
            in.release();
        }
    }

    /** Without a shared-memory transport UCX allocates private memory: counted as such, and not warned about. */
    @Test
    void shouldCountPrivateAllocationsOfANetworkOnlyContext() {
        try (UcxSharedMemory memory =
                UcxSharedMemory.open(TransferConfig.of("lo", 1).withTransports("tcp"))) {
            ShardMemory.Mapping a = memory.allocate(MIB, "tcp only");
            assertThat(memory.outstanding()).isEqualTo(1);
            assertThat(memory.sharedOutstanding()).isZero();
            a.release();
        }
    }

    @Test
    void shouldReleaseAnAllocationExactlyOnce() {
        try (UcxSharedMemory memory = UcxSharedMemory.open(SHM)) {
            ShardMemory.Mapping a = memory.allocate(MIB, "a");
            assertThat(memory.sharedOutstanding()).isEqualTo(1);
            ShardMemory.Mapping b = memory.allocate(MIB, "b");
            assertThat(a.lengthBytes()).isGreaterThanOrEqualTo(MIB);
            a.release();
            a.release();
            assertThat(memory.outstanding()).isEqualTo(1);
            b.release();
            assertThat(memory.outstanding()).isZero();
        }
    }

    @Test
    void shouldCloseTheContextOnlyAfterTheLastAllocationWentBackAndRefuseNewOnesAfterClose() {
        UcxSharedMemory memory = UcxSharedMemory.open(SHM);
        ShardMemory.Mapping a = memory.allocate(MIB, "late");
        memory.close(); // logs, instead of closing the context under mapped memory
        assertThat(memory.contextClosed()).isFalse();
        assertThat(memory.outstanding()).isEqualTo(1);
        assertThatThrownBy(() -> memory.allocate(MIB, "after close"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        a.release(); // still valid: the context was left open for it, and closes now
        assertThat(memory.outstanding()).isZero();
        assertThat(memory.contextClosed()).isTrue();
        memory.close();
        assertThat(memory.contextClosed()).isTrue();
    }

    /** An engine's workers live on the borrowed context: closing it under them would abort the JVM. */
    @Test
    void shouldKeepTheContextForAnEngineThatStillBorrowsItAndCloseItWhenTheEngineDoes() {
        UcxSharedMemory memory = UcxSharedMemory.open(SHM);
        PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(4 * MIB), memory);
        TransferEngine engine = UcxTransferEngine.open(SHM, memory, pool.regions(), NanoClock.SYSTEM);
        memory.close(); // out of order: the pool and the engine still use it
        assertThat(memory.contextClosed()).isFalse();
        engine.close();
        assertThat(memory.contextClosed()).as("the pool's shard is still out").isFalse();
        pool.close();
        assertThat(memory.outstanding()).isZero();
        assertThat(memory.contextClosed()).isTrue();
        assertThatThrownBy(() -> UcxTransferEngine.open(SHM, memory, pool.regions(), NanoClock.SYSTEM))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void shouldRefuseAnEngineForOtherTransportsOrNicsThanItsContext() {
        try (UcxSharedMemory memory = UcxSharedMemory.open(SHM)) {
            PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(4 * MIB), memory);
            try {
                TransferConfig tcp = TransferConfig.of("lo", 1).withTransports("tcp");
                assertThat(memory.serves(tcp)).isFalse();
                assertThatThrownBy(() -> UcxTransferEngine.open(tcp, memory, pool.regions(), NanoClock.SYSTEM))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("transports=shm,self")
                        .hasMessageContaining("transports=tcp");
                TransferConfig otherNic = TransferConfig.of("eth9", 1).withTransports("shm,self");
                assertThat(memory.serves(otherNic)).isFalse();
                assertThatThrownBy(() -> UcxTransferEngine.open(otherNic, memory, pool.regions(), NanoClock.SYSTEM))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("NICs and transports must be the same");
                assertThat(memory.borrowers())
                        .as("a refused engine borrows nothing")
                        .isZero();
            } finally {
                pool.close();
            }
            assertThat(memory.outstanding()).isZero();
        }
    }

    /**
     * A server with P2P and the P/D push on runs both engines, with their own lane counts, on the context that
     * allocated its pool (decision 0019): each moves bytes through it, and the context outlives both.
     */
    @Test
    void shouldRunTwoEnginesOfDifferentLaneCountsOnOneContextAndCloseItAfterBoth() throws Exception {
        TransferConfig twoLanes = TransferConfig.of("lo", 2).withTransports("shm,self");
        UcxSharedMemory memoryA = UcxSharedMemory.open(SHM);
        UcxSharedMemory memoryB = UcxSharedMemory.open(SHM);
        PinnedMemoryPool poolA = PinnedMemoryPool.create(PoolConfig.of(8 * MIB), memoryA);
        PinnedMemoryPool poolB = PinnedMemoryPool.create(PoolConfig.of(8 * MIB), memoryB);
        TransferEngine oneA = UcxTransferEngine.open(SHM, memoryA, poolA.regions(), NanoClock.SYSTEM);
        TransferEngine twoA = UcxTransferEngine.open(twoLanes, memoryA, poolA.regions(), NanoClock.SYSTEM);
        TransferEngine oneB = UcxTransferEngine.open(SHM, memoryB, poolB.regions(), NanoClock.SYSTEM);
        TransferEngine twoB = UcxTransferEngine.open(twoLanes, memoryB, poolB.regions(), NanoClock.SYSTEM);
        try {
            assertThat(memoryA.borrowers()).isEqualTo(2);
            assertThat(twoA.lanes()).isEqualTo(2);
            connect(oneA, new PeerId("a-one"), oneB, new PeerId("b-one"));
            connect(twoA, new PeerId("a-two"), twoB, new PeerId("b-two"));
            PinnedAllocation src = allocate(poolB, MIB);
            PinnedAllocation got = allocate(poolA, MIB);
            PinnedAllocation put = allocate(poolA, MIB);
            PinnedAllocation landed = allocate(poolB, MIB);
            TestMemory.fill(src.address(), MIB, 21);
            TestMemory.fill(put.address(), MIB, 22);
            TestMemory.zero(got.address(), MIB);
            TestMemory.zero(landed.address(), MIB);

            TransferBatch get = TransferBatch.get(16);
            TransferBatch putBatch = TransferBatch.put(16);
            long op = MIB / 16;
            for (int k = 0; k < 16; k++) {
                get.add(got.address() + k * op, src.address() + k * op, op);
                putBatch.add(put.address() + k * op, landed.address() + k * op, op);
            }
            TransferResult r1 =
                    oneA.submit(new PeerId("b-one"), get, 10_000_000_000L).get(20, TimeUnit.SECONDS);
            TransferResult r2 =
                    twoA.submit(new PeerId("b-two"), putBatch, 10_000_000_000L).get(20, TimeUnit.SECONDS);
            assertThat(r1.isComplete()).as(r1.toString()).isTrue();
            assertThat(r2.isComplete()).as(r2.toString()).isTrue();
            assertThat(TestMemory.firstMismatch(got.address(), MIB, 21)).isEqualTo(-1);
            assertThat(TestMemory.firstMismatch(landed.address(), MIB, 22)).isEqualTo(-1);
            for (PinnedAllocation a : List.of(src, got, put, landed)) {
                a.release();
            }

            memoryA.close(); // out of order: both engines and the pool still use it
            oneA.close();
            assertThat(memoryA.borrowers()).isEqualTo(1);
            assertThat(memoryA.contextClosed()).isFalse();
            twoA.close();
            assertThat(memoryA.borrowers()).isZero();
            assertThat(memoryA.contextClosed())
                    .as("the pool's shards are still out")
                    .isFalse();
            poolA.close();
            assertThat(memoryA.contextClosed()).isTrue();
        } finally {
            for (AutoCloseable c : List.<AutoCloseable>of(oneA, twoA, oneB, twoB, poolA, poolB, memoryA, memoryB)) {
                c.close();
            }
        }
        assertThat(memoryB.outstanding()).isZero();
        assertThat(memoryB.contextClosed()).isTrue();
    }

    private static void connect(TransferEngine a, PeerId aId, TransferEngine b, PeerId bId) throws Exception {
        a.connect(bId, b.localDescriptor(), 10_000_000_000L).get(20, TimeUnit.SECONDS);
        b.connect(aId, a.localDescriptor(), 10_000_000_000L).get(20, TimeUnit.SECONDS);
    }

    private static PinnedAllocation allocate(PinnedMemoryPool pool, long bytes) {
        PinnedAllocation a = pool.allocate(bytes);
        assertThat(a).as("pool allocation of %d bytes", bytes).isNotNull();
        return a;
    }

    @Test
    void shouldCloseTheContextAtCloseWhenNothingUsesIt() {
        UcxSharedMemory memory = UcxSharedMemory.open(SHM);
        memory.allocate(MIB, "short-lived").release();
        assertThat(memory.contextClosed()).isFalse();
        memory.close();
        assertThat(memory.contextClosed()).isTrue();
    }
}
