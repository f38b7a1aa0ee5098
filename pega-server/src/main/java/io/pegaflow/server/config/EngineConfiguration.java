package io.pegaflow.server.config;

import io.pegaflow.core.cache.AdmissionPolicy;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.DeviceBackends;
import io.pegaflow.core.device.cuda.CopyMode;
import io.pegaflow.core.device.cuda.CudaCopyConfig;
import io.pegaflow.core.device.cuda.CudaTopology;
import io.pegaflow.core.engine.BlockIndexListener;
import io.pegaflow.core.engine.EngineConfig;
import io.pegaflow.core.engine.EngineContext;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.journal.RegistrationJournal;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.SealedBlockSpill;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.memory.ShardMemory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.DependsOn;

/**
 * Assembles the engine, in this one place, from {@link PegaProperties} and the tier, spill and index-listener beans
 * other configurations contribute ({@code ObjectProvider}s, in {@code @Order}): pool first (its regions are
 * registered by the cuda backend), then the backend, then one {@link EngineContext} that is concluded before anything
 * starts. The engine owns the pool, the backend and the tiers from then on and closes them in reverse order.
 */
@Configuration(proxyBeanMethods = false)
public class EngineConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(EngineConfiguration.class);

    /** Every worker thread of this process registers here, so that a dead one turns health DOWN. */
    @Bean
    AgentGroup pegaAgents() {
        return new AgentGroup();
    }

    @Bean
    AgentHealthIndicator agentsHealthIndicator(AgentGroup agents) {
        return new AgentHealthIndicator(agents);
    }

    @Bean
    EngineConfig engineConfig(PegaProperties p) {
        PegaProperties.Pool pool = p.pool();
        if (pool.size().toBytes() <= 0) {
            throw new IllegalArgumentException("pega.pool.size: " + pool.size() + " (expected: > 0)");
        }
        if (pool.hintValueSize().toBytes() < 0) {
            throw new IllegalArgumentException(
                    "pega.pool.hint-value-size: " + pool.hintValueSize() + " (expected: >= 0)");
        }
        PoolConfig poolConfig = new PoolConfig(
                pool.size().toBytes(),
                pool.shards(),
                pool.hugePages(),
                poolNumaNode(p),
                pool.hintValueSize().toBytes(),
                pool.pretouchThreads());
        return new EngineConfig(
                poolConfig,
                p.lease().ttl(),
                p.maintenanceInterval(),
                p.inflightMaxAge(),
                p.evictionBatch(),
                p.blockwiseAlloc(),
                1, // raised by the engine context to what its tiers need (512 with the SSD tier)
                p.cache().admission(),
                p.saveDeadline());
    }

    /**
     * The configured node, or on a multi-socket GPU host the NUMA node of the first served GPU (from sysfs, by PCI bus
     * id), so DMA between the pool and the GPU never crosses the socket interconnect. Single-node hosts and the host
     * backend never touch the driver here.
     */
    static int poolNumaNode(PegaProperties p) {
        int configured = p.pool().numaNode();
        if (configured != PoolConfig.NO_NUMA_NODE
                || "host".equals(p.device().backend())
                || CudaTopology.hostNumaNodeCount() < 2) {
            return configured;
        }
        int gpu = p.device().devices().isEmpty() ? 0 : p.device().devices().get(0);
        int node = CudaTopology.numaNodeOfDevice(gpu);
        if (node != CudaTopology.UNKNOWN_NODE) {
            LOG.info("placing the pool on NUMA node {}, local to GPU {}", node, gpu);
        }
        return node == CudaTopology.UNKNOWN_NODE ? PoolConfig.NO_NUMA_NODE : node;
    }

    /** {@code pega.cuda.*} as the cuda backend takes it; its constructor rejects unusable values naming the key. */
    static CudaCopyConfig copyConfig(PegaProperties.Cuda c) {
        return new CudaCopyConfig(
                CopyMode.parse(c.copyMode()),
                c.kernelMaxCtas(),
                c.kernelMaxLaunchBytes().toBytes(),
                c.kernelBelow().toBytes(),
                c.serializeBelow().toBytes(),
                c.batchMaxRanges(),
                c.batchSubmitters(),
                c.splitBelow().toBytes(),
                c.splitMinRanges());
    }

    /**
     * The pinned pool, a bean of its own so that what registers its regions before the engine starts (the transfer
     * engine, {@code pega.rdma.*}) can be built from it. Its shards come from a {@link ShardMemory} bean when there is
     * one (the transfer engine's UCX context, {@code pega.rdma.shm-pool}). The engine owns and closes it; the destroy
     * method only matters when startup fails before the engine took it over (closing is idempotent).
     */
    // The preflight refuses what cannot work (memory, ports, paths) before the pool is mapped and pre-touched, and so
    // does a registration journal of a newer format: it is opened first, so such a start costs no pinning.
    @Bean(destroyMethod = "close")
    @DependsOn({"startupPreflight", "shutdownLog"})
    PinnedMemoryPool pegaPool(
            EngineConfig config, ObjectProvider<RegistrationJournal> journal, ObjectProvider<ShardMemory> memory) {
        journal.getIfAvailable();
        return PinnedMemoryPool.create(config.pool(), memory.getIfAvailable());
    }

    /**
     * The engine. Tiers, spills, index listeners and customizers are whatever beans of those types exist, in
     * {@code @Order} (SSD contributes a tier and its store as a spill; the metaserver client is a listener; the remote
     * tier comes after SSD). With {@code pega.state.dir} the registration journal records what the engine accepts;
     * the restore of what it held runs later, just before the gRPC port opens ({@code JournalRestore}).
     */
    // The shutdown log is destroyed after the engine, so its line says the pool is unmapped.
    @Bean(destroyMethod = "close")
    @DependsOn({"startupPreflight", "shutdownLog"})
    PegaEngine pegaEngine(
            EngineConfig config,
            PinnedMemoryPool pool,
            PegaProperties p,
            LimitsProperties limits,
            StateProperties state,
            ObjectProvider<RegistrationJournal> journal,
            AgentGroup agents,
            ObjectProvider<AdmissionPolicy> admission,
            ObjectProvider<BackingTier> tiers,
            ObjectProvider<SealedBlockSpill> spills,
            ObjectProvider<BlockIndexListener> indexListeners,
            ObjectProvider<EngineCustomizer> customizers) {
        RegistrationJournal log = journal.getIfAvailable();
        DeviceBackend backend;
        try {
            int[] devices =
                    p.device().devices().stream().mapToInt(Integer::intValue).toArray();
            backend = DeviceBackends.select(p.device().backend(), devices, pool.regions(), copyConfig(p.cuda()));
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
        LOG.info(
                "pool ready: {} MiB in {} ms, backend {}",
                pool.capacityBytes() >> 20,
                pool.readyNanos() / 1_000_000,
                backend.name());
        EngineContext context = new EngineContext()
                .config(config)
                .pool(pool)
                .backend(backend)
                .clock(NanoClock.SYSTEM)
                .limits(limits.toEngineLimits())
                .detachedIdleTimeout(state.detachedIdleTimeout())
                .agents(agents);
        admission.ifAvailable(context::admission);
        if (log != null) {
            context.registrationLog(log);
        }
        try {
            customizers.orderedStream().forEach(c -> c.customize(context));
            tiers.orderedStream().forEach(context::tier);
            spills.orderedStream().forEach(context::spill);
            indexListeners.orderedStream().forEach(context::indexListener);
        } catch (RuntimeException e) {
            pool.close();
            backend.close();
            throw e;
        }
        return PegaEngine.launch(context); // closes pool, backend and tiers itself if it fails
    }
}
