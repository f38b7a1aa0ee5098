package io.pegaflow.server.grpc;

import io.pegaflow.core.engine.LayerSave;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A Save as {@link SaveBinding} hands it to the service: engine.proto's {@code SaveRequest} fields, the layers already
 * in the engine's form. A request whose bytes are not a {@code SaveRequest} arrives as {@link #malformed()} text, so
 * that the handler can refuse it with INVALID_ARGUMENT (a marshaller's own failure would reach the client as UNKNOWN).
 *
 * @param tpRank and {@code ppRank}: protobuf {@code uint32}, unsigned in the int
 */
record SaveCall(
        String instanceId,
        int tpRank,
        int deviceId,
        int ppRank,
        List<LayerSave> layers,
        @Nullable String malformed) {

    SaveCall(String instanceId, int tpRank, int deviceId, int ppRank, List<LayerSave> layers) {
        this(instanceId, tpRank, deviceId, ppRank, layers, null);
    }

    static SaveCall malformed(String why) {
        return new SaveCall("", 0, 0, 0, List.of(), why);
    }
}
