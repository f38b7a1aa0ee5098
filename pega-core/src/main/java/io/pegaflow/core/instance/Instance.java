package io.pegaflow.core.instance;

import io.pegaflow.core.error.EngineException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * One vLLM replica: created by its first registration, it fixes the namespace, tp_size and world_size, assigns dense
 * layer ids, and holds one {@link DeviceContext} per device.
 *
 * <p>Layer ids are deterministic: a layer gets the next id the first time any device of the instance registers it,
 * in the order of the request's {@code layer_names} (the reference used hash-map order, so two instances of one
 * namespace could disagree on which slot is which layer). {@code num_layers} only grows.
 *
 * <p>The {@link Connector} of the first registration fixes the instance's generation. A generation that declares
 * {@code num_layers} (G0, G1) serves data calls from its first registration on, as v0.22.4 did; a later one (G2, G3)
 * sends no layer count, so its layer space is complete only once {@code world_size} workers registered (upstream
 * {@code pegaflow-core/src/instance.rs} {@code seal_topology}, commit {@code d3ed31a}), and Save, Load and Query wait
 * for that ({@link #requireSealed}).
 *
 * <p>Thread-safety: mutations synchronise on the instance; reads go through concurrent maps and volatile fields.
 */
public final class Instance {
    private final String id;
    private final String namespace;
    private final int tpSize;
    private final int worldSize;
    private final Map<String, Integer> layerIds = new ConcurrentHashMap<>(); // id within the layer's storage group
    private final Map<String, Integer> layerGroups = new ConcurrentHashMap<>();
    private final Map<Integer, DeviceContext> devices = new ConcurrentHashMap<>();
    private final Principal owner;
    private final Connector connector;
    private volatile int numLayers;
    /** Layers per storage group, indexed by group; replaced, never mutated, so readers need no lock. */
    private volatile int[] groupLayers = {0};

    /** An instance owned by this process (tests, benchmarks). */
    public Instance(String id, String namespace, int tpSize, int worldSize, int numLayers) {
        this(id, namespace, tpSize, worldSize, numLayers, Principal.inProcess());
    }

    /** @param owner the principal of the registration that created it: only it may change the instance */
    public Instance(String id, String namespace, int tpSize, int worldSize, int numLayers, Principal owner) {
        this(id, namespace, tpSize, worldSize, numLayers, owner, Connector.LEGACY);
    }

    /**
     * An instance created by a registration of {@code connector}.
     *
     * @param connector the generation and flags of the registration that created it; every later one must agree
     */
    public Instance(
            String id,
            String namespace,
            int tpSize,
            int worldSize,
            int numLayers,
            Principal owner,
            Connector connector) {
        this.id = id;
        this.connector = connector;
        this.owner = owner;
        this.namespace = namespace;
        this.tpSize = tpSize;
        this.worldSize = worldSize;
        this.numLayers = numLayers;
    }

    public String id() {
        return id;
    }

    /** The principal that created the instance; only it registers devices, saves, loads, queries or unregisters. */
    public Principal owner() {
        return owner;
    }

    public Connector connector() {
        return connector;
    }

    /** Whether every worker it waits for registered: always for G0/G1, once {@code world_size} devices did for later. */
    public boolean isSealed() {
        return connector.generation().declaresLayerCount() || devices.size() >= worldSize;
    }

    /**
     * Refuses a data call (Save, Load, Query) before the layer space is complete.
     *
     * @throws EngineException INVALID_ARGUMENT {@code "instance <id> registration incomplete: <n>/<world> workers
     *     registered"} (upstream's text) while a G2/G3 instance still waits for workers
     */
    public void requireSealed() {
        if (!isSealed()) {
            throw EngineException.invalidArgument("instance " + id + " registration incomplete: " + devices.size() + "/"
                    + worldSize + " workers registered");
        }
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

    /**
     * Slots per block of storage group {@code group}, read at save and load time: its layers × {@code tp_size} ({@link
     * SlotFormula#slotCount}). Groups seal against their own slot space (upstream #433), so a state group that saves
     * only sparse checkpoints completes its blocks without attention's per-block cadence. A G0/G1 instance has one
     * group of the declared {@code num_layers}.
     *
     * @throws EngineException INVALID_ARGUMENT {@code "storage group <g> out of range (<n> groups)"} (upstream's text)
     *     for a group the instance does not have
     */
    public int totalSlots(int group) {
        int[] counts = groupLayers;
        if (group < 0 || group >= counts.length) {
            throw EngineException.invalidArgument("storage group " + Integer.toUnsignedString(group) + " out of range ("
                    + counts.length + " groups)");
        }
        int layers = group == 0 && connector.generation().declaresLayerCount() ? numLayers : counts[group];
        return SlotFormula.slotCount(layers, tpSize);
    }

    /** The number of storage groups (hybrid cache groups); 1 unless the connector declared more. */
    public int groupCount() {
        return groupLayers.length;
    }

    /** Layers of each storage group, indexed by group (a copy). */
    public int[] groupLayerCounts() {
        return groupLayers.clone();
    }

    /** Whether the instance caches more than one storage group (attention plus recurrent state, upstream #433). */
    public boolean isHybrid() {
        return groupLayers.length > 1;
    }

    /** The slot of {@code layer} for {@code tpRank} in its group's blocks ({@link SlotFormula#slotIndex}). */
    public int slotIndex(LayerRegistration layer, int tpRank) {
        return SlotFormula.slotIndex(layer.layerId(), tpSize, tpRank);
    }

    /** The id of a known layer within its storage group, or -1. */
    public int layerId(String name) {
        Integer layerId = layerIds.get(name);
        return layerId == null ? -1 : layerId;
    }

    /** Assigns ids to unseen names of storage group 0: {@link #assignLayerIds(List, int[], int)}. */
    public int[] assignLayerIds(List<String> names) {
        return assignLayerIds(names, new int[0], -1);
    }

    /**
     * Assigns ids to unseen names in request order, each the next row of its storage group, and grows {@code
     * num_layers}; returns the ids in order. Devices of one instance may register different names (pipeline stages),
     * so the union is bounded here, before anything is assigned.
     *
     * @param groups the storage group of each name (empty: all group 0)
     * @param deviceId the registering device, for the message
     * @throws EngineException INVALID_ARGUMENT when the new names would take {@code num_layers × tp_size} past
     *     {@link InstanceLimits#MAX_SLOTS_PER_BLOCK}, or a name is already in another storage group (upstream's
     *     text); nothing is assigned then
     */
    public synchronized int[] assignLayerIds(List<String> names, int[] groups, int deviceId) {
        long unseen =
                names.stream().distinct().filter(n -> !layerIds.containsKey(n)).count();
        long layersAfter = Math.max(numLayers, layerIds.size() + unseen);
        if (layersAfter > InstanceLimits.MAX_NUM_LAYERS || layersAfter * tpSize > InstanceLimits.MAX_SLOTS_PER_BLOCK) {
            throw EngineException.badRequest("instance " + id + " would have " + layersAfter + " layers x tp_size "
                    + tpSize + ", more than the supported " + InstanceLimits.MAX_NUM_LAYERS + " layers and "
                    + InstanceLimits.MAX_SLOTS_PER_BLOCK + " slots per block");
        }
        Map<String, Integer> declared = new HashMap<>();
        int maxGroup = groupLayers.length - 1;
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            int group = groups.length == 0 ? 0 : groups[i];
            Integer existing = layerGroups.get(name);
            if (existing == null) {
                existing = declared.putIfAbsent(name, group);
            }
            if (existing != null && existing != group) {
                throw EngineException.invalidArgument("layer " + name + " registered in storage group " + existing
                        + " on one device but group " + group + " on device " + deviceId);
            }
            maxGroup = Math.max(maxGroup, group);
        }
        int[] counts = Arrays.copyOf(groupLayers, maxGroup + 1);
        int[] out = new int[names.size()];
        for (int i = 0; i < out.length; i++) {
            String name = names.get(i);
            Integer existing = layerIds.get(name);
            if (existing == null) {
                int group = groups.length == 0 ? 0 : groups[i];
                existing = counts[group]++;
                layerIds.put(name, existing);
                layerGroups.put(name, group);
            }
            out[i] = existing;
        }
        groupLayers = counts;
        numLayers = Math.max(numLayers, layerIds.size());
        return out;
    }

    /** The device registered under {@code deviceId}, or null. */
    public @Nullable DeviceContext device(int deviceId) {
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
