package io.pegaflow.core.engine;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Instance;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

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

    Instance get(String instanceId) {
        return instances.get(instanceId);
    }

    /**
     * Returns the existing instance or creates it; an existing one with another topology is a mismatch.
     *
     * @throws EngineException FAILED_PRECONDITION {@code "topology mismatch: ..."}
     */
    Instance getOrCreate(String id, String namespace, int tpSize, int worldSize, int numLayers) {
        Instance instance =
                instances.computeIfAbsent(id, k -> new Instance(k, namespace, tpSize, worldSize, numLayers));
        if (instance.tpSize() != tpSize || instance.worldSize() != worldSize) {
            throw EngineException.topologyMismatch("instance " + id + " exists with tp=" + instance.tpSize()
                    + ", world=" + instance.worldSize() + "; requested tp=" + tpSize + ", world=" + worldSize);
        }
        return instance;
    }

    Instance remove(String instanceId) {
        return instances.remove(instanceId);
    }

    List<String> ids() {
        return new ArrayList<>(instances.keySet());
    }

    int size() {
        return instances.size();
    }
}
