package io.pegaflow.transfer.ucx;

import io.pegaflow.transfer.Direction;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.RegisteredRegion;
import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.TransferException.Kind;
import io.pegaflow.transfer.lane.Lane;
import io.pegaflow.transfer.lane.LanePart;
import java.nio.ByteBuffer;
import java.util.List;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxException;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;

/**
 * A lane on one {@code UcpWorker}. Operations are issued as implicit (callback-free) gets and puts and completed by one
 * endpoint flush per part, so a 1024-operation part costs one Java callback, not 1024. The flush completes only when
 * every earlier operation on the endpoint has completed, which for a get means its bytes are in local memory; except
 * when the endpoint fails under it: UCX 1.13 then reports a pending flush as a success while it purges the endpoint
 * (the emulated gets of the TCP transport), which is why the lane confirms a success only after the progress step that
 * reported it ({@code Lane.confirmFlushed}).
 *
 * <p>An endpoint with this lane's operations outstanding is closed forced ({@code ucp_ep_close_nbx} with FORCE) wherever
 * UCX allows it (endpoints with peer error handling): outstanding operations complete as cancelled, the peer is not
 * waited for, so a dead or stopped peer cannot hold a close. An idle one is closed with a flush (see
 * {@link #beginClose}). A close that returns an error status has ended: the endpoint is gone and is never closed
 * again. Remote keys are destroyed after the close completes: UCX asks for "after all operations using it are
 * flushed", which a completed close guarantees, and 1.13's {@code ucp_rkey_destroy} touches only the worker's memory
 * pool, not the endpoint.
 */
final class UcxLane extends Lane<UcxEndpoint> {
    /** Progress calls per cycle while they keep finding events; bounded so commands are drained between them. */
    private static final int PROGRESS_CALLS = 8;
    /** How long a closing worker may take to send what it has queued. */
    private static final long QUIESCE_NANOS = 2_000_000_000L;
    /** The close handle of an endpoint whose close ended at once with an error status: closed all the same. */
    private static final Object CLOSED_WITH_ERROR = new Object();

    private final UcpWorker worker;
    private final byte[] address;
    private final boolean peerErrorHandling;

    UcxLane(int index, UcpWorker worker, boolean peerErrorHandling) {
        super(index);
        this.worker = worker;
        this.peerErrorHandling = peerErrorHandling;
        ByteBuffer a = worker.getAddress();
        this.address = new byte[a.remaining()];
        a.get(address);
    }

    @Override
    public byte[] address() {
        return address.clone();
    }

    @Override
    protected UcxEndpoint open(
            PeerId peer, byte[] peerLaneAddress, List<RegisteredRegion> peerRegions, Failure failure) {
        // JUCX reads worker addresses and packed rkeys through JNI GetDirectBufferAddress: direct buffers of a few
        // hundred bytes, control plane only
        ByteBuffer peerAddress = direct(peerLaneAddress);
        UcpEndpointParams params = new UcpEndpointParams()
                .setUcpAddress(peerAddress)
                .setName("pega " + peer + " lane " + index)
                .setErrorHandler((ep, status, message) -> failure.failed(new TransferException(
                        Kind.PEER_FAILED,
                        "lane " + index + ": endpoint to " + peer + " failed: " + message + " (UCX status " + status
                                + ")")));
        if (peerErrorHandling) {
            params.setPeerErrorHandlingMode();
        }
        UcpEndpoint endpoint;
        try {
            endpoint = worker.newEndpoint(params);
        } catch (UcxException e) {
            throw new TransferException(
                    Kind.PEER_FAILED,
                    "lane " + index + ": cannot create an endpoint to " + peer + ": " + e.getMessage(),
                    e);
        }
        UcpRemoteKey[] rkeys = new UcpRemoteKey[peerRegions.size()];
        try {
            for (int i = 0; i < rkeys.length; i++) {
                rkeys[i] = endpoint.unpackRemoteKey(direct(peerRegions.get(i).packedRkey()));
            }
        } catch (UcxException e) {
            closeNow(endpoint, rkeys);
            throw new TransferException(
                    Kind.INVALID_DESCRIPTOR,
                    "lane " + index + ": " + peer + " sent a remote key UCX cannot unpack: " + e.getMessage(),
                    e);
        }
        return new UcxEndpoint(endpoint, rkeys, peerAddress, failure);
    }

    @Override
    protected void probe(UcxEndpoint ep, Runnable ready, Failure failure) {
        ep.endpoint().flushNonBlocking(new UcxCallback() {
            @Override
            public void onSuccess(UcpRequest request) {
                ready.run();
            }

            @Override
            public void onError(int status, String message) {
                failure.failed(new TransferException(
                        Kind.PEER_FAILED,
                        "lane " + index + ": peer unreachable: " + message + " (UCX status " + status + ")"));
            }
        });
    }

