package io.pegaflow.core.engine;

import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.DeviceContext;
import io.pegaflow.core.instance.DeviceLane;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.instance.LayerRegistration;
import io.pegaflow.core.lease.LeaseId;
import io.pegaflow.core.lease.LeaseTable;
import io.pegaflow.core.load.LoadStateSignal;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.core.metrics.EngineMetrics;
import io.pegaflow.core.metrics.LoadPhase;
import io.pegaflow.core.metrics.PhaseRecorders;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.plan.RangePlan;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Load: consume lease shares, then copy pool to device on the device's load lane and signal through the worker's
 * load-state object. The request thread plans the copy and queues it in chunks (the first layers' chunk before the rest
 * is planned); the RPC answers as soon as the last chunk is queued.
 *
 * <p>Error contract: request-shape errors answer before the load-state object is touched; once it is attached, every
 * failure first writes -1 to it, so the worker never waits for a load that will not happen.
 */
final class LoadPath {
    private static final Logger LOG = LoggerFactory.getLogger(LoadPath.class);

    private final InstanceRegistry instances;
    private final LeaseTable leases;
    private final EngineMetrics metrics;
    private final NanoClock clock;

    LoadPath(InstanceRegistry instances, LeaseTable leases, EngineMetrics metrics, NanoClock clock) {
        this.instances = instances;
        this.leases = leases;
        this.metrics = metrics;
        this.clock = clock;
    }

    void load(
            String instanceId,
            long tpRank,
            int deviceId,
            String loadStateShm,
            List<String> layerNames,
            List<LeaseLoad> loads) {
        long started = clock.nanoTime();
        DataRequest.checkDeviceId(deviceId);
        List<LeaseId> ids = new ArrayList<>(loads.size());
        for (LeaseLoad l : loads) {
            ids.add(LeaseId.parse(l.lease()));
        }
        LoadStateSignal signal = LoadStateSignal.attach(loadStateShm);
        List<SealedBlock> held = new ArrayList<>();
        try {
            Instance instance = instances.require(instanceId);
            instance.requireSealed();
            DeviceContext device = DataRequest.device(instance, deviceId);
            long leasing = clock.nanoTime();
            int[] targets = consume(instanceId, ids, loads, held);
            long leased = clock.nanoTime();
            DataRequest request = DataRequest.resolve(DataRequest.Op.LOAD, instance, device, tpRank, layerNames);
            int[][] targetsByLayer = new int[request.layers().size()][];
            Arrays.fill(targetsByLayer, targets);
            long resolved = clock.nanoTime();
            PhaseRecorders<LoadPhase> phases = metrics.loadPhases();
            phases.of(LoadPhase.VALIDATE).recordNanos((leasing - started) + (resolved - leased));
            phases.of(LoadPhase.LEASE).recordNanos(leased - leasing);
            submit(device, new LoadTask(request, targetsByLayer, held, signal), signal, held);
        } catch (RuntimeException e) {
            fail(signal, held, e);
        }
    }

    /**
     * Load in the grouped form of pegaflow-llm 0.23.7 and later, with upstream's checks and texts in upstream's order
     * ({@code pegaflow-core/src/lib.rs} {@code batch_load_kv_blocks_multi_layer_inner}, commit {@code d3ed31a}): at
     * least one group, layer names unique across groups, then per lease one target list per group, each as long as
     * the lease, and a stored block of the slot count the instance expects. An empty group keeps the group indices
     * aligned and loads nothing; an absent target loads nothing into that group's layers.
     */
    void loadGroups(
            String instanceId,
            long tpRank,
            int deviceId,
            String loadStateShm,
            List<List<String>> groups,
            List<GroupedLeaseLoad> loads) {
        long started = clock.nanoTime();
        DataRequest.checkDeviceId(deviceId);
        List<LeaseId> ids = new ArrayList<>(loads.size());
        for (GroupedLeaseLoad l : loads) {
            ids.add(LeaseId.parse(l.lease()));
        }
        LoadStateSignal signal = LoadStateSignal.attach(loadStateShm);
        List<SealedBlock> held = new ArrayList<>();
        try {
            Instance instance = instances.require(instanceId);
            instance.requireSealed();
            DeviceContext device = DataRequest.device(instance, deviceId);
            if (groups.isEmpty()) {
                throw EngineException.invalidArgument("load requires at least one layer group");
            }
            List<String> names = new ArrayList<>();
            List<Integer> groupOfLayer = new ArrayList<>();
            for (int g = 0; g < groups.size(); g++) {
                for (String name : groups.get(g)) {
                    names.add(name);
                    groupOfLayer.add(g);
                }
            }
            if (new HashSet<>(names).size() != names.size()) {
                throw EngineException.invalidArgument("load layer names must be unique across groups");
            }
            DataRequest request = DataRequest.resolve(DataRequest.Op.LOAD, instance, device, tpRank, names);
            int[] storageGroups = storageGroups(groups, request.layers());
            long leasing = clock.nanoTime();
            int[][] targetsByGroup = consumeGrouped(instance, storageGroups, ids, loads, held);
            int[][] targetsByLayer = new int[names.size()][];
            for (int k = 0; k < targetsByLayer.length; k++) {
                targetsByLayer[k] = targetsByGroup[groupOfLayer.get(k)];
            }
            long leased = clock.nanoTime();
            PhaseRecorders<LoadPhase> phases = metrics.loadPhases();
            phases.of(LoadPhase.VALIDATE).recordNanos(leasing - started);
            phases.of(LoadPhase.LEASE).recordNanos(leased - leasing);
            submit(device, new LoadTask(request, targetsByLayer, held, signal), signal, held);
        } catch (RuntimeException e) {
            fail(signal, held, e);
        }
    }

