package io.pegaflow.core.engine;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.BlockKeyTable;
import io.pegaflow.core.block.GroupHash;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.DeviceContext;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.instance.LayerRegistration;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.core.metrics.EngineMetrics;
import io.pegaflow.core.metrics.PhaseRecorders;
import io.pegaflow.core.metrics.SavePhase;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.plan.RangePlan;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * Save: validate, drop blocks already resident, allocate pool memory per layer, copy device to pool on the device's
 * save lane and wait for it, then hand the slots to the sealing worker.
 *
 * <p>A large plan goes to the lane in two chunks ({@link PlanChunks}): the first layers' ranges, then, built while
 * the lane copies those, the rest; the request waits for both under one deadline, and the allocations go back only
 * once every queued chunk has finished.
 *
 * <p>The reply must not leave before the copy finished: the connector frees the vLLM blocks as soon as Save returns.
 * Sealing is asynchronous, so a query right after Save may still miss.
 */
final class SavePath {
    private final InstanceRegistry instances;
    private final BlockCache cache;
    private final PoolReclaimer reclaimer;
    private final SealAgent sealer;
    private final EngineMetrics metrics;
    private final NanoClock clock;
    private final boolean blockwise;
    private final long deadlineNanos;
    private final RequestShare share;

    SavePath(
            InstanceRegistry instances,
            BlockCache cache,
            PoolReclaimer reclaimer,
            SealAgent sealer,
            EngineMetrics metrics,
            NanoClock clock,
            boolean blockwise,
            Duration deadline,
            RequestShare share) {
        this.share = share;
        this.instances = instances;
        this.cache = cache;
        this.reclaimer = reclaimer;
        this.sealer = sealer;
        this.metrics = metrics;
        this.clock = clock;
        this.blockwise = blockwise;
        this.deadlineNanos = deadline.toNanos();
    }

    /**
     * The surviving pairs of one layer: which keys (by index into the batch's key array) and which block ids. Layers
     * of a shared-order request share one selection (the arrays are read-only once built).
     */
    private static final PinnedAllocation[] NO_ALLOCATIONS = new PinnedAllocation[0];

    private static final class LayerWork {
        final LayerRegistration layer;
        final int slot;
        final int[] keyIndex;
        final int[] blockIds;
        final int count;
        // filled by the allocation step; vAllocs stays empty for a layer that is not split into K and V
        PinnedAllocation[] kAllocs = NO_ALLOCATIONS;
        PinnedAllocation[] vAllocs = NO_ALLOCATIONS;

        LayerWork(LayerRegistration layer, int slot, int[] keyIndex, int[] blockIds, int count) {
            this.layer = layer;
            this.slot = slot;
            this.keyIndex = keyIndex;
            this.blockIds = blockIds;
            this.count = count;
        }

        void releaseAllocations() {
            releaseAll(kAllocs);
            releaseAll(vAllocs);
        }

        private static void releaseAll(PinnedAllocation[] allocs) {
            if (allocs != null) {
                for (PinnedAllocation a : allocs) {
                    if (a != null) {
                        a.release();
                    }
                }
            }
        }
    }

