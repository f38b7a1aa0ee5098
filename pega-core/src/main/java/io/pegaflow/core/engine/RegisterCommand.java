package io.pegaflow.core.engine;

import io.pegaflow.core.instance.Connector;
import io.pegaflow.core.instance.Principal;
import java.util.List;
import java.util.OptionalInt;

/**
 * A RegisterContextBatch request in engine terms. Unsigned wire values are widened to {@code long} so that values
 * above 2^31 are validated instead of wrapping. {@code callerUid} is the calling process's uid when the transport
 * could tell (see {@link io.pegaflow.core.device.Caller}); {@code principal} is who the instance will belong to (see
 * {@link Principal}); {@code connector} is the generation and flags the connector registered with ({@link
 * Connector#LEGACY} for a v0.22.4 one). {@code numLayers} is 0 when the connector's generation sends none.
 * {@code layerGroupIds} is parallel to {@code layerNames} (each layer's storage group, upstream {@code
 * layer_group_ids}, pegaflow-llm 0.23.11+), or empty when every layer is in group 0.
 */
public record RegisterCommand(
        String instanceId,
        String namespace,
        long tpRank,
        long tpSize,
        long worldSize,
        int deviceId,
        long numLayers,
        long ppRank,
        List<String> layerNames,
        List<byte[]> wrapperBytes,
        long[] numBlocks,
        long[] bytesPerBlock,
        long[] kvStrideBytes,
        long[] segments,
        OptionalInt callerUid,
        Principal principal,
        Connector connector,
        int[] layerGroupIds) {

    /** Whether any layer is outside storage group 0 (a hybrid model: attention plus recurrent state). */
    public boolean declaresGroups() {
        for (int group : layerGroupIds) {
            if (group != 0) {
                return true;
            }
        }
        return false;
    }

    /** The storage group of layer {@code i} of the request. */
    public int groupOf(int i) {
        return layerGroupIds.length == 0 ? 0 : layerGroupIds[i];
    }

    /**
     * A v0.22.4 connector's command with every layer in storage group 0, whose principal follows from the uid alone:
     * in-process callers, tests and benchmarks. Adapters build the full record.
     */
    public static RegisterCommand inProcess(
            String instanceId,
            String namespace,
            long tpRank,
            long tpSize,
            long worldSize,
            int deviceId,
            long numLayers,
            long ppRank,
            List<String> layerNames,
            List<byte[]> wrapperBytes,
            long[] numBlocks,
            long[] bytesPerBlock,
            long[] kvStrideBytes,
            long[] segments,
            OptionalInt callerUid) {
        return new RegisterCommand(
                instanceId,
                namespace,
                tpRank,
                tpSize,
                worldSize,
                deviceId,
                numLayers,
                ppRank,
                layerNames,
                wrapperBytes,
                numBlocks,
                bytesPerBlock,
                kvStrideBytes,
                segments,
                callerUid,
                Principal.of(callerUid, "unknown"),
                Connector.LEGACY,
                new int[0]);
    }
}
