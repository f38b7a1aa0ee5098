package io.pegaflow.core.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.kernel.memory.ShardMemory;
import io.pegaflow.sys.Posix;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A pool whose shards come from a {@link ShardMemory}: each taken once, handed back once, never leaked on failure. */
class PinnedMemoryPoolShardMemoryTest {
    private static final long MIB = 1024 * 1024;

    /** Real anonymous mappings, counted; fails the allocation numbered {@code failAt} (0 = never). */
    private static final class CountingMemory implements ShardMemory {
        final List<long[]> live = new ArrayList<>();
        int allocations;
        int releases;
        int failAt;
        long shortBy;

        @Override
        public Mapping allocate(long bytes, String name) {
            allocations++;
            if (allocations == failAt) {
                throw new IllegalStateException("no memory for " + name);
            }
            long length = bytes - shortBy;
            long address = Posix.mmapAnonymous(length, false);
            long[] entry = {address, length};
            live.add(entry);
            return new Mapping() {
                @Override
                public long address() {
                    return address;
                }

                @Override
                public long lengthBytes() {
                    return length;
                }

                @Override
                public void release() {
                    releases++;
                    live.remove(entry);
                    Posix.munmap(address, length);
                }
            };
        }

        @Override
        public String describe() {
            return "COUNTED";
        }
    }

    @Test
    void shouldTakeEveryShardFromTheMemoryAndHandEachBackOnceOnClose() {
        CountingMemory memory = new CountingMemory();
        PinnedMemoryPool pool =
                PinnedMemoryPool.create(new PoolConfig(8 * MIB, 4, false, PoolConfig.NO_NUMA_NODE, 0, 0), memory);
        assertThat(memory.allocations).isEqualTo(4);
        assertThat(pool.regions())
                .extracting(MemoryRegionInfo::address)
                .containsExactlyInAnyOrderElementsOf(
                        memory.live.stream().map(e -> e[0]).toList());
        PinnedAllocation a = pool.allocate(MIB);
        assertThat(a).isNotNull();
        Posix.memset(a.address(), 0x5a, MIB); // the memory is pre-touched, writable pool memory
        a.release();
        pool.close();
        pool.close();
        assertThat(memory.releases).isEqualTo(4);
        assertThat(memory.live).isEmpty();
    }

    @Test
    void shouldHandBackTheShardsAlreadyTakenWhenALaterOneFails() {
        CountingMemory memory = new CountingMemory();
        memory.failAt = 3;
        assertThatThrownBy(() -> PinnedMemoryPool.create(
                        new PoolConfig(8 * MIB, 4, false, PoolConfig.NO_NUMA_NODE, 0, 0), memory))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("pool-shard-2");
        assertThat(memory.releases).isEqualTo(2);
        assertThat(memory.live).isEmpty();
    }

    @Test
    void shouldRefuseAndHandBackAMappingShorterThanAsked() {
        CountingMemory memory = new CountingMemory();
        memory.shortBy = Posix.pageSize();
        assertThatThrownBy(() -> PinnedMemoryPool.create(PoolConfig.of(4 * MIB), memory))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("asked for " + 4 * MIB);
        assertThat(memory.releases).isEqualTo(1);
        assertThat(memory.live).isEmpty();
    }

    @Test
    void shouldKeepAShardUntilTheLastOutstandingAllocationIsReleased() {
        CountingMemory memory = new CountingMemory();
        PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(4 * MIB), memory);
        PinnedAllocation held = pool.allocate(MIB);
        assertThat(held).isNotNull();
        pool.close();
        assertThat(memory.releases).isZero(); // a late reader still holds pool memory
        held.release();
        assertThat(memory.releases).isEqualTo(1);
    }
}
