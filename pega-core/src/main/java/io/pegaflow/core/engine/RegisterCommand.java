package io.pegaflow.core.engine;

import java.util.List;

/**
 * A RegisterContextBatch request in engine terms. Unsigned wire values are widened to {@code long} so that values
 * above 2^31 are validated instead of wrapping.
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
        long[] segments) {}