    void save(String instanceId, long tpRank, long ppRank, int deviceId, List<LayerSave> saves) {
        long started = clock.nanoTime();
        DataRequest.checkDeviceId(deviceId);
        for (LayerSave s : saves) {
            if (s.blockIds().length != s.blockHashes().size()) {
                throw EngineException.badRequest("block_ids length " + s.blockIds().length
                        + " does not match block_hashes " + s.blockHashes().size() + " for layer " + s.layerName());
            }
        }
        Instance instance = instances.require(instanceId);
        instance.requireSealed();
        DeviceContext device = DataRequest.device(instance, deviceId);
        if (device.tpRank() != tpRank || device.ppRank() != ppRank) {
            throw EngineException.invalidArgument("device_id " + deviceId + " is registered for tp_rank "
                    + device.tpRank() + ", pp_rank " + device.ppRank() + ", but save requested tp_rank " + tpRank
                    + ", pp_rank " + ppRank);
        }
        // Resolve the rank and layers first so that a bad name fails before any work.
        List<String> names = new ArrayList<>(saves.size());
        for (LayerSave s : saves) {
            names.add(s.layerName());
        }
        DataRequest request = DataRequest.resolve(DataRequest.Op.SAVE, instance, device, tpRank, names);
        PhaseRecorders<SavePhase> phases = metrics.savePhases();
        long validated = clock.nanoTime();
        phases.of(SavePhase.VALIDATE).recordNanos(validated - started);
        String namespace = instance.namespace();
        List<LayerWork> work = new ArrayList<>(saves.size());
        List<GroupSave> groups = selectMissingByGroup(instance, namespace, saves, request, work);
        long indexed = clock.nanoTime();
        phases.of(SavePhase.INDEX).recordNanos(indexed - validated);
        if (work.isEmpty()) {
            return;
        }
        requireShare(instanceId, work);
        boolean copyOwnsAllocations = false;
        try {
            allocate(work);
            long allocated = clock.nanoTime();
            phases.of(SavePhase.ALLOCATE).recordNanos(allocated - indexed);
            // The first layers' plan goes to the lane before the rest is built: their copy hides the rest's planning.
            int split = PlanChunks.firstChunkEnd(work.size(), l -> ranges(work.get(l)));
            CompletableFuture<Void> first = device.saveLane().copy(plan(work, 0, split));
            long planned = clock.nanoTime();
            phases.of(SavePhase.PLAN).recordNanos(planned - allocated);
            CompletableFuture<Void> copied = first;
            if (split < work.size()) {
                try {
                    copied = CompletableFuture.allOf(first, device.saveLane().copy(plan(work, split, work.size())));
                } catch (RuntimeException e) { // the first chunk may still write into the allocations
                    copyOwnsAllocations = true;
                    releaseWhenCopied(first, work);
                    throw e;
                }
            }
            // The rest of the plan was built while the first chunk copied: it is part of `copy`, not of `seal`.
            long queued = clock.nanoTime();
            // The slots' bookkeeping does not depend on the bytes: it is built while the lane copies, and handed to
            // the sealer only once the copy completed.
            List<SealBatch> batches;
            try {
                batches = sealBatches(namespace, groups);
            } catch (RuntimeException e) {
                copyOwnsAllocations = true;
                releaseWhenCopied(copied, work);
                throw e;
            }
            long built = clock.nanoTime();
            try {
                awaitCopy(device, copied);
            } catch (EngineException e) {
                releaseSlots(batches); // the save's own references keep the memory until the finally below
                if (e.kind() == EngineException.Kind.DEADLINE_EXCEEDED) {
                    // The lane may still write into these allocations: they go back only once the copy is done.
                    copyOwnsAllocations = true;
                    releaseWhenCopied(copied, work);
                }
                throw e;
            }
            long copiedAt = clock.nanoTime();
            phases.of(SavePhase.COPY).recordNanos(copiedAt - planned);
            long bytes = 0;
            for (LayerWork w : work) {
                bytes += w.layer.hostSegmentBytes() * (w.layer.isSplit() ? 2L : 1L) * w.count;
            }
            for (int b = 0; b < batches.size(); b++) {
                try {
                    sealer.submit(batches.get(b)); // a refused batch's slots go back inside submit
                } catch (RuntimeException e) {
                    releaseSlots(batches.subList(b + 1, batches.size()));
                    throw e;
                }
            }
            metrics.add(EngineCounter.SAVE_BYTES, bytes);
            long sealed = clock.nanoTime();
            phases.of(SavePhase.SEAL).recordNanos((built - queued) + (sealed - copiedAt));
            metrics.saveDuration().recordNanos(sealed - started);
        } finally {
            // Slots hold their own references now; the save's initial ones go.
            if (!copyOwnsAllocations) {
                for (LayerWork w : work) {
                    w.releaseAllocations();
                }
            }
        }
    }

