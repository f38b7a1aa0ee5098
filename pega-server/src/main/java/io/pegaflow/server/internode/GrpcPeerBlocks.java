package io.pegaflow.server.internode;

import com.google.protobuf.ByteString;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.stub.StreamObserver;
import io.pegaflow.node.remote.PeerBlocks;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.proto.QueryBlocksForTransferResponse;
import io.pegaflow.proto.RdmaHandshakeRequest;
import io.pegaflow.proto.ReleaseTransferLockRequest;
import io.pegaflow.proto.ReleaseTransferLockResponse;
import io.pegaflow.proto.TransferBlockInfo;
import io.pegaflow.proto.TransferSlotInfo;
import io.pegaflow.proto.ext.TransferChecksums;
import io.pegaflow.transfer.PeerId;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The remote tier's {@link PeerBlocks} over the reference's P2P RPCs: {@code RdmaHandshake},
 * {@code QueryBlocksForTransfer} and {@code ReleaseTransferLock} on the peer's {@code Engine} service, through one
 * lazily connected channel per peer. It only translates: the tier checks what it uses of an answer.
 */
public final class GrpcPeerBlocks implements PeerBlocks {
    private static final Logger LOG = LoggerFactory.getLogger(GrpcPeerBlocks.class);

    private final PeerLinks links;

    /**
     * @param transport plaintext or TLS ({@code pega.cluster.ssl-bundle})
     * @param credential on every call: peers require the cluster credential on the transfer RPCs when they have one
     */
    public GrpcPeerBlocks(ChannelCredentials transport, ClientInterceptor credential) {
        this.links = new PeerLinks(transport, credential);
    }

    @Override
    public byte[] handshake(PeerId peer, String requesterId, byte[] descriptor, long timeoutNanos) {
        return links.blocking(peer, timeoutNanos)
                .rdmaHandshake(RdmaHandshakeRequest.newBuilder()
                        .setRequesterId(requesterId)
                        .setHandshakeMetadata(ByteString.copyFrom(descriptor))
                        .build())
                .getHandshakeMetadata()
                .toByteArray();
    }

    @Override
    public Grant lock(
            PeerId peer,
            String namespace,
            List<byte[]> hashes,
            String requesterId,
            boolean checksums,
            long timeoutNanos) {
        QueryBlocksForTransferRequest.Builder request = QueryBlocksForTransferRequest.newBuilder()
                .setNamespace(namespace)
                .setRequesterId(requesterId);
        for (byte[] h : hashes) {
            request.addBlockHashes(ByteString.copyFrom(h));
        }
        if (checksums) {
            TransferChecksums.ask(request);
        }
        return grant(links.blocking(peer, timeoutNanos).queryBlocksForTransfer(request.build()));
    }

    /**
     * The answer as the tier reads it; {@code lock_timeout_secs} is unsigned on the wire, and the checksums ride in an
     * extension field a reference peer never sends.
     */
    static Grant grant(QueryBlocksForTransferResponse response) {
        List<LockedBlock> blocks = new ArrayList<>(response.getBlocksCount());
        for (TransferBlockInfo b : response.getBlocksList()) {
            List<Slot> slots = new ArrayList<>(b.getSlotsCount());
            for (TransferSlotInfo s : b.getSlotsList()) {
                slots.add(new Slot(s.getKPtr(), s.getKSize(), s.getVPtr(), s.getVSize()));
            }
            blocks.add(new LockedBlock(b.getBlockHash().toByteArray(), slots));
        }
        return new Grant(
                response.getTransferSessionId(),
                Integer.toUnsignedLong(response.getLockTimeoutSecs()),
                blocks,
                TransferChecksums.read(response));
    }

    @Override
    public void release(PeerId peer, String session, long timeoutNanos) {
        try {
            links.async(peer, timeoutNanos)
                    .releaseTransferLock(
                            ReleaseTransferLockRequest.newBuilder()
                                    .setTransferSessionId(session)
                                    .build(),
                            new StreamObserver<ReleaseTransferLockResponse>() {
                                @Override
                                public void onNext(ReleaseTransferLockResponse r) {}

                                @Override
                                public void onError(Throwable t) {
                                    LOG.debug(
                                            "ReleaseTransferLock to {} failed (the lock expires): {}",
                                            peer,
                                            t.toString());
                                }

                                @Override
                                public void onCompleted() {}
                            });
        } catch (RuntimeException e) {
            LOG.debug("ReleaseTransferLock to {} not sent: {}", peer, e.toString());
        }
    }

    @Override
    public void close() {
        links.close();
    }
}