    @Override
    protected void issue(UcxEndpoint ep, LanePart part, int j) {
        // OFF-HEAP: both ranges were checked against the registered regions of their side at submit; UCX reads and
        // writes them until the part's flush completes or the endpoint is closed, and the part keeps its batch's
        // future (and so the memory's owner) waiting until then
        UcpRemoteKey rkey = ep.rkeys()[part.remoteRegion(j)];
        if (part.direction() == Direction.GET) {
            ep.endpoint()
                    .getNonBlockingImplicit(part.remoteAddress(j), rkey, part.localAddress(j), part.lengthBytes(j));
        } else {
            ep.endpoint()
                    .putNonBlockingImplicit(part.localAddress(j), part.lengthBytes(j), part.remoteAddress(j), rkey);
        }
    }

    @Override
    protected void issued(UcxEndpoint ep, LanePart part) {
        ep.endpoint().flushNonBlocking(new UcxCallback() {
            @Override
            public void onSuccess(UcpRequest request) {
                part.succeed();
            }

            @Override
            public void onError(int status, String message) {
                TransferException cause = new TransferException(
                        Kind.PEER_FAILED,
                        "lane " + index + ": flush failed: " + message + " (UCX status " + status + ")");
                part.fail(cause);
                ep.failure().failed(cause);
            }
        });
    }

    @Override
    protected Object beginClose(UcxEndpoint ep, boolean gentle) {
        // A forced close is what a peer that died or stopped needs: outstanding operations are cancelled and the peer
        // is not waited for. It is also what UCX 1.13.1 faults on (SIGSEGV in libucp, seen in 3 of 6 runs of the
        // contract's peer-closed-mid-data case) when this node closes an endpoint on which its worker still answers
        // the peer's emulated gets (the TCP transport's RMA: this node serving a fetch). So an endpoint this node
        // closes of its own accord with nothing of the lane outstanding is closed with a flush, which UCX turns into a
        // cancel by itself if the transport fails. The shared-memory transports have no peer error handling and allow
        // only the flushing close; their operations are completed by this process's own CPU, so it cannot wait on the
        // peer.
        try {
            return peerErrorHandling && !gentle
                    ? ep.endpoint().closeNonBlockingForce()
                    : ep.endpoint().closeNonBlockingFlush();
        } catch (UcxException e) {
            // ucp_ep_close_nbx returning an error status means the close is over: "resources are released and the
            // endpoint can no longer be used" (ucp.h). Closing it again would touch freed memory.
            return CLOSED_WITH_ERROR;
        }
    }

    @Override
    protected boolean isClosed(Object closeHandle) {
        return closeHandle == CLOSED_WITH_ERROR || ((UcpRequest) closeHandle).isCompleted();
    }

    @Override
    protected void afterClose(UcxEndpoint ep) {
        for (UcpRemoteKey rkey : ep.rkeys()) {
            if (rkey != null) {
                rkey.close();
            }
        }
    }

    @Override
    protected int progress() {
        int events = 0;
        try {
            for (int i = 0; i < PROGRESS_CALLS; i++) {
                int n = worker.progress();
                if (n == 0) {
                    break;
                }
                events += n;
            }
        } catch (Exception e) {
            throw new TransferException(Kind.PEER_FAILED, "lane " + index + ": worker progress failed", e);
        }
        return events;
    }

    /**
     * Lets the worker finish what it still has queued (wire-up replies to peers that connected to it) before it is
     * destroyed: UCX 1.13.1 asserts in {@code ucp_worker_destroy} when it purges a pending wire-up reply and aborts the
     * JVM ({@code ucp_request.c:684}, seen when a peer connected while this node shut down). Bounded: a peer that is gone
     * fails the flush, one that is stopped is given up on at the deadline.
     */
    @Override
    protected void release() {
        boolean[] flushed = {false};
        worker.flushNonBlocking(new UcxCallback() {
            @Override
            public void onSuccess(UcpRequest request) {
                flushed[0] = true;
            }

            @Override
            public void onError(int status, String message) {
                flushed[0] = true;
            }
        });
        long deadline = System.nanoTime() + QUIESCE_NANOS;
        while (!flushed[0] && System.nanoTime() - deadline < 0) {
            progress();
        }
        worker.close();
    }

    /** Closes an endpoint that never carried an operation, on this thread: it was just created. */
    private void closeNow(UcpEndpoint endpoint, UcpRemoteKey[] rkeys) {
        UcpRequest close = peerErrorHandling ? endpoint.closeNonBlockingForce() : endpoint.closeNonBlockingFlush();
        for (int spins = 0; !close.isCompleted() && spins < 1_000_000; spins++) {
            progress();
        }
        for (UcpRemoteKey rkey : rkeys) {
            if (rkey != null) {
                rkey.close();
            }
        }
    }

    private static ByteBuffer direct(byte[] bytes) {
        ByteBuffer b = ByteBuffer.allocateDirect(bytes.length);
        b.put(bytes).flip();
        return b;
    }
}