    /** One {@link SealBatch} per storage group: the slots of every stored pair, each holding its own references. */
    private List<SealBatch> sealBatches(String namespace, List<GroupSave> groups) {
        List<SealBatch> out = new ArrayList<>(groups.size());
        for (GroupSave g : groups) {
            SlotData[][] data = new SlotData[g.work().size()][];
            int[] layerSlots = new int[g.work().size()];
            for (int l = 0; l < layerSlots.length; l++) {
                LayerWork w = g.work().get(l);
                layerSlots[l] = w.slot;
                data[l] = slotsOf(w, g.keys().length);
            }
            out.add(new SealBatch(namespace, g.totalSlots(), g.keys(), layerSlots, data));
        }
        return out;
    }

    /** Gives back the references of slots that will never be sealed (their copy failed). */
    private static void releaseSlots(List<SealBatch> batches) {
        for (SealBatch batch : batches) {
            for (SlotData[] layer : batch.data()) {
                for (SlotData slot : layer) {
                    if (slot != null) {
                        slot.release();
                    }
                }
            }
        }
    }

    /**
     * The keys and layer work of one storage group of a Save: a group's blocks seal against the group's own slot
     * space, so each group is its own {@link SealBatch}.
     */
    private record GroupSave(int totalSlots, BlockKey[] keys, List<LayerWork> work) {}

    /**
     * Splits the request by its layers' storage groups (a hybrid connector saves attention layers and, at checkpoints
     * only, state layers in one request) and selects each group's missing keys; {@code work} receives every group's
     * layer work, in group order.
     */
    private List<GroupSave> selectMissingByGroup(
            Instance instance, String namespace, List<LayerSave> saves, DataRequest request, List<LayerWork> work) {
        List<LayerRegistration> layers = request.layers();
        TreeMap<Integer, List<Integer>> byGroup = new TreeMap<>();
        for (int l = 0; l < layers.size(); l++) {
            byGroup.computeIfAbsent(layers.get(l).group(), g -> new ArrayList<>())
                    .add(l);
        }
        if (byGroup.size() == 1) { // every layer in one group: the request is the group's, no copies
            int group = byGroup.firstKey();
            BlockKey[] keys = selectMissing(namespace, group, saves, layers, request, work);
            return keys == null || work.isEmpty()
                    ? List.of()
                    : List.of(new GroupSave(instance.totalSlots(group), keys, work));
        }
        List<GroupSave> out = new ArrayList<>(byGroup.size());
        for (Map.Entry<Integer, List<Integer>> entry : byGroup.entrySet()) {
            int group = entry.getKey();
            List<LayerSave> groupSaves = new ArrayList<>(entry.getValue().size());
            List<LayerRegistration> groupLayers =
                    new ArrayList<>(entry.getValue().size());
            for (int l : entry.getValue()) {
                groupSaves.add(saves.get(l));
                groupLayers.add(layers.get(l));
            }
            List<LayerWork> groupWork = new ArrayList<>(groupSaves.size());
            BlockKey[] keys = selectMissing(namespace, group, groupSaves, groupLayers, request, groupWork);
            if (keys != null && !groupWork.isEmpty()) {
                out.add(new GroupSave(instance.totalSlots(group), keys, groupWork));
                work.addAll(groupWork);
            }
        }
        return out;
    }

