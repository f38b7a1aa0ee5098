package io.pegaflow.push.layout;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.LayerRegistration;
import io.pegaflow.proto.ext.push.PushLayer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The registered push layers of every (instance, TP rank). Thread-safe. A registration that a running push or receive
 * uses cannot be replaced (FAILED_PRECONDITION); the table owns every {@link RankLayers} it holds and closes them on
 * removal and on {@link #close()}.
 */
public final class PushLayerTable implements AutoCloseable {
    /** At most this many layers per rank: more than any model's layer count, fewer than a hostile request's. */
    public static final int MAX_LAYERS = 4096;

    private final DeviceBackend backend;
    private final Map<Key, RankLayers> ranks = new ConcurrentHashMap<>();

    private record Key(String instanceId, int tpRank) {}

    public PushLayerTable(DeviceBackend backend) {
        this.backend = backend;
    }

    /**
     * Maps and validates a rank's layers, replacing an idle earlier registration.
     *
     * @throws EngineException INVALID_ARGUMENT for a bad layer (the message names it), FAILED_PRECONDITION when the
     *     earlier registration is in use
     */
    public RankLayers register(
            Caller caller, String instanceId, int tpRank, int tpSize, int deviceId, List<PushLayer> layers) {
        if (instanceId.isBlank()) {
            throw EngineException.invalidArgument("instance_id must not be empty");
        }
        if (tpSize < 1 || tpRank < 0 || tpRank >= tpSize) {
            throw EngineException.invalidArgument("tp_rank " + tpRank + " is not below tp_size " + tpSize);
        }
        if (layers.isEmpty() || layers.size() > MAX_LAYERS) {
            throw EngineException.invalidArgument(
                    "a push registration needs 1 to " + MAX_LAYERS + " layers, got " + layers.size());
        }
        List<LayerRegistration> opened = new ArrayList<>(layers.size());
        try {
            for (int i = 0; i < layers.size(); i++) {
                PushLayer l = layers.get(i);
                if (l.getSegments() > 2) {
                    throw EngineException.invalidArgument("layer " + l.getName() + ": segments must be 1 or 2");
                }
                LayerMemory memory =
                        backend.openLayer(caller, deviceId, l.getWrapperBytes().toByteArray());
                try {
                    opened.add(LayerRegistration.validate(
                            l.getName(),
                            i,
                            memory,
                            l.getNumBlocks(),
                            l.getBytesPerBlock(),
                            l.getKvStrideBytes(),
                            l.getSegments(),
                            1));
                } catch (RuntimeException e) {
                    memory.close();
                    throw e;
                }
            }
        } catch (RuntimeException e) {
            opened.forEach(r -> r.memory().close());
            throw e;
        }
        RankLayers fresh = new RankLayers(instanceId, tpRank, tpSize, deviceId, opened, backend);
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

    public Optional<RankLayers> find(String instanceId, int tpRank) {
        return Optional.ofNullable(ranks.get(new Key(instanceId, tpRank)));
    }

    /** Drops an instance's idle registrations; returns how many were dropped. */
    public int unregister(String instanceId) {
        int n = 0;
        for (Map.Entry<Key, RankLayers> e : List.copyOf(ranks.entrySet())) {
            RankLayers r = e.getValue();
            if (e.getKey().instanceId().equals(instanceId) && !r.inUse() && ranks.remove(e.getKey(), r)) {
                r.close();
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
