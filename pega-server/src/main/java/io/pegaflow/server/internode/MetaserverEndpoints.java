package io.pegaflow.server.internode;

import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.pegaflow.edge.access.ClusterChannels;
import io.pegaflow.edge.rpc.DeadlineRequiredInterceptor;
import io.pegaflow.proto.MetaServerGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The metaserver addresses of {@code pega.metaserver.addr}, one channel each, and which one the client talks to. A
 * call that ends {@code UNAVAILABLE} (refused, reset, no route) or {@code DEADLINE_EXCEEDED} (a hung or partitioned
 * instance) moves the client to the next address, round robin; any other status is an answer from a live instance
 * and changes nothing. The client stays on the address that works (no fail-back), so instances behind one database
 * and one index are interchangeable. With one address this is the single channel it always was.
 *
 * <p>Thread-safe: the announcement agent and query callers may both report a failure; only the first report of a
 * given address moves on.
 */
final class MetaserverEndpoints implements AutoCloseable {

    /** One address and its stub. */
    record Endpoint(int index, String target, MetaServerGrpc.MetaServerBlockingStub stub) {}

    private final List<String> targets;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<Endpoint> endpoints = new ArrayList<>();
    private final AtomicInteger current = new AtomicInteger();

    /**
     * @param epochs reads every response's epoch and fence trailer, whichever instance answered
     * @param cluster plaintext or TLS, with the cluster credential the metaserver's node writes need when it has one
     */
    MetaserverEndpoints(List<String> targets, ClientInterceptor epochs, ClusterChannels cluster) {
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("pega.metaserver.addr: no address");
        }
        this.targets = List.copyOf(targets);
        for (String target : targets) {
            ManagedChannel channel = channel(cluster, target);
            channels.add(channel);
            endpoints.add(new Endpoint(
                    endpoints.size(),
                    target,
                    MetaServerGrpc.newBlockingStub(channel).withInterceptors(epochs)));
        }
    }

    private static ManagedChannel channel(ClusterChannels cluster, String target) {
        return cluster.forTarget(target)
                // every call sets its deadline; one that forgot fails in tests instead of hanging the agent
                .intercept(new DeadlineRequiredInterceptor())
                .build();
    }

    /** The address calls go to now. */
    Endpoint current() {
        return endpoints.get(current.get());
    }

    /** Every configured address, in order. */
    List<String> targets() {
        return targets;
    }

    /** Whether a call ending with {@code code} means the instance is gone rather than refusing. */
    static boolean unreachable(Status.Code code) {
        return code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED;
    }

    /**
     * Reports that a call to {@code failed} ended with {@code code}. Returns the endpoint to use next when this moved
     * the client on (another address exists and nobody moved already), else null.
     */
    @Nullable
    Endpoint failedOver(Endpoint failed, Status.Code code) {
        if (endpoints.size() < 2 || !unreachable(code)) {
            return null;
        }
        int next = (failed.index() + 1) % endpoints.size();
        return current.compareAndSet(failed.index(), next) ? endpoints.get(next) : null;
    }

    @Override
    public void close() {
        channels.forEach(ManagedChannel::shutdown);
        for (ManagedChannel channel : channels) {
            try {
                if (!channel.awaitTermination(1, TimeUnit.SECONDS)) {
                    channel.shutdownNow();
                }
            } catch (InterruptedException e) {
                channel.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
    }
}
