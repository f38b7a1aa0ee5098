package io.pegaflow.core.engine;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.DeviceContext;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.instance.LayerRegistration;
import java.util.ArrayList;
import java.util.List;

/**
 * A Save or Load request resolved against the registry, in the one place both paths go through: the device is
 * registered on the instance, the tp rank is in range, and every named layer is known to the instance and registered
 * on that device. Its {@link #slotIndex} is the one slot formula ({@link
 * io.pegaflow.core.instance.SlotFormula}) applied to this request's rank.
 *
 * <p>The error texts differ by {@link Op}: Save keeps the reference's wording (the conformance suite checks it),
 * Load names the instance and device as it always has.
 */
record DataRequest(Instance instance, DeviceContext device, int tpRank, List<LayerRegistration> layers) {

    /** Which RPC is being resolved; only the wording of its errors differs. */
    enum Op {
        SAVE,
        LOAD
    }

    DataRequest {
        layers = List.copyOf(layers);
    }

    /** The slot {@code layer} (one of {@link #layers}) occupies for this request's tp rank. */
    int slotIndex(LayerRegistration layer) {
        return instance.slotIndex(layer, tpRank);
    }

    /** A device id is never negative (checked before the instance is looked up, as both RPCs always did). */
    static void checkDeviceId(int deviceId) {
        if (deviceId < 0) {
            throw EngineException.badRequest("device_id " + deviceId + " must be >= 0");
        }
    }

    /**
     * The device {@code deviceId} of {@code instance}.
     *
     * @throws EngineException FAILED_PRECONDITION ({@code workerMissing}) when the device was never registered
     */
    static DeviceContext device(Instance instance, int deviceId) {
        DeviceContext device = instance.device(deviceId);
        if (device == null) {
            throw EngineException.workerMissing(instance.id(), deviceId);
        }
        return device;
    }

    /**
     * Checks the rank and resolves the layers, in that order.
     *
     * @throws EngineException INVALID_ARGUMENT for a tp rank outside {@code [0, tp_size)}, a layer the instance does
     *     not know, or one that another device (pipeline stage) registered
     */
    static DataRequest resolve(Op op, Instance instance, DeviceContext device, long tpRank, List<String> layerNames) {
        if (tpRank < 0 || tpRank >= instance.tpSize()) {
            throw EngineException.invalidArgument(
                    "tp_rank " + tpRank + " out of range (tp_size " + instance.tpSize() + ")");
        }
        List<LayerRegistration> layers = new ArrayList<>(layerNames.size());
        for (String name : layerNames) {
            if (instance.layerId(name) < 0) {
                throw EngineException.invalidArgument(
                        op == Op.SAVE
                                ? "layer " + name + " unknown"
                                : "layer " + name + " unknown for instance " + instance.id());
            }
            LayerRegistration layer = device.layer(name);
            if (layer == null) {
                throw EngineException.invalidArgument(
                        op == Op.SAVE
                                ? "layer " + name + " not registered on device"
                                : "layer " + name + " not registered on device " + device.deviceId());
            }
            layers.add(layer);
        }
        return new DataRequest(instance, device, (int) tpRank, layers);
    }
}
