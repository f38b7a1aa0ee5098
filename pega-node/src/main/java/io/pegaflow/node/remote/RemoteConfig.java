package io.pegaflow.node.remote;

import java.time.Duration;

/**
 * The remote tier's settings (the server maps them from {@code pega.rdma.*}).
 *
 * @param connectTimeout a handshake: the RPC plus every lane's round trip
 * @param rpcTimeout each call to a peer (lock, release) and to the owner directory
 * @param transferTimeout how long one fetch's gets may take; the owner's lock may end them sooner (decision 0017)
 * @param maxFetchBlocks most blocks one fetch asks a peer for
 * @param wireChecksum ask owners for a CRC32C per block and treat a block that does not match it as a miss
 */
public record RemoteConfig(
        Duration connectTimeout,
        Duration rpcTimeout,
        Duration transferTimeout,
        int maxFetchBlocks,
        boolean wireChecksum) {

    /** @throws IllegalArgumentException naming the setting that cannot work */
    public RemoteConfig {
        positive("connect timeout", connectTimeout);
        positive("rpc timeout", rpcTimeout);
        positive("transfer timeout", transferTimeout);
        if (maxFetchBlocks < 1) {
            throw new IllegalArgumentException("remote tier: max fetch blocks " + maxFetchBlocks + " (expected: >= 1)");
        }
    }

    private static void positive(String what, Duration d) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("remote tier: " + what + " " + d + " (expected: > 0)");
        }
    }
}
