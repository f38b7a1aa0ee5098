package io.pegaflow.server.grpc;

import com.google.protobuf.ByteString;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.engine.TransferGrant;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.proto.QueryBlocksForTransferResponse;
import io.pegaflow.proto.RdmaHandshakeRequest;
import io.pegaflow.proto.RdmaHandshakeResponse;
import io.pegaflow.proto.ReleaseTransferLockRequest;
import io.pegaflow.proto.ReleaseTransferLockResponse;
import io.pegaflow.proto.ResponseStatus;
import io.pegaflow.proto.TransferBlockInfo;
import io.pegaflow.proto.TransferSlotInfo;
import io.pegaflow.proto.ext.TransferChecksums;
import io.pegaflow.server.transfer.RdmaProperties;
import io.pegaflow.server.transfer.TransferMeters;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.WireChecksum;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/**
 * The owner's side of the P2P RPCs, when {@code pega.rdma.enabled=true}: {@code RdmaHandshake} exchanges
 * {@link HandshakeDescriptor}s and connects back to the requester (so both sides hold a connection, as the reference's
 * symmetric handshake), {@code QueryBlocksForTransfer} locks the found blocks and describes their segments,
 * {@code ReleaseTransferLock} ends a lock session. {@link EngineGrpcService} delegates here.
 *
 * <p>A requester that handshakes with a new incarnation (its descriptor's instance id changed: it restarted) can never
 * release what its previous incarnation locked, so those sessions end at once instead of at their deadline.
 */
@Component
@ConditionalOnProperty(name = "pega.rdma.enabled", havingValue = "true")
public class TransferRpcs {
    private static final Logger LOG = LoggerFactory.getLogger(TransferRpcs.class);
    private static final ResponseStatus OK =
            ResponseStatus.newBuilder().setOk(true).build();
    /** The proto's {@code numa_node} for "unknown"; the pool does not track NUMA per allocation. */
    static final int NUMA_UNKNOWN = 0xFFFFFFFF;
    /** More hashes than any real prefix, far fewer than a hostile request could make the lock table hold. */
    static final int MAX_HASHES = 65_536;

    static final int MAX_TRACKED_PEERS = 4096;

    private final PegaEngine engine;
    private final TransferEngine transfers;
    private final long connectTimeoutNanos;
    private final Map<String, Long> incarnations = new ConcurrentHashMap<>();

    private final TransferMeters meters;
    private final boolean checksums;

    TransferRpcs(PegaEngine engine, TransferEngine transfers, RdmaProperties rdma, TransferMeters meters) {
        this.meters = meters;
        this.checksums = rdma.wireChecksum();
        this.engine = engine;
        this.transfers = transfers;
        this.connectTimeoutNanos = rdma.connectTimeout().toNanos();
    }

