package io.pegaflow.core.engine;

import io.pegaflow.core.agent.NanoClock;
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
import io.pegaflow.core.plan.RangePlan;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Load (spec/engine-api.md §5.5): consume lease shares, then copy pool to device on the device's load lane and
 * signal through the worker's load-state object. The RPC answers as soon as the copy is queued.
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
            int[] targets = consume(instanceId, ids, loads, held);
            DataRequest request = DataRequest.resolve(DataRequest.Op.LOAD, instance, device, tpRank, layerNames);
            LoadTask task = new LoadTask(request, targets, held, signal);
            if (!task.hasWork()) {
                signal.succeed();
                releaseAll(held);
                return;
            }
            device.loadLane().submit(task); // refused: the catch below fails the signal and releases the blocks
        } catch (RuntimeException e) {
            signal.fail();
            releaseAll(held);
            metrics.increment(EngineCounter.LOAD_FAILURES);
            throw e;
        }
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

    /** The queued copy: owns the consumed block references until it finishes. */
    private final class LoadTask implements DeviceLane.Job {
        private final DataRequest request;
        private final DeviceContext device;
        private final List<LayerRegistration> layers;
        private final int[] targets;
        private final List<SealedBlock> blocks;
        private final LoadStateSignal signal;

        LoadTask(DataRequest request, int[] targets, List<SealedBlock> blocks, LoadStateSignal signal) {
            this.request = request;
            this.device = request.device();
            this.layers = request.layers();
            this.targets = targets;
            this.blocks = new ArrayList<>(blocks);
            this.signal = signal;
        }

        /** Whether any (layer, block) pair would copy bytes; skips negative ids and blocks lacking the slot. */
        boolean hasWork() {
            for (LayerRegistration layer : layers) {
                int slot = request.slotIndex(layer);
                for (int i = 0; i < targets.length; i++) {
                    if (targets[i] >= 0 && blocks.get(i).slot(slot) != null) {
                        return true;
                    }
                }
            }
            return false;
        }

        @Override
        public void run(DeviceCopier copier) {
            long started = clock.nanoTime();
            try {
                RangePlan plan = plan();
                copier.copyToDevice(plan);
                metrics.add(EngineCounter.LOAD_BYTES, plan.totalBytes());
                metrics.loadDuration().recordNanos(clock.nanoTime() - started);
                if (!signal.succeed()) {
                    LOG.debug("load state {} vanished before completion was signalled", signal.name());
                }
            } catch (RuntimeException e) {
                metrics.increment(EngineCounter.LOAD_FAILURES);
                LOG.warn("load on device {} failed: {}", device.deviceId(), e.getMessage());
                signal.fail();
            } finally {
                for (SealedBlock block : blocks) {
                    block.release();
                }
            }
        }

        /** The lane stopped before this load ran: the worker is told it failed, the blocks go back. */
        @Override
        public void abandon() {
            metrics.increment(EngineCounter.LOAD_FAILURES);
            signal.fail();
            for (SealedBlock block : blocks) {
                block.release();
            }
        }

        private RangePlan plan() {
            RangePlan plan = new RangePlan(targets.length * layers.size()); // pool -> device
            for (LayerRegistration layer : layers) {
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
