package io.pegaflow.bench.fleet;

/**
 * The load model: each GPU prefills {@code prefillTokensPerGpu} tokens/s, so a server with {@code gpusPerNode} GPUs
 * starts {@link #requestsPerNodePerSecond()} requests of {@code promptTokens}. A prompt is
 * {@link #sharedBlocks()} blocks of a fleet-wide shared prefix followed by {@link #uniqueBlocks()} blocks no other
 * request has. Each request sends {@code queries-per-request} QueryPrefixBlocks of its whole prompt, then seals (and
 * announces) the blocks its server does not hold yet; once the server's cache is full it evicts (and removes) as many
 * of its oldest blocks, so removals follow inserts at the same rate.
 *
 * @param blocksPerRequest {@code promptTokens / blockTokens}, rounded down
 */
record FleetModel(
        int gpusPerNode,
        double prefillTokensPerGpu,
        int blockTokens,
        int promptTokens,
        int blocksPerRequest,
        int sharedBlocks) {

    static FleetModel of(
            int gpusPerNode, double prefillTokensPerGpu, int blockTokens, int promptTokens, double sharedFraction) {
        int blocks = promptTokens / blockTokens;
        int shared = (int) Math.round(blocks * sharedFraction);
        return new FleetModel(gpusPerNode, prefillTokensPerGpu, blockTokens, promptTokens, blocks, shared);
    }

    int uniqueBlocks() {
        return blocksPerRequest - sharedBlocks;
    }

    double requestsPerNodePerSecond() {
        return gpusPerNode * prefillTokensPerGpu / promptTokens;
    }

    /** The most blocks a server seals per second: every prompt block new to it (a cold cache). */
    double maxInsertsPerNodePerSecond() {
        return requestsPerNodePerSecond() * blocksPerRequest;
    }

    /** The fewest: only the unique tail is new (every shared prefix already resident). */
    double minInsertsPerNodePerSecond() {
        return requestsPerNodePerSecond() * uniqueBlocks();
    }
}