    RdmaHandshakeResponse handshake(RdmaHandshakeRequest r) {
        PeerId requester = requester(r.getRequesterId());
        if (r.getHandshakeMetadata().isEmpty()) {
            // the reference's "already connected" probe: our descriptor if a connection exists, else nothing
            ByteString ours = transfers.isConnected(requester)
                    ? ByteString.copyFrom(transfers.localDescriptor().encode())
                    : ByteString.EMPTY;
            return RdmaHandshakeResponse.newBuilder()
                    .setStatus(OK)
                    .setHandshakeMetadata(ours)
                    .build();
        }
        HandshakeDescriptor remote;
        try {
            remote = HandshakeDescriptor.decode(r.getHandshakeMetadata().toByteArray());
            transfers.localDescriptor().checkCompatible(remote);
        } catch (TransferException e) {
            if (e.kind() == TransferException.Kind.INCOMPATIBLE_PEER) {
                throw EngineException.failedPrecondition("RDMA handshake failed: " + e.getMessage());
            }
            throw EngineException.badRequest("RDMA handshake failed: " + e.getMessage());
        }
        if (incarnations.size() >= MAX_TRACKED_PEERS && !incarnations.containsKey(requester.address())) {
            incarnations.clear(); // bounded against a flood of invented requester ids; only the early end is lost
        }
        Long previous = incarnations.put(requester.address(), remote.instanceId());
        if (previous != null && previous != remote.instanceId()) {
            int ended = engine.releaseTransferLocksOf(requester.address());
            LOG.info(
                    "peer {} handshook as a new incarnation: {} transfer lock sessions of the previous one ended",
                    requester,
                    ended);
        }
        try {
            transfers
                    .connect(requester, remote, connectTimeoutNanos)
                    .get(connectTimeoutNanos + 1_000_000_000L, TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw EngineException.unavailable("RDMA handshake failed: connecting back to " + requester + ": "
                    + Objects.requireNonNull(e.getCause(), "a failed connect carries its cause")
                            .getMessage());
        } catch (TimeoutException e) {
            throw EngineException.unavailable("RDMA handshake failed: connecting back to " + requester + " timed out");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw EngineException.unavailable("RDMA handshake failed: interrupted");
        } catch (TransferException e) {
            throw EngineException.unavailable("RDMA handshake failed: " + e.getMessage());
        }
        meters.peerSeen(requester);
        LOG.info("peer {} connected ({} lanes)", requester, remote.lanes());
        return RdmaHandshakeResponse.newBuilder()
                .setStatus(OK)
                .setHandshakeMetadata(
                        ByteString.copyFrom(transfers.localDescriptor().encode()))
                .build();
    }

    QueryBlocksForTransferResponse queryBlocks(QueryBlocksForTransferRequest r) {
        if (r.getBlockHashesCount() > MAX_HASHES) {
            throw EngineException.badRequest(
                    "QueryBlocksForTransfer: " + r.getBlockHashesCount() + " block hashes, more than " + MAX_HASHES);
        }
        String requester = r.getRequesterId();
        List<byte[]> hashes = new ArrayList<>(r.getBlockHashesCount());
        for (ByteString h : r.getBlockHashesList()) {
            hashes.add(h.toByteArray());
        }
        TransferGrant grant = engine.lockForTransfer(r.getNamespace(), hashes, requester);
        QueryBlocksForTransferResponse.Builder out = QueryBlocksForTransferResponse.newBuilder()
                .setStatus(OK)
                .setTransferSessionId(grant.sessionId())
                .setLockTimeoutSecs((int) Math.min(grant.lockTimeoutSeconds(), 0xFFFFFFFFL));
        // taken while the lock holds the blocks, over the bytes the peer's gets will read (decision 0031 §3)
        int[] crcs =
                checksums && TransferChecksums.asked(r) ? new int[grant.blocks().size()] : null;
        int index = 0;
        for (TransferGrant.Block b : grant.blocks()) {
            if (crcs != null) {
                WireChecksum crc = new WireChecksum();
                for (TransferGrant.Slot s : b.slots()) {
                    crc.add(s.kAddress(), s.kBytes()).add(s.vAddress(), s.vBytes());
                }
                crcs[index++] = crc.value();
            }
            TransferBlockInfo.Builder block =
                    TransferBlockInfo.newBuilder().setBlockHash(ByteString.copyFrom(b.hash()));
            for (TransferGrant.Slot s : b.slots()) {
                block.addSlots(TransferSlotInfo.newBuilder()
                        .setKPtr(s.kAddress())
                        .setKSize(s.kBytes())
                        .setVPtr(s.vAddress())
                        .setVSize(s.vBytes())
                        .setNumaNode(NUMA_UNKNOWN));
            }
            out.addBlocks(block);
        }
        if (crcs != null) {
            TransferChecksums.attach(out, crcs);
        }
        return out.build();
    }

    ReleaseTransferLockResponse releaseLock(ReleaseTransferLockRequest r) {
        int released = engine.releaseTransferLock(r.getTransferSessionId());
        return ReleaseTransferLockResponse.newBuilder()
                .setStatus(OK)
                .setReleasedBlocks(released)
                .build();
    }

    private static PeerId requester(String id) {
        try {
            return new PeerId(id);
        } catch (IllegalArgumentException e) {
            throw EngineException.badRequest("RDMA handshake failed: requester_id: " + e.getMessage());
        }
    }
}