    /**
     * Dedup and filter: the union of the request's keys in first-seen order, without the ones already sealed and
     * resident, and for each layer the pairs that store one of them (the first pair per key in that layer; out-of-range
     * block ids dropped silently, as the reference does).
     *
     * <p>One {@link BlockKey} is built per unique hash, and each key is hashed once: a primitive open-addressing table
     * maps keys to their index, so there are no map entries or boxed indices per block. When every layer carries the
     * same pairs (the connector's normal request), only the first layer is scanned and all layers share its selection.
     *
     * @param work receives one {@link LayerWork} per layer that has something to store
     * @param group the storage group: the keys are the group's ({@link GroupHash})
     * @return the missing keys, indexed by {@link LayerWork#keyIndex}; null when nothing is missing
     */
    private BlockKey @Nullable [] selectMissing(
            String namespace,
            int group,
            List<LayerSave> saves,
            List<LayerRegistration> layers,
            DataRequest request,
            List<LayerWork> work) {
        boolean sharedOrder = sameHashOrder(saves) && sameBlockCount(layers);
        int scanned = sharedOrder ? Math.min(1, saves.size()) : saves.size();
        BlockKeyTable union = new BlockKeyTable(scanned == 0 ? 0 : saves.get(0).blockIds().length);
        int[][] pairKeys = new int[scanned][];
        for (int l = 0; l < scanned; l++) {
            LayerSave s = saves.get(l);
            LayerRegistration layer = layers.get(l);
            int[] ids = s.blockIds();
            List<byte[]> hashes = s.blockHashes();
            int[] pk = new int[ids.length];
            for (int i = 0; i < ids.length; i++) {
                pk[i] = layer.containsBlock(ids[i]) ? union.intern(namespace, GroupHash.of(hashes.get(i), group)) : -1;
            }
            pairKeys[l] = pk;
        }
        int unique = union.size();
        if (unique == 0) {
            return null;
        }
        boolean[] resident = new boolean[unique];
        cache.markResident(union.keyList(), resident);
        int[] remap = new int[unique];
        int missing = 0;
        for (int u = 0; u < unique; u++) {
            remap[u] = resident[u] ? -1 : missing++;
        }
        if (missing == 0) {
            return null;
        }
        BlockKey[] keys = new BlockKey[missing];
        for (int u = 0; u < unique; u++) {
            if (remap[u] >= 0) {
                keys[remap[u]] = union.key(u);
            }
        }
        boolean[] taken = new boolean[missing];
        int[] sharedKeys = null;
        int[] sharedIds = null;
        int sharedCount = 0;
        for (int l = 0; l < saves.size(); l++) {
            LayerRegistration layer = layers.get(l);
            int slot = request.slotIndex(layer);
            if (sharedOrder && l > 0) {
                if (sharedCount > 0 && sharedKeys != null && sharedIds != null) { // set together with the count
                    work.add(new LayerWork(layer, slot, sharedKeys, sharedIds, sharedCount));
                }
                continue;
            }
            int[] ids = saves.get(l).blockIds();
            int[] pk = pairKeys[l];
            int[] keyIndex = new int[ids.length];
            int[] blockIds = new int[ids.length];
            int count = 0;
            if (l > 0) {
                Arrays.fill(taken, false);
            }
            for (int i = 0; i < ids.length; i++) {
                int k = pk[i] < 0 ? -1 : remap[pk[i]];
                if (k < 0 || taken[k]) {
                    continue;
                }
                taken[k] = true;
                keyIndex[count] = k;
                blockIds[count] = ids[i];
                count++;
            }
            inBlockIdOrder(keyIndex, blockIds, count);
            if (count > 0) {
                work.add(new LayerWork(layer, slot, keyIndex, blockIds, count));
            }
            sharedKeys = keyIndex;
            sharedIds = blockIds;
            sharedCount = count;
        }
        return keys;
    }

