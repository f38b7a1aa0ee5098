package io.pegaflow.core.engine;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Connector;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.instance.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/** Live instances by id. Thread-safe; creation and removal are atomic per id. */
final class InstanceRegistry {
    private final ConcurrentHashMap<String, Instance> instances = new ConcurrentHashMap<>();

    /** @throws EngineException FAILED_PRECONDITION {@code "instance {id} not found"} */
    Instance require(String instanceId) {
        Instance instance = instances.get(instanceId);
        if (instance == null) {
            throw EngineException.instanceMissing(instanceId);
        }
        return instance;
    }

    @Nullable
    Instance get(String instanceId) {
        return instances.get(instanceId);
    }

    /**
     * Returns the existing instance or creates it for {@code caller}; an existing one of another principal is refused
     * (before its topology is compared, which would tell the caller about it), one with another topology is a
     * mismatch.
     *
     * @throws EngineException PERMISSION_DENIED (see {@link #notOwner}), FAILED_PRECONDITION when {@code connector}
     *     is of another generation than the instance's, FAILED_PRECONDITION {@code "topology mismatch: ..."},
     *     RESOURCE_EXHAUSTED when a new one would pass {@code pega.limits.instances}
     */
    Instance getOrCreate(
            String id,
            String namespace,
            int tpSize,
            int worldSize,
            int numLayers,
            Principal caller,
            Connector connector,
            int maxInstances) {
        Instance instance = instances.computeIfAbsent(id, k -> {
            requireRoomForAnother(maxInstances);
            return new Instance(k, namespace, tpSize, worldSize, numLayers, caller, connector);
        });
        if (!instance.owner().equals(caller)) {
            throw notOwner(id);
        }
        Connector existing = instance.connector();
        if (existing.generation() != connector.generation()) {
            throw EngineException.failedPrecondition("instance " + id + " was registered by a generation "
                    + existing.generation() + " connector (pegaflow-llm "
                    + existing.generation().versions()
                    + ", client_version " + existing.versionText() + "); a generation " + connector.generation()
                    + " worker (client_version " + connector.versionText() + ") cannot join it: all workers of one"
                    + " instance must run one connector generation");
        }
        boolean pageFirstMatters = !connector.generation().declaresLayerCount();
        if (instance.tpSize() != tpSize
                || instance.worldSize() != worldSize
                || existing.pageFirst() != connector.pageFirst()) {
            // G0/G1 keep v0.22.4's text; later connectors hear upstream's, which names page_first (d3ed31a).
            throw EngineException.topologyMismatch(
                    pageFirstMatters
                            ? "instance " + id + " exists with tp=" + instance.tpSize() + ", world="
                                    + instance.worldSize() + ", page_first=" + existing.pageFirst() + "; requested tp="
                                    + tpSize + ", world=" + worldSize + ", page_first=" + connector.pageFirst()
                            : "instance " + id + " exists with tp=" + instance.tpSize() + ", world="
                                    + instance.worldSize() + "; requested tp=" + tpSize + ", world=" + worldSize);
        }
        return instance;
    }

    /** @throws EngineException RESOURCE_EXHAUSTED when {@code maxInstances} are live */
    void requireRoomForAnother(int maxInstances) {
        if (instances.size() >= maxInstances) {
            throw EngineLimits.exhausted(
                    "no more instances can be registered (" + instances.size() + " live)",
                    "pega.limits.instances",
                    maxInstances);
        }
    }

    Instance remove(String instanceId) {
        return instances.remove(instanceId);
    }

    /**
     * Refuses a caller that is not the owner of a live instance; an id nobody registered passes (the operation itself
     * then reports it missing, as the reference does).
     *
     * @throws EngineException PERMISSION_DENIED
     */
    void requireOwnerOrAbsent(String instanceId, Principal caller) {
        Instance instance = instances.get(instanceId);
        if (instance != null && !instance.owner().equals(caller)) {
            throw notOwner(instanceId);
        }
    }

    /** The one text for an instance id held by another principal; it names neither the owner nor the topology. */
    static EngineException notOwner(String instanceId) {
        return EngineException.permissionDenied("instance " + instanceId
                + " is registered by another user; only its owner (the same OS user, or the same host when remote)"
                + " can use or end it, and an operator can remove it with POST /instances/cleanup");
    }

    List<String> ids() {
        return new ArrayList<>(instances.keySet());
    }

    int size() {
        return instances.size();
    }
}
