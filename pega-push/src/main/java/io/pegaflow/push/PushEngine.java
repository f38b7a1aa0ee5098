package io.pegaflow.push;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.engine.DeviceWorkers;
import io.pegaflow.core.engine.SideRegistrations;
import io.pegaflow.core.engine.StagingAllocator;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.push.decode.DecodeSide;
import io.pegaflow.push.layout.HandshakeCodec;
import io.pegaflow.push.layout.HandshakeSeal;
import io.pegaflow.push.layout.PushLayerSpec;
import io.pegaflow.push.layout.PushLayerTable;
import io.pegaflow.push.prefill.DecodeLink;
import io.pegaflow.push.prefill.PrefillSide;
import io.pegaflow.push.view.PushView;
import io.pegaflow.transfer.TransferEngine;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The P/D push engine of one server, both roles at once (a server is prefill for some requests and decode for others,
 * as the reference's {@code kv_both}): the push layer registrations, the {@link PrefillSide} and its agent, the
 * {@link DecodeSide} and its agent, over one transfer engine whose regions are the server's pool.
 *
 * <p>Ownership: owns the transfer engine, the link to decode servers and the registrations; borrows the cache engine's
 * staging allocator and device workers (the cache engine owns the pool, the backend and the device lanes every copy of
 * a push runs on, and must outlive this engine).
 * Staging comes from the pool the way a Save's memory does, so a pool full of cached blocks is no obstacle. {@link #close()} closes, in this order,
 * the transfer engine (every put resolves), the agents (open pushes and receives fail, their staging is freed), the
 * link, and the registrations. Thread-safe.
 */
public final class PushEngine implements AutoCloseable {
    private final PushConfig config;
    private final TransferEngine transfer;
    private final PushLayerTable layers;
    private final PrefillSide prefill;
    private final DecodeSide decode;
    private final AutoCloseable link;
    private final AutoCloseable instanceEnds;
    private final PushStats stats = new PushStats();
    private final RequestSlots requests;
    private final Supplier<String> advertiseAddress;
    private final NanoClock clock;
    private boolean closed;

    /**
     * @param seal how handshakes are sealed and checked: with the cluster credential, a prefill server takes addresses
     *     and worker addresses only from handshakes a decode server of its cluster sealed
     * @param handshakes the handshake blob's encoding, which is the wire's: the gRPC adapter provides it
     * @param staging the cache engine's allocator for staging: a full pool of cached blocks makes room for a push as it
     *     does for a Save
     * @param registrations the cache engine's admission of push layers: its owner rule, mapping budget and instance
     *     lifecycle
     * @param workers the cache engine's device work: layers map through its backend and copies run on its lanes
     * @param transfer registered over the pool's regions; owned from here on
     * @param link how this server calls decode servers; closed with the engine when it is {@link AutoCloseable}
     * @param advertiseAddress {@code host:port} at which peers reach this server's gRPC endpoint (the decode address in
     *     the handshakes it hands out); asked per PrepareReceive, so it may be known only once the server is bound
     */
    public PushEngine(
            PushConfig config,
            HandshakeSeal seal,
            HandshakeCodec handshakes,
            StagingAllocator staging,
            SideRegistrations registrations,
            DeviceWorkers workers,
            TransferEngine transfer,
            DecodeLink link,
            NanoClock clock,
            AgentGroup agents,
            Supplier<String> advertiseAddress) {
        this.config = config;
        this.clock = clock;
        this.advertiseAddress = advertiseAddress;
        this.transfer = transfer;
        this.link = link instanceof AutoCloseable c ? c : () -> {};
        this.requests = new RequestSlots(config.maxRequests(), config.principalShare());
        this.layers = new PushLayerTable(workers, registrations);
        this.instanceEnds = registrations.onInstanceEnded(layers::instanceEnded);
        this.prefill = new PrefillSide(
                layers,
                seal,
                handshakes,
                staging,
                transfer,
                link,
                clock,
                config.pushTimeout().toNanos(),
                config.connectTimeout().toNanos(),
                config.maxInflightLayers(),
                config.putChunkBytes(),
                config.maxRequests(),
                agents,
                new PrefillSide.Admission() {
                    @Override
                    public void admit(Principal who) {
                        requests.acquire(who);
                        stats.pushesInFlight.incrementAndGet();
                    }

                    @Override
                    public void leave(Principal who) {
                        stats.pushesInFlight.decrementAndGet();
                        requests.release(who);
                    }

                    @Override
                    public void pushed(long bytes) {
                        stats.bytesPushed.add(bytes);
                    }

                    @Override
                    public void layerLag(long nanos) {
                        stats.recordLayerLag(nanos);
                    }

                    @Override
                    public void completed() {
                        stats.pushes.increment();
                    }

                    @Override
                    public void failed() {
                        stats.pushFailures.increment();
                    }
                });
        this.decode = new DecodeSide(
                layers,
                seal,
                handshakes,
                staging,
                clock,
                advertiseAddress,
                transfer.localDescriptor().encode(),
                config.receiveTimeout().toNanos(),
                config.quarantine().toNanos(),
                config.maxRequests() * 4 + 1024,
                agents,
                new DecodeSide.Admission() {
                    @Override
                    public void admit(Principal who) {
                        requests.acquire(who);
                        stats.receivesInFlight.incrementAndGet();
                    }

                    @Override
                    public void leave(Principal who) {
                        stats.receivesInFlight.decrementAndGet();
                        requests.release(who);
                    }

                    @Override
                    public void layerCopied(long bytes) {
                        stats.bytesReceived.add(bytes);
                    }

                    @Override
                    public void received() {
                        stats.receives.increment();
                    }

                    @Override
                    public void receiveFailed() {
                        stats.receiveFailures.increment();
                    }
                });
    }

    public PushConfig config() {
        return config;
    }

    /**
     * Which share of the request slots is used up (every slot, or one principal's whole share), or null while any
     * principal can still start a push or a receive; for health.
     */
    public @Nullable String slotSaturation() {
        return requests.saturation();
    }

    public PushStats stats() {
        return stats;
    }

    /** RegisterPushLayers for {@code principal}; returns the number of layers. */
    public int registerLayers(
            Caller caller,
            Principal principal,
            String instanceId,
            int tpRank,
            int tpSize,
            int deviceId,
            List<PushLayerSpec> layerList) {
        return layers.register(caller, principal, instanceId, tpRank, tpSize, deviceId, layerList)
                .layerCount();
    }

    /** PrepareReceive by {@code caller}, who must own the instance's push layers. */
    public DecodeSide.Prepared prepareReceive(
            Principal caller,
            OptionalInt callerUid,
            String instanceId,
            String requestId,
            List<Long> blockIds,
            List<String> loadStateShm,
            long timeoutMs) {
        return decode.prepare(caller, callerUid, instanceId, requestId, blockIds, loadStateShm, timeoutMs);
    }

    /** CancelReceive by {@code caller}, who must have prepared the receive. */
    public void cancelReceive(Principal caller, long receiveId) {
        decode.cancel(caller, receiveId);
    }

    /** StartPush by {@code caller}, who must own the instance's push layers; returns the push id. */
    public long startPush(
            Principal caller,
            OptionalInt callerUid,
            String instanceId,
            int tpRank,
            String requestId,
            byte[] handshake,
            List<Long> blockIds,
            String layerReadyShm,
            String pushStateShm,
            long timeoutMs) {
        return prefill.start(
                caller,
                callerUid,
                instanceId,
                tpRank,
                requestId,
                handshake,
                blockIds,
                layerReadyShm,
                pushStateShm,
                timeoutMs);
    }

    /** LayerArrived, from a prefill server holding the receive's secret. */
    public void layerArrived(long receiveId, byte[] secret, int tpRank, int layer) {
        decode.arrived(receiveId, secret, tpRank, layer);
    }

    /** WatchReceive, from a prefill server holding the receive's secret. */
    public void watchReceive(
            long receiveId, byte[] secret, int tpRank, io.pegaflow.push.decode.ReceiveWatcher watcher) {
        decode.watch(receiveId, secret, tpRank, watcher);
    }

    /** A prefill server's WatchReceive stream broke; ignored unless it presented the receive's secret. */
    public void watchLost(long receiveId, byte[] secret, int tpRank) {
        decode.linkLost(receiveId, secret, tpRank);
    }

    /** PushFailed, from a prefill server holding the receive's secret. */
    public void pushFailed(long receiveId, byte[] secret, int tpRank, String reason) {
        decode.pushFailed(receiveId, secret, tpRank, reason);
    }

    public PushView view() {
        return new PushView(
                advertiseAddress.get(),
                layers.size(),
                stats.pushesInFlight(),
                stats.receivesInFlight(),
                stats.pushesCompleted(),
                stats.receivesCompleted(),
                stats.bytesPushed(),
                stats.bytesReceived(),
                stats.pushFailures(),
                stats.receiveFailures(),
                stats.lastLayerLagNanos(),
                stats.maxLayerLagNanos(),
                decode.quarantinedBytes(),
                prefill.view(),
                decode.view(),
                clock.nanoTime(),
                decode.recent());
    }

    /** Idempotent; see the class comment for the order. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeQuietly(instanceEnds);
        transfer.close();
        prefill.close();
        decode.close();
        closeQuietly(link); // channels are closed best effort; a failed shutdown leaves nothing native behind
        layers.close();
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // see the callers: nothing owned is left open by these
        }
    }
}
