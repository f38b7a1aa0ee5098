package io.pegaflow.core.instance;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One vLLM replica: created by its first registration, it fixes the namespace, tp_size and world_size, assigns dense
 * layer ids, and holds one {@link DeviceContext} per device.
 *
 * <p>Layer ids are deterministic: a layer gets the next id the first time any device of the instance registers it,
 * in the order of the request's {@code layer_names} (the reference used hash-map order, so two instances of one
 * namespace could disagree on which slot is which layer). {@code num_layers} only grows.
 *
 * <p>Thread-safety: mutations synchronise on the instance; reads go through concurrent maps and volatile fields.
 */
public final class Instance {
    private final String id;
    private final String namespace;
    private final int tpSize;
    private final int worldSize;
    private final Map<String, Integer> layerIds = new ConcurrentHashMap<>();
    private final Map<Integer, DeviceContext> devices = new ConcurrentHashMap<>();
    private volatile int numLayers;

    public Instance(String id, String namespace, int tpSize, int worldSize, int numLayers) {
        this.id = id;
        this.namespace = namespace;
        this.tpSize = tpSize;
        this.worldSize = worldSize;
        this.numLayers = numLayers;
    }

    public String id() {
        return id;
    }

    public String namespace() {
        return namespace;
    }

    public int tpSize() {
        return tpSize;
    }

    public int worldSize() {
        return worldSize;
    }

    public int numLayers() {
        return numLayers;
    }

    /** Slots per block, read at save time: {@code num_layers × tp_size}. */
    public int totalSlots() {
        return numLayers * tpSize;
    }

    /** The id of a known layer, or -1. */
    public int layerId(String name) {
        Integer layerId = layerIds.get(name);
        return layerId == null ? -1 : layerId;
    }

    /** Assigns ids to unseen names in request order and grows {@code num_layers}; returns the ids in order. */
    public synchronized int[] assignLayerIds(List<String> names) {
        int[] out = new int[names.size()];
        for (int i = 0; i < out.length; i++) {
            String name = names.get(i);
            Integer existing = layerIds.get(name);
            if (existing == null) {
                existing = layerIds.size();
                layerIds.put(name, existing);
            }
            out[i] = existing;
            numLayers = Math.max(numLayers, existing + 1);
        }
        return out;
    }

    public DeviceContext device(int deviceId) {
        return devices.get(deviceId);
    }

    /** Installs a device context unless one exists; returns false when the device was already registered. */
    public synchronized boolean addDevice(DeviceContext context) {
        return devices.putIfAbsent(context.deviceId(), context) == null;
    }

    public List<DeviceContext> devices() {
        return new ArrayList<>(devices.values());
    }

    /** Removes every device context (teardown); the caller closes them. */
    public synchronized List<DeviceContext> detachDevices() {
        List<DeviceContext> out = new ArrayList<>(devices.values());
        devices.clear();
        return out;
    }
}