    /**
     * Orders a layer's pairs by block id, so that the pool memory of blocks with adjacent ids is adjacent too whatever
     * the request's order: a run of adjacent blocks is then one range on both sides of the copy (one DMA call, one
     * memcpy). Stable for equal ids (which a selection never holds); no work when the ids already ascend.
     */
    static void inBlockIdOrder(int[] keyIndex, int[] blockIds, int count) {
        boolean ascending = true;
        for (int i = 1; i < count && ascending; i++) {
            ascending = blockIds[i - 1] <= blockIds[i];
        }
        if (ascending) {
            return;
        }
        long[] packed = new long[count];
        for (int i = 0; i < count; i++) {
            packed[i] = ((long) blockIds[i] << 32) | (keyIndex[i] & 0xffff_ffffL);
        }
        Arrays.sort(packed);
        for (int i = 0; i < count; i++) {
            blockIds[i] = (int) (packed[i] >>> 32);
            keyIndex[i] = (int) packed[i];
        }
    }

    private static boolean sameBlockCount(List<LayerRegistration> layers) {
        for (LayerRegistration layer : layers) {
            if (layer.numBlocks() != layers.get(0).numBlocks()) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameHashOrder(List<LayerSave> saves) {
        if (saves.size() < 2) {
            return true;
        }
        LayerSave first = saves.get(0);
        for (int l = 1; l < saves.size(); l++) {
            LayerSave s = saves.get(l);
            if (s.blockIds() == first.blockIds() && s.blockHashes() == first.blockHashes()) {
                continue; // the decoder shares one layer's arrays with the layers that repeat its pairs
            }
            if (!Arrays.equals(first.blockIds(), s.blockIds())
                    || first.blockHashes().size() != s.blockHashes().size()) {
                return false;
            }
            for (int i = 0; i < s.blockHashes().size(); i++) {
                if (!Arrays.equals(first.blockHashes().get(i), s.blockHashes().get(i))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Takes each layer's pool memory: per block with {@code pega.blockwise-alloc}, else one run per plane. */
    private void allocate(List<LayerWork> work) {
        for (LayerWork w : work) {
            LayerRegistration layer = w.layer;
            long seg = layer.hostSegmentBytes();
            int allocations = blockwise ? w.count : 1;
            long perAllocation = blockwise ? seg : seg * w.count;
            w.kAllocs = new PinnedAllocation[allocations];
            w.vAllocs = layer.isSplit() ? new PinnedAllocation[allocations] : NO_ALLOCATIONS;
            for (int a = 0; a < allocations; a++) {
                w.kAllocs[a] = allocateOrFail(perAllocation, layer.isSplit() ? "K segment" : "contiguous block");
                if (layer.isSplit()) {
                    w.vAllocs[a] = allocateOrFail(perAllocation, "V segment");
                }
            }
        }
    }

    private static int ranges(LayerWork w) {
        return w.count * (w.layer.isSplit() ? 2 : 1);
    }

    /** The device-to-pool ranges of layers {@code [from, to)}'s pairs, into the memory {@link #allocate} took. */
    private RangePlan plan(List<LayerWork> work, int from, int to) {
        long ranges = 0;
        int[] runsOf = null; // the last layer's selection and its runs: layers of a shared order share both
        int runs = 0;
        for (int l = from; l < to; l++) {
            LayerWork w = work.get(l);
            if (!mergesRuns(w.layer)) {
                ranges += ranges(w);
                continue;
            }
            if (w.blockIds != runsOf) {
                runsOf = w.blockIds;
                runs = idRuns(w.blockIds, w.count);
            }
            ranges += (long) runs * (w.layer.isSplit() ? 2 : 1);
        }
        RangePlan plan = new RangePlan((int) Math.min(ranges, 1 << 16)); // device -> pool
        for (LayerWork w : work.subList(from, to)) {
            LayerRegistration layer = w.layer;
            long seg = layer.hostSegmentBytes();
            long copy = layer.copySegmentBytes();
            plan.fence(); // another layer's tensor is another allocation, even where the addresses meet
            for (int i = 0; i < w.count; i++) {
                plan.add(layer.deviceRange(w.blockIds[i], 0), hostAddress(w.kAllocs, i, seg), copy);
            }
            if (layer.isSplit()) {
                plan.fence(); // the V plane's pool memory is another allocation
                for (int i = 0; i < w.count; i++) {
                    plan.add(layer.deviceRange(w.blockIds[i], 1), hostAddress(w.vAllocs, i, seg), copy);
                }
            }
        }
        return plan;
    }

    /**
     * Whether a run of consecutive block ids of this layer merges into one range: the blocks' device memory and
     * their pool memory both continue from one block to the next (whole runs per plane, not per block).
     */
    private boolean mergesRuns(LayerRegistration layer) {
        long copy = layer.copySegmentBytes();
        return !blockwise && layer.bytesPerBlock() == copy && layer.hostSegmentBytes() == copy;
    }

    /** Runs of consecutive ids among the first {@code count} (ascending) ids: the ranges such a layer's plane takes. */
    private static int idRuns(int[] ids, int count) {
        int runs = count == 0 ? 0 : 1;
        for (int i = 1; i < count; i++) {
            if (ids[i] != ids[i - 1] + 1) {
                runs++;
            }
        }
        return runs;
    }

    /** The request's real pool footprint against its share, before a single allocation (so before any eviction). */
    private void requireShare(String instanceId, List<LayerWork> work) {
        long needed = 0;
        long largest = 0;
        for (LayerWork w : work) {
            long seg = w.layer.hostSegmentBytes();
            long perPlane = RequestShare.saturatingProduct(seg, w.count);
            needed = RequestShare.saturatingSum(
                    needed, w.layer.isSplit() ? RequestShare.saturatingSum(perPlane, perPlane) : perPlane);
            largest = Math.max(largest, blockwise ? seg : perPlane);
        }
        share.check(
                "save of instance " + instanceId, needed, largest, "; pega.blockwise-alloc=true allocates per block");
    }

    private long hostAddress(PinnedAllocation[] allocs, int i, long seg) {
        return blockwise ? allocs[i].address() : allocs[0].address() + i * seg;
    }

    private PinnedAllocation allocateOrFail(long bytes, String what) {
        PinnedAllocation a = reclaimer.allocate(bytes);
        if (a == null) {
            throw EngineException.storage("pinned pool exhausted while allocating " + what + " buffer");
        }
        return a;
    }

    /**
     * Hands the allocations to a copy that outlived its deadline: the lane may still write into them, so they go
     * back to the pool only once it finished.
     */
    @SuppressWarnings("FutureReturnValueIgnored") // the release stage cannot fail and nobody waits for it
    private static void releaseWhenCopied(CompletableFuture<Void> copied, List<LayerWork> work) {
        copied.whenComplete((ok, failure) -> work.forEach(LayerWork::releaseAllocations));
    }

    /** Waits for the save lane's copy, at most {@code pega.save-deadline}. */
    private void awaitCopy(DeviceContext device, CompletableFuture<Void> copied) {
        try {
            copied.get(deadlineNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw EngineException.deadlineExceeded("save copy on device " + device.deviceId()
                    + " did not finish within "
                    + TimeUnit.NANOSECONDS.toMillis(deadlineNanos) + " ms (pega.save-deadline); the save was not"
                    + " stored");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof EngineException ee) {
                throw ee;
            }
            throw EngineException.storage("batch copy failed: " + cause, cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw EngineException.storage("batch copy interrupted");
        }
    }

    private SlotData[] slotsOf(LayerWork w, int keys) {
        SlotData[] out = new SlotData[keys];
        long seg = w.layer.hostSegmentBytes();
        for (int i = 0; i < w.count; i++) {
            long k = hostAddress(w.kAllocs, i, seg);
            PinnedAllocation ka = blockwise ? w.kAllocs[i] : w.kAllocs[0];
            out[w.keyIndex[i]] = w.layer.isSplit()
                    ? SlotData.split(
                            ka, k, blockwise ? w.vAllocs[i] : w.vAllocs[0], hostAddress(w.vAllocs, i, seg), seg)
                    : SlotData.contiguous(ka, k, seg);
        }
        return out;
    }
}
