package io.pegaflow.push.layout;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.engine.DeviceWorkers;
import io.pegaflow.core.engine.SideRegistrations;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.InstanceLimits;
import io.pegaflow.core.instance.LayerRegistration;
import io.pegaflow.core.instance.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The registered push layers of every (instance, TP rank). Thread-safe. A registration that a running push or receive
 * uses cannot be replaced (FAILED_PRECONDITION); the table owns every {@link RankLayers} it holds and closes them on
 * removal and on {@link #close()}.
 *
 * <p>Every registration is admitted by the cache engine's {@link SideRegistrations} before anything is mapped: the
 * instance id belongs to one principal across the engine and the push, the layers count against
 * {@code pega.limits.mapped-objects}, and when the engine ends the instance ({@link #instanceEnded}) its push layers
 * end too: at once when idle, else when the last push or receive using them lets go.
 */
public final class PushLayerTable implements AutoCloseable {
    /** At most this many layers per rank: more than any model's layer count, fewer than a hostile request's. */
    public static final int MAX_LAYERS = 4096;

    private final DeviceWorkers workers;
    private final SideRegistrations admission;
    private final Map<Key, RankLayers> ranks = new ConcurrentHashMap<>();

    private record Key(String instanceId, int tpRank) {}

    public PushLayerTable(DeviceWorkers workers, SideRegistrations admission) {
        this.workers = workers;
        this.admission = admission;
    }

    /**
     * Maps and validates a rank's layers, replacing an idle earlier registration.
     *
     * @throws EngineException INVALID_ARGUMENT for a bad layer (the message names it), FAILED_PRECONDITION when the
     *     earlier registration is in use, PERMISSION_DENIED when another principal holds the instance id,
     *     RESOURCE_EXHAUSTED past {@code pega.limits.mapped-objects}, or when the engine's copy lanes of the device
     *     would pass {@code pega.limits.devices} or {@code pega.limits.lane-threads}
     */
    public RankLayers register(
            Caller caller,
            Principal principal,
            String instanceId,
            int tpRank,
            int tpSize,
            int deviceId,
            List<PushLayerSpec> layers) {
        if (instanceId.isBlank()) {
            throw EngineException.invalidArgument("instance_id must not be empty");
        }
        InstanceLimits.requireName("instance_id", instanceId);
        for (PushLayerSpec l : layers) {
            InstanceLimits.requireName("layer name", l.name());
        }
        if (tpSize > InstanceLimits.MAX_TP_SIZE) {
            // RegisterContext's text for the same bound
            throw EngineException.badRequest(
                    "tp_size " + tpSize + " exceeds the supported maximum of " + InstanceLimits.MAX_TP_SIZE);
        }
        if (tpSize < 1 || tpRank < 0 || tpRank >= tpSize) {
            throw EngineException.invalidArgument("tp_rank " + tpRank + " is not below tp_size " + tpSize);
        }
        if (layers.isEmpty() || layers.size() > MAX_LAYERS) {
            throw EngineException.invalidArgument(
                    "a push registration needs 1 to " + MAX_LAYERS + " layers, got " + layers.size());
        }
        SideRegistrations.Ticket ticket = admission.admit(instanceId, principal, layers.size());
        List<LayerRegistration> opened = new ArrayList<>(layers.size());
        DeviceWorkers.Lanes lanes;
        try {
            for (int i = 0; i < layers.size(); i++) {
                PushLayerSpec l = layers.get(i);
                if (l.segments() > 2) {
                    throw EngineException.invalidArgument("layer " + l.name() + ": segments must be 1 or 2");
                }
                LayerMemory memory = workers.openLayer(caller, deviceId, l.wrapperBytes());
                try {
                    opened.add(LayerRegistration.validate(
                            l.name(), i, memory, l.numBlocks(), l.bytesPerBlock(), l.kvStrideBytes(), l.segments(), 1));
                } catch (RuntimeException e) {
                    memory.close();
                    throw e;
                }
            }
            lanes = workers.lanes(deviceId);
        } catch (RuntimeException e) {
            opened.forEach(r -> r.memory().close());
            ticket.close();
            throw e;
        }
        RankLayers fresh = new RankLayers(instanceId, tpRank, tpSize, deviceId, opened, lanes, ticket);
        Key key = new Key(instanceId, tpRank);
        RankLayers[] replaced = new RankLayers[1];
        try {
            ranks.compute(key, (k, old) -> {
                if (old != null && old.inUse()) {
                    throw EngineException.failedPrecondition("push layers of " + instanceId + " rank " + tpRank
                            + " are in use by a running push or receive; register again after it ends");
                }
                replaced[0] = old;
                return fresh;
            });
        } catch (RuntimeException e) {
            fresh.close();
            throw e;
        }
        if (replaced[0] != null) {
            replaced[0].close();
        }
        return fresh;
    }

    /**
     * The registration of {@code (instanceId, tpRank)} for {@code caller}.
     *
     * @throws EngineException PERMISSION_DENIED when another principal holds the instance id: its pushes read, and its
     *     receives write, that principal's memory
     */
    public Optional<RankLayers> find(Principal caller, String instanceId, int tpRank) {
        admission.requireOwnerOrAbsent(instanceId, caller);
        return Optional.ofNullable(ranks.get(new Key(instanceId, tpRank)));
    }

    /**
     * The engine ended {@code instanceId}: its registrations leave the table, so no new push or receive can use them,
     * and each is closed once the pushes and receives already using it end.
     *
     * @return how many registrations left the table
     */
    public int instanceEnded(String instanceId) {
        int n = 0;
        for (Map.Entry<Key, RankLayers> e : List.copyOf(ranks.entrySet())) {
            RankLayers r = e.getValue();
            if (e.getKey().instanceId().equals(instanceId) && ranks.remove(e.getKey(), r)) {
                r.retire();
                n++;
            }
        }
        return n;
    }

    public int size() {
        return ranks.size();
    }

    /** Closes every registration (the engine calls this after its agents stopped). */
    @Override
    public void close() {
        ranks.values().forEach(RankLayers::close);
        ranks.clear();
    }
}
