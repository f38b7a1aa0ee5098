package io.pegaflow.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.ReclaimingAllocator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One assembly: the context is checked before anything starts, the engine owns its pool, backend and tiers and
 * closes them in reverse order, and a launch that fails leaves nothing open (review E2).
 */
@Timeout(30)
class EngineContextTest {
    private static final long POOL_BYTES = 1 << 20;

    private final List<String> closed = new CopyOnWriteArrayList<>();
    private final PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(POOL_BYTES));
    private final EngineConfig config = EngineConfig.defaults(pool.config());

    @AfterEach
    void closePool() {
        pool.close();
    }

    /** A tier that supplies nothing and records when it closes, and whether the pool was still open then. */
    private final class RecordingTier implements BackingTier {
        private final String name;
        private final long alignment;

        RecordingTier(String name, long alignment) {
            this.name = name;
            this.alignment = alignment;
        }

        @Override
        public String tierName() {
            return name;
        }

        @Override
        public long requiredHostAlignmentBytes() {
            return alignment;
        }

        @Override
        public CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> keys, ReclaimingAllocator memory) {
            return CompletableFuture.completedFuture(List.of());
        }

        @Override
        public void close() {
            closed.add(name + (poolOpen() ? " (pool open)" : " (pool closed)"));
        }
    }

    /** The host backend, recording its close. */
    private final class RecordingBackend extends HookedHostBackend {
        RecordingBackend() {
            super(CopyHook.NONE);
        }

        @Override
        public void close() {
            closed.add("backend" + (poolOpen() ? " (pool open)" : " (pool closed)"));
        }
    }

    private boolean poolOpen() {
        try {
            PinnedAllocation a = pool.allocate(512);
            if (a != null) {
                a.release();
            }
            return true;
        } catch (IllegalStateException e) {
            return false;
        }
    }

    @Test
    void shouldNameTheMissingPart() {
        assertThatThrownBy(() -> new EngineContext()
                        .config(config)
                        .backend(new RecordingBackend())
                        .conclude())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("engine context: pool is not set");
        assertThatThrownBy(() -> new EngineContext()
                        .pool(pool)
                        .backend(new RecordingBackend())
                        .conclude())
                .hasMessage("engine context: config is not set");
        assertThatThrownBy(() -> new EngineContext().config(config).pool(pool).conclude())
                .hasMessage("engine context: backend is not set");
    }

    @Test
    void shouldFreezeOnceConcluded() {
        EngineContext ctx = new EngineContext()
                .config(config)
                .pool(pool)
                .backend(new RecordingBackend())
                .conclude();
        assertThatThrownBy(() -> ctx.tier(new RecordingTier("ssd", 1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("engine context already concluded");
        assertThatThrownBy(ctx::conclude).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldRefuseTwoTiersOfOneName() {
        EngineContext ctx = new EngineContext()
                .config(config)
                .pool(pool)
                .backend(new RecordingBackend())
                .tier(new RecordingTier("ssd", 1))
                .tier(new RecordingTier("ssd", 1));
        assertThatThrownBy(ctx::conclude)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tier name ssd is used by two tiers (expected: unique)");
    }

    @Test
    void shouldRefuseATierNamedLikeAnAttributionLabel() {
        EngineContext ctx = new EngineContext()
                .config(config)
                .pool(pool)
                .backend(new RecordingBackend())
                .tier(new RecordingTier("miss", 1));
        assertThatThrownBy(ctx::conclude).hasMessageContaining("other than ram and miss");
    }

    @Test
    void shouldRaiseTheHostAlignmentToWhatTheStrictestTierNeeds() {
        try (PegaEngine engine = PegaEngine.launch(new EngineContext()
                .config(config)
                .pool(PinnedMemoryPool.create(PoolConfig.of(POOL_BYTES)))
                .backend(new RecordingBackend())
                .tier(new RecordingTier("ssd", 512))
                .tier(new RecordingTier("remote", 64)))) {
            assertThat(engine.config().hostAlignmentBytes()).isEqualTo(512);
            assertThat(engine.tierNames()).containsExactly("ssd", "remote");
        }
    }

    @Test
    void shouldCloseTiersLastFirstThenThePoolThenTheBackend() {
        PegaEngine engine = PegaEngine.launch(new EngineContext()
                .config(config)
                .pool(pool)
                .backend(new RecordingBackend())
                .tier(new RecordingTier("ssd", 1))
                .tier(new RecordingTier("remote", 1)));
        engine.close();
        engine.close();
        assertThat(closed).containsExactly("remote (pool open)", "ssd (pool open)", "backend (pool closed)");
    }

    @Test
    void shouldCloseEverythingItWasGivenWhenTheLaunchFails() {
        EngineContext broken = new EngineContext()
                .config(config)
                .pool(pool)
                .backend(new RecordingBackend())
                .tier(new RecordingTier("ssd", 1))
                .tier(new RecordingTier("ssd", 1));
        assertThatThrownBy(() -> PegaEngine.launch(broken)).isInstanceOf(IllegalArgumentException.class);
        assertThat(closed).containsExactly("ssd (pool open)", "ssd (pool open)", "backend (pool closed)");
        assertThat(poolOpen()).as("the pool was closed too").isFalse();
    }
}
