package io.pegaflow.transfer.loopback;

import io.pegaflow.sys.Posix;
import io.pegaflow.transfer.Direction;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.RegisteredRegion;
import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.TransferException.Kind;
import io.pegaflow.transfer.lane.Lane;
import io.pegaflow.transfer.lane.LanePart;
import java.util.Arrays;
import java.util.List;

/**
 * A lane whose "network" is memcpy between nodes of one JVM. Operations run when issued, so a part completes in the
 * cycle its last operation was issued in; a part to a stopped node stays in flight until its deadline, as one to a
 * stopped UCX peer does; a part to a node that died fails its connection.
 */
final class LoopbackLane extends Lane<LoopbackLane.Endpoint> {
    private final byte[] address;

    LoopbackLane(int index, LoopbackNode self) {
        super(index);
        this.address = self.laneAddress(index);
    }

    /** A connection's view of the peer node; {@code broken} once a copy found it dead. */
    static final class Endpoint {
        final LoopbackNode node;
        final Failure failure;
        boolean broken;

        Endpoint(LoopbackNode node, Failure failure) {
            this.node = node;
            this.failure = failure;
        }
    }

    @Override
    public byte[] address() {
        return address.clone();
    }

    @Override
    protected Endpoint open(PeerId peer, byte[] peerLaneAddress, List<RegisteredRegion> peerRegions, Failure failure) {
        LoopbackNode node = LoopbackNode.find(LoopbackNode.idOf(peerLaneAddress));
        if (node == null || !node.isAlive()) {
            throw new TransferException(Kind.PEER_FAILED, "lane " + index + ": no live loopback node for " + peer);
        }
        for (int i = 0; i < peerRegions.size(); i++) {
            if (!Arrays.equals(peerRegions.get(i).packedRkey(), LoopbackNode.regionToken(node.id, i))) {
                throw new TransferException(
                        Kind.INVALID_DESCRIPTOR,
                        "lane " + index + ": region " + i + " of " + peer + " has a foreign key");
            }
        }
        return new Endpoint(node, failure);
    }

    @Override
    protected void probe(Endpoint ep, Runnable ready, Failure failure) {
        if (!ep.node.isAlive()) {
            failure.failed(new TransferException(Kind.PEER_FAILED, "lane " + index + ": peer node is gone"));
        } else if (ep.node.isResponsive()) {
            ready.run();
        }
    }

    @Override
    protected void issue(Endpoint ep, LanePart part, int j) {
        if (!ep.node.isResponsive() || ep.broken) {
            return;
        }
        long local = part.localAddress(j);
        long remote = part.remoteAddress(j);
        long length = part.lengthBytes(j);
        // OFF-HEAP: both ranges were checked against the registered regions at submit; the peer's memory stays mapped
        // while its node is alive, and its death waits for this copy (whileAlive holds the node's read lock)
        boolean copied = ep.node.whileAlive(() -> {
            if (part.direction() == Direction.GET) {
                Posix.memcpy(local, remote, length);
            } else {
                Posix.memcpy(remote, local, length);
            }
        });
        ep.broken = !copied;
    }

    @Override
    protected void issued(Endpoint ep, LanePart part) {
        if (ep.broken) {
            TransferException cause = new TransferException(Kind.PEER_FAILED, "lane " + index + ": peer node is gone");
            part.fail(cause);
            ep.failure.failed(cause);
        } else if (ep.node.isResponsive()) {
            part.succeed();
        }
    }

    @Override
    protected Object beginClose(Endpoint ep, boolean gentle) {
        return true; // nothing to wait for: a loopback endpoint holds no operation in flight
    }

    @Override
    protected boolean isClosed(Object closeHandle) {
        return true;
    }

    @Override
    protected void afterClose(Endpoint ep) {}

    @Override
    protected int progress() {
        return 0;
    }

    @Override
    protected void release() {}
}
