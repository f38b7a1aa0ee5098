package io.pegaflow.server.config;

import io.pegaflow.core.cache.AdmissionPolicy;
import io.pegaflow.core.device.cuda.CopyMode;
import io.pegaflow.core.device.cuda.CudaCopyConfig;
import io.pegaflow.core.device.cuda.CudaTopology;
import io.pegaflow.core.device.select.DeviceBackends;
import io.pegaflow.core.engine.BlockIndexListener;
import io.pegaflow.core.engine.EngineConfig;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.journal.RegistrationJournal;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.SealedBlockSpill;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.node.NodeContext;
import io.pegaflow.node.PegaNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.DependsOn;

/**
 * Assembles the node, in this one place, from {@link PegaProperties} and what other configurations contribute (tiers,
 * spills, index listeners, engine and node customizers: {@code ObjectProvider}s, in {@code @Order}). The node
 * ({@link PegaNode}, plain Java) builds the parts in order and closes them in reverse; Spring holds one bean of it and
 * exposes its parts read-only.
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
                p.saveDeadline(),
                pool.headroom().toBytes());
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
     * The node: pool, backend, engine and whatever the features' {@link NodeCustomizer}s add (P2P transfers, the
     * remote tier, the P/D push), built in order by {@link PegaNode#launch} and closed in reverse by its one close.
     * The engine's tiers, spills, index listeners and customizers are whatever beans of those types exist, in
     * {@code @Order} (SSD contributes a tier and its store as a spill; the metaserver client is a listener); the node
     * adds the remote tier after them. With {@code pega.state.dir} the registration journal records what the engine
     * accepts; the restore of what it held runs later, just before the gRPC port opens ({@code JournalRestore}).
     */
    // The preflight refuses what cannot work (memory, ports, paths) before the pool is mapped and pre-touched, and so
    // does a registration journal of a newer format: it is opened first, so such a start costs no pinning. The
    // shutdown log is destroyed after the node, so its line says the pool is unmapped.
    @Bean(destroyMethod = "close")
    @DependsOn({"startupPreflight", "shutdownLog"})
    PegaNode pegaNode(
            EngineConfig config,
            PegaProperties p,
            LimitsProperties limits,
            StateProperties state,
            ObjectProvider<RegistrationJournal> journal,
            AgentGroup agents,
            ObjectProvider<AdmissionPolicy> admission,
            ObjectProvider<BackingTier> tiers,
            ObjectProvider<SealedBlockSpill> spills,
            ObjectProvider<BlockIndexListener> indexListeners,
            ObjectProvider<EngineCustomizer> engineCustomizers,
            ObjectProvider<NodeCustomizer> nodeCustomizers) {
        RegistrationJournal log = journal.getIfAvailable();
        int[] devices =
                p.device().devices().stream().mapToInt(Integer::intValue).toArray();
        NodeContext node = new NodeContext()
                .engine(config)
                .backend(regions -> DeviceBackends.select(p.device().backend(), devices, regions, copyConfig(p.cuda())))
                .clock(NanoClock.SYSTEM)
                .agents(agents)
                .engineSetup(context -> {
                    context.limits(limits.toEngineLimits()).detachedIdleTimeout(state.detachedIdleTimeout());
                    admission.ifAvailable(context::admission);
                    if (log != null) {
                        context.registrationLog(log);
                    }
                    engineCustomizers.orderedStream().forEach(c -> c.customize(context));
                    tiers.orderedStream().forEach(context::tier);
                    spills.orderedStream().forEach(context::spill);
                    indexListeners.orderedStream().forEach(context::indexListener);
                });
        nodeCustomizers.orderedStream().forEach(c -> c.customize(node));
        return PegaNode.launch(node);
    }

    /** The node's engine; the node closes it. */
    @Bean(destroyMethod = "")
    PegaEngine pegaEngine(PegaNode node) {
        return node.engine();
    }
}
