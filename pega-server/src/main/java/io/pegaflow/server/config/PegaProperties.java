package io.pegaflow.server.config;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * The server's configuration tree under {@code pega.*}; each key maps to a reference CLI flag where one exists
 * ({@code docs/configuration.md}). Validated at startup: an unusable value stops the server with a message naming the
 * key.
 *
 * @param pool pinned host-memory pool
 * @param device device backend selection
 * @param cuda the cuda backend's copy engine
 * @param cache RAM index policy
 * @param lease query lease lifetime
 * @param maintenanceInterval how often expired leases are swept and stale in-flight blocks collected
 * @param inflightMaxAge age after which a block still missing slots is dropped
 * @param evictionBatch blocks evicted per reclaim step under allocation pressure
 * @param blockwiseAlloc one pool allocation per block instead of one per layer per Save ({@code --blockwise-alloc})
 * @param saveDeadline the longest a Save waits for its device copy, and on a full pool for queued Saves to be sealed,
 *     before it fails with DEADLINE_EXCEEDED (ours: the reference waits forever)
 * @param admin security of mutating operations
 */
@Validated
@ConfigurationProperties("pega")
public record PegaProperties(
        @Valid @NotNull @DefaultValue Pool pool,
        @Valid @NotNull @DefaultValue Device device,
        @Valid @NotNull @DefaultValue Cuda cuda,
        @Valid @NotNull @DefaultValue Cache cache,
        @Valid @NotNull @DefaultValue Lease lease,
        @NotNull @DefaultValue("30s") Duration maintenanceInterval,
        @NotNull @DefaultValue("300s") Duration inflightMaxAge,
        @Min(1) @DefaultValue("64") int evictionBatch,
        @DefaultValue("false") boolean blockwiseAlloc,
        @NotNull @DefaultValue("30s") Duration saveDeadline,
        @Valid @NotNull @DefaultValue Admin admin) {

    /**
     * The pinned host-memory pool ({@code pega.pool.*}).
     *
     * @param size pool capacity ({@code --pool-size}); the reference defaults to 30 GB, we default to 2 GB so a fresh
     *     machine starts; size production pools in {@code config/application-production.yml}
     * @param shards independent allocator shards ({@code --pool-shards})
     * @param hugePages back the pool with huge pages ({@code --use-hugepages})
     * @param numaNode bind the pool to this NUMA node; -1 leaves placement to the kernel
     * @param hintValueSize allocator unit hint ({@code --hint-value-size}); 0 means none
     * @param pretouchThreads threads that fault the pool in at start; 0 = one per GiB up to the core count
     * @param memoryMargin memory left to the rest of the host: a pool larger than what the kernel can still hand out
     *     ({@code MemAvailable}, or the container's cgroup headroom) minus this margin minus the JVM heap's room to grow
     *     is refused before it is mapped
     * @param headroom pool bytes kept free by evicting the coldest blocks after each sealed Save, so Saves allocate
     *     without evicting on their request thread; 0 (the default) evicts only when an allocation fails, as the
     *     reference does; less than the pool
     */
    public record Pool(
            @NotNull @DefaultValue("2GB") DataSize size,
            @Min(1) @DefaultValue("1") int shards,
            @DefaultValue("false") boolean hugePages,
            @Min(-1) @DefaultValue("-1") int numaNode,
            @NotNull @DefaultValue("0B") DataSize hintValueSize,
            @Min(0) @DefaultValue("0") int pretouchThreads,
            @NotNull @DefaultValue("1GB") DataSize memoryMargin,
            @NotNull @DefaultValue("0B") DataSize headroom) {}

    /**
     * Device backend selection ({@code pega.device.*}).
     *
     * @param backend {@code auto} (cuda when a GPU is present, else host), {@code cuda} or {@code host}
     * @param devices CUDA ordinals to serve ({@code --devices}); empty means all
     */
    public record Device(
            @NotNull @Pattern(regexp = "auto|cuda|host", message = "must be auto, cuda or host") @DefaultValue("auto")
            String backend,

            @NotNull @DefaultValue List<Integer> devices) {}

    /**
     * The cuda backend's copy engine ({@code pega.cuda.*}; docs/gpu.md "Copy methods" has the measurements behind
     * the defaults).
     *
     * @param copyMode {@code auto} (per plan), {@code batch} ({@code cuMemcpyBatchAsync}), {@code kernel} (the
     *     bounded copy kernel) or {@code per-range} (one {@code cuMemcpyAsync} per range)
     * @param kernelMaxCtas CTAs per copy-kernel launch at most
     * @param kernelMaxLaunchBytes bytes per copy-kernel launch at most
     * @param kernelBelow {@code auto} takes the kernel for plans whose mean range is smaller (0: never)
     * @param serializeBelow batched plans whose mean range is smaller take turns with the device's other lane (0:
     *     never)
     * @param batchMaxRanges ranges per {@code cuMemcpyBatchAsync} call at most
     * @param batchSubmitters threads, each with its own stream, that issue one large batched plan of small ranges
     * @param splitBelow a batched plan is split over the submitters only when its mean range is smaller (0: never)
     * @param splitMinRanges and only when it has at least this many ranges
     */
    public record Cuda(
            @NotNull
            @Pattern(regexp = "auto|batch|kernel|per-range", message = "must be auto, batch, kernel or per-range")
            @DefaultValue("auto")
            String copyMode,

            @Min(1) @Max(65535) @DefaultValue("16") int kernelMaxCtas,
            @NotNull @DefaultValue("64MB") DataSize kernelMaxLaunchBytes,
            @NotNull @DefaultValue("0B") DataSize kernelBelow,
            @NotNull @DefaultValue("0B") DataSize serializeBelow,
            @Min(1) @DefaultValue("256") int batchMaxRanges,
            @Min(1) @Max(8) @DefaultValue("2") int batchSubmitters,
            @NotNull @DefaultValue("128KB") DataSize splitBelow,
            @Min(2) @DefaultValue("2048") int splitMinRanges) {}

    /**
     * RAM index policy ({@code pega.cache.*}).
     *
     * @param admission {@code lru} (reference default), {@code tinylfu} ({@code --enable-lfu-admission}: our sketch in
     *     front of LRU) or {@code caffeine} (Caffeine's W-TinyLFU as the RAM tier's policy)
     */
    public record Cache(
            @NotNull
            @Pattern(regexp = "lru|tinylfu|caffeine", message = "must be lru, tinylfu or caffeine")
            @DefaultValue("lru")
            String admission) {}

    /**
     * Query lease lifetime ({@code pega.lease.*}).
     *
     * @param ttl lifetime of a query lease from creation (reference: 600 s)
     */
    public record Lease(@NotNull @DefaultValue("600s") Duration ttl) {}

    /**
     * Security of mutating operations ({@code pega.admin.*}).
     *
     * @param token bearer token for mutating HTTP endpoints and the Shutdown RPC when called from another host;
     *     callers on loopback need none. Empty: remote mutating calls are refused.
     */
    public record Admin(@NotNull @DefaultValue("") String token) {}
}
