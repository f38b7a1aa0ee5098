package io.pegaflow.core.engine;

import io.pegaflow.core.instance.ConnectorGeneration;
import io.pegaflow.core.instance.DeviceContext;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.instance.LayerRegistration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;

/**
 * One registered instance as the admin surface shows it: its topology and, per device, how many layers it mapped and
 * in which layout. A copy taken at call time; nothing in it reaches back into the engine.
 *
 * @param leases live query leases the instance holds
 * @param clientVersion the connector's {@code client_version}, {@code <missing>} when it sent none (v0.22.4, 0.22.5)
 * @param generation the connector generation, {@code G0} to {@code G3} ({@link ConnectorGeneration})
 * @param sealed whether every worker it waits for registered (always for G0 and G1)
 * @param groupLayers layers per storage group, indexed by group: one entry unless the model is hybrid (attention
 *     plus recurrent state groups, pegaflow-llm 0.23.11+)
 */
public record InstanceSummary(
        String id,
        String namespace,
        int tpSize,
        int worldSize,
        int numLayers,
        int leases,
        boolean detached,
        List<Device> devices,
        String clientVersion,
        String generation,
        boolean sealed,
        List<Integer> groupLayers) {

    public InstanceSummary {
        devices = List.copyOf(devices);
        groupLayers = List.copyOf(groupLayers);
    }

    /** Whether the instance caches more than one storage group. */
    public boolean hybrid() {
        return groupLayers.size() > 1;
    }

    /**
     * One device context of the instance.
     *
     * @param layout {@code contiguous} (K and V of a block together), {@code split} (K and V planes apart) or
     *     {@code mixed} when its layers differ
     * @param numBlocks the most device blocks any of its layers registered
     * @param bytesPerBlock bytes one block occupies on the device, summed over its layers
     */
    public record Device(
            int deviceId, int tpRank, int ppRank, int layers, String layout, long numBlocks, long bytesPerBlock) {}

    static InstanceSummary of(Instance instance, int leases, boolean detached) {
        List<Device> devices = instance.devices().stream()
                .map(InstanceSummary::device)
                .sorted(Comparator.comparingInt(Device::deviceId))
                .toList();
        return new InstanceSummary(
                instance.id(),
                instance.namespace(),
                instance.tpSize(),
                instance.worldSize(),
                instance.numLayers(),
                leases,
                detached,
                devices,
                instance.connector().versionText(),
                instance.connector().generation().name(),
                instance.isSealed(),
                IntStream.of(instance.groupLayerCounts()).boxed().toList());
    }

    private static Device device(DeviceContext device) {
        List<LayerRegistration> layers = List.copyOf(device.layers().values());
        long split = layers.stream().filter(LayerRegistration::isSplit).count();
        String layout = split == 0 ? "contiguous" : split == layers.size() ? "split" : "mixed";
        long numBlocks =
                layers.stream().mapToLong(LayerRegistration::numBlocks).max().orElse(0);
        long bytesPerBlock =
                layers.stream().mapToLong(l -> l.bytesPerBlock() * l.segments()).sum();
        return new Device(
                device.deviceId(), device.tpRank(), device.ppRank(), layers.size(), layout, numBlocks, bytesPerBlock);
    }
}
