package io.pegaflow.core.engine;

import io.pegaflow.core.cache.AdmissionPolicy;
import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.cache.EvictedBlocks;
import io.pegaflow.core.cache.TinyLfuAdmission;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.lease.TransferLockTable;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.SealedBlockSpill;
import io.pegaflow.core.tier.TierChain;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything one {@link PegaEngine} is built from, gathered in one place and checked once (Aeron's
 * {@code Context.conclude()}): the configuration, the pool and the device backend, the admission policy, the clock,
 * the ordered backing tiers, the spills and the cluster-index listeners, and the group the engine's agents report to.
 *
 * <p>Fill it with the fluent setters, then {@link PegaEngine#launch(EngineContext)} concludes it (or call
 * {@link #conclude()} first to validate without starting anything). {@code conclude()} fills the defaults, rejects
 * anything unusable with a message naming what and why, and freezes the context; nothing runs before it succeeded.
 *
 * <p>Ownership: the pool, the backend and the tiers pass to the engine at launch, which closes them in reverse order
 * (tiers last-first, then the pool, then the backend), also when the launch itself fails. Spills and index listeners
 * are borrowed: their owners close them after the engine. Not thread-safe: built by one thread.
 */
public final class EngineContext {
    private static final Logger LOG = LoggerFactory.getLogger(EngineContext.class);

    // null until set (config, pool, backend: required; admission: optional) or until conclude() fills the default
    private @Nullable EngineConfig config;
    private @Nullable PinnedMemoryPool pool;
    private @Nullable DeviceBackend backend;
    private @Nullable AdmissionPolicy admission;
    private NanoClock clock = NanoClock.SYSTEM;
    private EngineLimits limits = EngineLimits.DEFAULTS;
    private @Nullable AgentGroup agents;
    private final List<BackingTier> tiers = new ArrayList<>();
    private final List<SealedBlockSpill> spills = new ArrayList<>();
    private final List<BlockIndexListener> indexListeners = new ArrayList<>();
    private Duration transferLockTimeout = Duration.ofNanos(TransferLockTable.DEFAULT_TIMEOUT_NANOS);
    private double transferLockRequesterShare = DEFAULT_TRANSFER_LOCK_REQUESTER_SHARE;
    private double transferLockPoolShare = DEFAULT_TRANSFER_LOCK_POOL_SHARE;
    private RegistrationLog registrationLog = RegistrationLog.NONE;
    private Duration detachedIdleTimeout = DEFAULT_DETACHED_IDLE_TIMEOUT;
    private @Nullable TierChain chain; // built by conclude()
    private boolean concluded;

    /** The fraction of the pool one requester's transfer locks may pin ({@code pega.rdma.transfer-lock-requester-share}). */
    public static final double DEFAULT_TRANSFER_LOCK_REQUESTER_SHARE = 0.25;

    /** The fraction of the pool all transfer locks together may pin ({@code pega.rdma.transfer-lock-pool-share}). */
    public static final double DEFAULT_TRANSFER_LOCK_POOL_SHARE = 0.5;

    /** How long a restored instance without a Session stays without an RPC before it is ended. */
    public static final Duration DEFAULT_DETACHED_IDLE_TIMEOUT = Duration.ofMinutes(10);

    public EngineContext config(EngineConfig config) {
        checkOpen();
        this.config = config;
        return this;
    }

    /** The pinned pool; owned by the engine from launch on. */
    public EngineContext pool(PinnedMemoryPool pool) {
        checkOpen();
        this.pool = pool;
        return this;
    }

    /** The device backend; owned by the engine from launch on, closed last. */
    public EngineContext backend(DeviceBackend backend) {
        checkOpen();
        this.backend = backend;
        return this;
    }

    /**
     * Replaces the policy {@link EngineConfig#admission()} names with an LRU index behind {@code admission} (tests,
     * simulations).
     */
    public EngineContext admission(AdmissionPolicy admission) {
        checkOpen();
        this.admission = admission;
        return this;
    }

    /** What one client may take ({@code pega.limits.*}); {@link EngineLimits#DEFAULTS} unless set. */
    public EngineContext limits(EngineLimits limits) {
        checkOpen();
        this.limits = Objects.requireNonNull(limits, "limits");
        return this;
    }

    /** The clock every TTL, age and deadline reads; {@link NanoClock#SYSTEM} unless set. */
    public EngineContext clock(NanoClock clock) {
        checkOpen();
        this.clock = clock;
        return this;
    }

    /** Where the engine's agents register for health; a private group unless set. */
    public EngineContext agents(AgentGroup agents) {
        checkOpen();
        this.agents = agents;
        return this;
    }

    /**
     * How long a transfer lock lives unreleased ({@code pega.rdma.transfer-lock-timeout}); 120 s unless set.
     *
     * @throws IllegalArgumentException when not positive
     */
    public EngineContext transferLockTimeout(Duration timeout) {
        checkOpen();
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("engine context: transfer lock timeout " + timeout + " (expected: > 0)");
        }
        this.transferLockTimeout = timeout;
        return this;
    }

    /**
     * How much of the pool transfer locks may pin: {@code perRequester} for one requester id, {@code total} for all of
     * them; both in (0, 1], the first no larger than the second.
     *
     * @throws IllegalArgumentException naming the keys when out of range
     */
    public EngineContext transferLockShares(double perRequester, double total) {
        checkOpen();
        if (!(total > 0 && total <= 1)) {
            throw new IllegalArgumentException(
                    "pega.rdma.transfer-lock-pool-share: " + total + " (expected: > 0 and <= 1)");
        }
        if (!(perRequester > 0 && perRequester <= total)) {
            throw new IllegalArgumentException("pega.rdma.transfer-lock-requester-share: " + perRequester
                    + " (expected: > 0 and <= pega.rdma.transfer-lock-pool-share " + total + ")");
        }
        this.transferLockRequesterShare = perRequester;
        this.transferLockPoolShare = total;
        return this;
    }

    /** Appends a backing tier; tiers are asked in the order added. Owned by the engine from launch on. */
    public EngineContext tier(BackingTier tier) {
        checkOpen();
        tiers.add(Objects.requireNonNull(tier, "tier"));
        return this;
    }

    /** Appends a spill, offered every block that enters the RAM index (in the order added). */
    public EngineContext spill(SealedBlockSpill spill) {
        checkOpen();
        spills.add(Objects.requireNonNull(spill, "spill"));
        return this;
    }

    /** Appends a listener told which blocks became findable here and which stopped being findable. */
    public EngineContext indexListener(BlockIndexListener listener) {
        checkOpen();
        indexListeners.add(Objects.requireNonNull(listener, "indexListener"));
        return this;
    }

    /** Where accepted registrations and ended instances are recorded (the restart journal); none unless set. */
    public EngineContext registrationLog(RegistrationLog log) {
        checkOpen();
        this.registrationLog = Objects.requireNonNull(log, "registrationLog");
        return this;
    }

    /** How long a restored instance that no Session adopted may go without an RPC before it ends (10 min). */
    public EngineContext detachedIdleTimeout(Duration timeout) {
        checkOpen();
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("engine context: detached idle timeout " + timeout + " (expected: > 0)");
        }
        this.detachedIdleTimeout = timeout;
        return this;
    }

    /**
     * Validates and freezes the context. Fills the defaults: a private agent group, and a host alignment raised to
     * what the strictest tier needs (512 with the SSD tier).
     *
     * @throws IllegalArgumentException naming the missing or unusable part; nothing was started
     * @throws IllegalStateException when called twice
     */
    public EngineContext conclude() {
        checkOpen();
        EngineConfig cfg = require(config, "config");
        PinnedMemoryPool p = require(pool, "pool");
        require(backend, "backend");
        require(clock, "clock");
        if (p.capacityBytes() <= 0) {
            throw new IllegalArgumentException("engine context: the pool has no capacity (expected: > 0 bytes)");
        }
        TierChain c = TierChain.of(tiers);
        chain = c;
        long alignment = Math.max(cfg.hostAlignmentBytes(), c.requiredHostAlignmentBytes());
        if (Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException(
                    "engine context: tier host alignment " + alignment + " (expected: a power of two)");
        }
        cfg = cfg.withHostAlignmentBytes(alignment);
        config = cfg;
        if (agents == null) {
            agents = new AgentGroup();
        }
        concluded = true;
        return this;
    }

    private static <T> T require(@Nullable T part, String name) {
        if (part == null) {
            throw new IllegalArgumentException("engine context: " + name + " is not set");
        }
        return part;
    }

    /** A part conclude() guarantees; the package reads these only from a concluded context (the engine's launch). */
    private static <T> T concluded(@Nullable T part) {
        if (part == null) {
            throw new IllegalStateException("engine context: conclude() first");
        }
        return part;
    }

    private void checkOpen() {
        if (concluded) {
            throw new IllegalStateException("engine context already concluded");
        }
    }

    boolean isConcluded() {
        return concluded;
    }

    /** The configuration as concluded (with the effective host alignment). */
    public EngineConfig config() {
        return concluded(config);
    }

    PinnedMemoryPool pool() {
        return concluded(pool);
    }

    DeviceBackend backend() {
        return concluded(backend);
    }

    /**
     * A new RAM index with the configured policy: an LRU index behind the {@link #admission} override when one was
     * set; else Caffeine's W-TinyLFU for {@code caffeine} (its insert-time evictions go to {@code onEvicted}), LRU
     * behind our sketch for {@code tinylfu}, plain LRU for {@code lru}.
     */
    BlockCache newCache(Consumer<EvictedBlocks> onEvicted) {
        PinnedMemoryPool p = pool();
        if (admission != null) {
            return BlockCache.lru(admission);
        }
        return switch (config().admission()) {
            case "caffeine" -> BlockCache.caffeine(p.capacityBytes(), onEvicted);
            case "tinylfu" -> BlockCache.lru(TinyLfuAdmission.forPool(p));
            default -> BlockCache.lru(AdmissionPolicy.ALWAYS);
        };
    }

    RegistrationLog registrationLog() {
        return registrationLog;
    }

    Duration detachedIdleTimeout() {
        return detachedIdleTimeout;
    }

    NanoClock clock() {
        return clock;
    }

    /** The limits in force. */
    public EngineLimits limits() {
        return limits;
    }

    AgentGroup agents() {
        return concluded(agents);
    }

    Duration transferLockTimeout() {
        return transferLockTimeout;
    }

    double transferLockRequesterShare() {
        return transferLockRequesterShare;
    }

    double transferLockPoolShare() {
        return transferLockPoolShare;
    }

    TierChain chain() {
        return concluded(chain);
    }

    List<SealedBlockSpill> spills() {
        return List.copyOf(spills);
    }

    List<BlockIndexListener> indexListeners() {
        return List.copyOf(indexListeners);
    }

    /**
     * Closes what the engine would have owned, in reverse order: tiers, pool, backend. For a launch that failed, and
     * for a context that was concluded but never launched.
     */
    void closeOwned() {
        try {
            for (int i = tiers.size() - 1; i >= 0; i--) {
                try {
                    tiers.get(i).close();
                } catch (RuntimeException e) {
                    LOG.error("closing tier {} failed", tiers.get(i).tierName(), e);
                }
            }
        } finally {
            try {
                PinnedMemoryPool p = pool;
                if (p != null) {
                    p.close();
                }
            } finally {
                DeviceBackend b = backend;
                if (b != null) {
                    b.close();
                }
            }
        }
    }
}