    private static void submit(DeviceContext device, LoadTask task, LoadStateSignal signal, List<SealedBlock> held) {
        if (!task.hasWork()) {
            signal.succeed();
            releaseAll(held);
            return;
        }
        task.start(device.loadLane()); // refused: the caller's catch fails the signal and releases the blocks
    }

    private void fail(LoadStateSignal signal, List<SealedBlock> held, RuntimeException e) {
        signal.fail();
        releaseAll(held);
        metrics.increment(EngineCounter.LOAD_FAILURES);
        throw e;
    }

    /**
     * The storage group each load group reads ({@code -1} for an empty one, which owns none): a load group's layers
     * must share one, since a block seals against exactly one group's slot space.
     */
    private static int[] storageGroups(List<List<String>> groups, List<LayerRegistration> layers) {
        int[] out = new int[groups.size()];
        int k = 0;
        for (int g = 0; g < out.length; g++) {
            out[g] = -1;
            for (String name : groups.get(g)) {
                int group = layers.get(k++).group();
                if (out[g] < 0) {
                    out[g] = group;
                } else if (out[g] != group) {
                    throw EngineException.invalidArgument(
                            "load group mixes storage groups " + out[g] + " and " + group + " (layer " + name + ")");
                }
            }
        }
        return out;
    }

    /**
     * Takes one share of each lease in order; returns, per group, the destination of every consumed block in
     * consumption order ({@link GroupedLeaseLoad#ABSENT} where there is none).
     */
    private int[][] consumeGrouped(
            Instance instance,
            int[] storageGroups,
            List<LeaseId> ids,
            List<GroupedLeaseLoad> loads,
            List<SealedBlock> held) {
        int groupCount = storageGroups.length;
        List<List<int[]>> perGroup = new ArrayList<>(groupCount);
        for (int g = 0; g < groupCount; g++) {
            perGroup.add(new ArrayList<>(ids.size()));
        }
        int total = 0;
        for (int i = 0; i < ids.size(); i++) {
            SealedBlock[] blocks = leases.consume(instance.id(), ids.get(i));
            held.addAll(List.of(blocks));
            int[][] byGroup = loads.get(i).targetsByGroup();
            if (byGroup.length != groupCount) {
                throw EngineException.invalidArgument(
                        "load group count " + byGroup.length + " does not match layer group count " + groupCount);
            }
            for (int g = 0; g < groupCount; g++) {
                int[] targets = byGroup[g];
                if (blocks.length != targets.length) {
                    throw EngineException.invalidArgument("query lease block count " + blocks.length
                            + " does not match destination block count " + targets.length + " for group " + g);
                }
                int storageGroup = storageGroups[g];
                int expectedSlots = storageGroup < 0 ? 0 : instance.totalSlots(storageGroup);
                for (int b = 0; b < targets.length && storageGroup >= 0; b++) {
                    if (targets[b] != GroupedLeaseLoad.ABSENT && blocks[b].slotCount() != expectedSlots) {
                        throw EngineException.invalidArgument("stored block has " + blocks[b].slotCount()
                                + " slots but storage group " + storageGroup + " of instance " + instance.id()
                                + " expects " + expectedSlots + ": namespace is shared by incompatible KV layouts");
                    }
                }
                perGroup.get(g).add(targets);
            }
            total += blocks.length;
        }
        int[][] out = new int[groupCount][total];
        for (int g = 0; g < groupCount; g++) {
            int at = 0;
            for (int[] targets : perGroup.get(g)) {
                System.arraycopy(targets, 0, out[g], at, targets.length);
                at += targets.length;
            }
        }
        return out;
    }

