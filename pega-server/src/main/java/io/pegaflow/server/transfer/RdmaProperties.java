package io.pegaflow.server.transfer;

import io.pegaflow.node.remote.RemoteConfig;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Cross-node KV sharing under {@code pega.rdma.*} (docs/transfer.md): off unless {@code enabled}. When on, the server
 * registers its pool with one UCX context, serves {@code RdmaHandshake}, {@code QueryBlocksForTransfer} and
 * {@code ReleaseTransferLock}, and, with a metaserver configured, fetches RAM and SSD misses from the peer that owns
 * the longest prefix.
 *
 * @param enabled run the transfer engine and the P2P RPCs
 * @param nics devices the lanes run over ({@link io.pegaflow.transfer.NicList} syntax); RDMA devices, or network
 *     interfaces for UCX's TCP transport
 * @param transports UCX transport list; empty lets UCX choose
 * @param qpsPerPeer connections per peer, each on its own UCX worker; equal on every node (checked at handshake)
 * @param transferLockTimeout how long blocks a peer locked stay pinned unreleased (bound even when off: the lock
 *     table always exists); at least 1 s when on, since {@code QueryBlocksForTransfer} reports it in whole seconds
 * @param transferTimeout how long one remote fetch's gets may take; empty means the reference's
 *     {@code max(transfer-lock-timeout - 60s, 10s)}; must be shorter than the lock timeout. A fetch also stops at the
 *     owner's lock (the timeout the owner reports, counted from the query), whichever comes first (decision 0017)
 * @param connectTimeout a handshake: the RPC plus every lane's round trip
 * @param rpcTimeout deadline of QueryBlocksForTransfer and ReleaseTransferLock calls to a peer, and of the metaserver
 *     prefix query
 * @param maxFetchBlocks most blocks one remote fetch asks a peer for
 * @param transferLockRequesterShare the fraction of the pool one requester id's transfer locks may pin; a
 *     {@code QueryBlocksForTransfer} that would pass it is RESOURCE_EXHAUSTED and locks nothing
 * @param transferLockPoolShare the fraction of the pool all transfer locks together may pin (requester ids are
 *     self-declared, so this is the bound a caller using many ids meets)
 * @param shmPool allocate the pool's shards through the transfer engine's UCX context (System V or POSIX shared
 *     memory), so that peers on the same host read them directly instead of through active-message emulation
 *     (decision 0019); false maps them privately, as without P2P
 * @param wireChecksum verify blocks fetched from a peer against a CRC32C the owner computed over the bytes it holds,
 *     and compute them for peers that ask; a block that does not match is a miss, never served (decision 0031 §3)
 */
@Validated
@ConfigurationProperties("pega.rdma")
public record RdmaProperties(
        @DefaultValue("false") boolean enabled,
        @NotNull @DefaultValue("") String nics,
        @NotNull @DefaultValue("") String transports,
        @Min(1) @DefaultValue("2") int qpsPerPeer,
        @NotNull @DefaultValue("120s") Duration transferLockTimeout,
        @Nullable Duration transferTimeout,
        @NotNull @DefaultValue("10s") Duration connectTimeout,
        @NotNull @DefaultValue("5s") Duration rpcTimeout,
        @Min(1) @DefaultValue("4096") int maxFetchBlocks,
        @DefaultValue("true") boolean shmPool,
        @DefaultValue("0.25") double transferLockRequesterShare,
        @DefaultValue("0.5") double transferLockPoolShare,
        @DefaultValue("true") boolean wireChecksum) {

    /** The gets' deadline: configured, or the reference's rule, which gives up before the owner's lock expires. */
    public Duration effectiveTransferTimeout() {
        if (transferTimeout != null) {
            return transferTimeout;
        }
        Duration derived = transferLockTimeout.minusSeconds(60);
        return derived.compareTo(Duration.ofSeconds(10)) < 0 ? Duration.ofSeconds(10) : derived;
    }

    /** The remote tier's settings. */
    public RemoteConfig remoteConfig() {
        return new RemoteConfig(connectTimeout, rpcTimeout, effectiveTransferTimeout(), maxFetchBlocks, wireChecksum);
    }

    /** Refuses values that cannot work with an {@link IllegalArgumentException} whose message starts with the key. */
    public void check() {
        if (transferLockTimeout.isNegative() || transferLockTimeout.isZero()) {
            throw new IllegalArgumentException(
                    "pega.rdma.transfer-lock-timeout: " + transferLockTimeout + " (expected: > 0)");
        }
        if (!enabled) {
            return;
        }
        if (transferLockTimeout.compareTo(Duration.ofSeconds(1)) < 0) {
            // peers would read 0 whole seconds and, bounding their gets by it (decision 0017), never fetch from here
            throw new IllegalArgumentException("pega.rdma.transfer-lock-timeout: " + transferLockTimeout
                    + " (expected: at least 1s with pega.rdma.enabled=true: QueryBlocksForTransfer reports it to peers"
                    + " in whole seconds)");
        }
        Duration t = effectiveTransferTimeout();
        if (t.isNegative() || t.isZero() || t.compareTo(transferLockTimeout) >= 0) {
            throw new IllegalArgumentException("pega.rdma.transfer-timeout: " + t
                    + " (expected: > 0 and shorter than pega.rdma.transfer-lock-timeout " + transferLockTimeout
                    + ", so a fetch gives up before the owner's lock expires)");
        }
        for (Duration d : new Duration[] {connectTimeout, rpcTimeout}) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("pega.rdma.connect-timeout and rpc-timeout must be > 0: " + d);
            }
        }
    }
}