    /** Takes one share of each lease in order; returns the destination block id of every consumed block. */
    private int[] consume(String instanceId, List<LeaseId> ids, List<LeaseLoad> loads, List<SealedBlock> held) {
        List<int[]> perLease = new ArrayList<>(ids.size());
        int total = 0;
        for (int i = 0; i < ids.size(); i++) {
            SealedBlock[] blocks = leases.consume(instanceId, ids.get(i));
            held.addAll(List.of(blocks));
            int[] targets = loads.get(i).blockIds();
            if (blocks.length != targets.length) {
                throw EngineException.invalidArgument("query lease block count " + blocks.length
                        + " does not match destination block count " + targets.length);
            }
            perLease.add(targets);
            total += targets.length;
        }
        int[] out = new int[total];
        int at = 0;
        for (int[] targets : perLease) {
            System.arraycopy(targets, 0, out, at, targets.length);
            at += targets.length;
        }
        return out;
    }

    private static void releaseAll(List<SealedBlock> blocks) {
        for (SealedBlock block : blocks) {
            block.release();
        }
        blocks.clear();
    }

    /**
     * One Load's copy: owns the consumed block references until it finishes. {@link #start} plans on the request
     * thread and queues the plan on the load lane in chunks ({@link PlanChunks}): the first layers' chunk goes first,
     * and the rest is planned while the lane copies it. The lane runs its jobs in order; the Load is finished (load
     * state written, blocks released, exactly once) when the submitter and every queued chunk are done with it.
     */
    private final class LoadTask {
        private final DataRequest request;
        private final DeviceContext device;
        private final List<LayerRegistration> layers;
        private final int[][] targetsByLayer; // per layer of the request, the destination of each block (< 0: none)
        private final List<SealedBlock> blocks;
        private final LoadStateSignal signal;
        /** The submitter's hold plus one per queued chunk; whoever takes it to zero finishes the Load. */
        private final AtomicInteger holds = new AtomicInteger(1);
        /** The first failure; later chunks skip their copy once one is set. */
        private final AtomicReference<@Nullable RuntimeException> failure = new AtomicReference<>();

        private long startedNanos; // when planning began (the request thread; read after the holds)
        private long copyStartedNanos; // when the lane began the first chunk (its thread; read after the holds)
        private long bytes; // the plans' bytes, summed by the submitter before it drops its hold

        LoadTask(DataRequest request, int[][] targetsByLayer, List<SealedBlock> blocks, LoadStateSignal signal) {
            this.request = request;
            this.device = request.device();
            this.layers = request.layers();
            this.targetsByLayer = targetsByLayer;
            this.blocks = new ArrayList<>(blocks);
            this.signal = signal;
        }

        /** Whether any (layer, block) pair would copy bytes; skips negative ids and blocks lacking the slot. */
        boolean hasWork() {
            for (int k = 0; k < layers.size(); k++) {
                int slot = request.slotIndex(layers.get(k));
                int[] targets = targetsByLayer[k];
                for (int i = 0; i < targets.length; i++) {
                    if (targets[i] >= 0 && blocks.get(i).slot(slot) != null) {
                        return true;
                    }
                }
            }
            return false;
        }

        /**
         * Plans and queues the chunks. Throws only when the lane refuses the first chunk, before the task holds
         * anything (the caller still owns the blocks); every later failure, a plan's included, finishes the Load as
         * failed once the queued chunks are done, as a failure on the lane does.
         */
        void start(DeviceLane lane) {
            startedNanos = clock.nanoTime();
            int split = PlanChunks.firstChunkEnd(layers.size(), k -> targetsByLayer[k].length * segments(k));
            RangePlan first = null;
            try {
                first = plan(0, split);
            } catch (RuntimeException e) {
                failure.compareAndSet(null, e);
            }
            if (first != null) {
                metrics.loadPhases().of(LoadPhase.PLAN).recordNanos(clock.nanoTime() - startedNanos);
                queue(lane, first, true); // refused: nothing is queued and the caller cleans up
                bytes = first.totalBytes();
                try {
                    if (split < layers.size()) {
                        RangePlan rest = plan(split, layers.size());
                        queue(lane, rest, false);
                        bytes += rest.totalBytes();
                    }
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                }
            }
            release();
        }

        /** Queues one chunk, holding the Load for it first (the lane may run it before submit returns). */
        private void queue(DeviceLane lane, RangePlan plan, boolean first) {
            holds.incrementAndGet();
            try {
                lane.submit(new Chunk(plan, first, clock.nanoTime()));
            } catch (RuntimeException e) {
                holds.decrementAndGet(); // never queued; the submitter's own hold keeps the count above zero
                throw e;
            }
        }

        private int segments(int k) {
            return layers.get(k).isSplit() ? 2 : 1;
        }

        /** Drops one hold; the last one finishes the Load. */
        private void release() {
            if (holds.decrementAndGet() == 0) {
                finish();
            }
        }

        private void finish() {
            try {
                RuntimeException failed = failure.get();
                if (failed != null) {
                    metrics.increment(EngineCounter.LOAD_FAILURES);
                    LOG.warn("load on device {} failed: {}", device.deviceId(), failed.getMessage());
                    signal.fail();
                    return;
                }
                long copied = clock.nanoTime();
                PhaseRecorders<LoadPhase> phases = metrics.loadPhases();
                phases.of(LoadPhase.COPY).recordNanos(copied - copyStartedNanos);
                metrics.add(EngineCounter.LOAD_BYTES, bytes);
                metrics.loadDuration().recordNanos(copied - startedNanos);
                if (!signal.succeed()) {
                    LOG.debug("load state {} vanished before completion was signalled", signal.name());
                }
                phases.of(LoadPhase.SIGNAL).recordNanos(clock.nanoTime() - copied);
            } finally {
                for (SealedBlock block : blocks) {
                    block.release();
                }
            }
        }

        /** One chunk of the plan on the lane; the first one also times the wait for the lane. */
        private final class Chunk implements DeviceLane.Job {
            private final RangePlan plan;
            private final boolean first;
            private final long queuedNanos;

            Chunk(RangePlan plan, boolean first, long queuedNanos) {
                this.plan = plan;
                this.first = first;
                this.queuedNanos = queuedNanos;
            }

            @Override
            public void run(DeviceCopier copier) {
                try {
                    if (first) {
                        copyStartedNanos = clock.nanoTime();
                        metrics.loadPhases().of(LoadPhase.QUEUE).recordNanos(copyStartedNanos - queuedNanos);
                    }
                    if (failure.get() == null) {
                        copier.copyToDevice(plan);
                    }
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                } finally {
                    release();
                }
            }

            /** The lane stopped before this chunk ran: the Load fails once its other holds are dropped. */
            @Override
            public void abandon() {
                failure.compareAndSet(
                        null, EngineException.unavailable(device.deviceId() + " load lane stopped before the copy"));
                release();
            }
        }

        /** The pool-to-device ranges of the request's layers {@code [from, to)}. */
        private RangePlan plan(int from, int to) {
            RangePlan plan = new RangePlan(blocks.size() * (to - from)); // pool -> device
            for (int k = from; k < to; k++) {
                LayerRegistration layer = layers.get(k);
                int[] targets = targetsByLayer[k];
                int slotIndex = request.slotIndex(layer);
                long copy = layer.copySegmentBytes();
                int segments = layer.isSplit() ? 2 : 1;
                // Segment-major order keeps each plane's consecutive blocks adjacent, so they coalesce.
                for (int s = 0; s < segments; s++) {
                    plan.fence(); // another layer's tensor is another allocation, even where the addresses meet
                    for (int i = 0; i < targets.length; i++) {
                        int blockId = targets[i];
                        SlotData slot = blocks.get(i).slot(slotIndex);
                        if (blockId < 0 || slot == null) {
                            continue;
                        }
                        if (!layer.containsBlock(blockId)) {
                            throw EngineException.storage("Block " + blockId + " segment " + s
                                    + " exceeds registered memory of layer " + layer.name());
                        }
                        if (slot.segments() != segments || slot.length(s) < copy) {
                            throw EngineException.storage("stored block does not match the layout of layer "
                                    + layer.name() + " (segments " + slot.segments() + ", " + slot.length(s)
                                    + " bytes; need " + segments + " of " + copy + ")");
                        }
                        plan.add(slot.address(s), layer.deviceRange(blockId, s), copy);
                    }
                }
            }
            return plan;
        }
    }
}
