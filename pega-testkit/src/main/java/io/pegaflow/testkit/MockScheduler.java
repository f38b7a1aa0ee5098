package io.pegaflow.testkit;

import com.google.protobuf.ByteString;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.HealthResponse;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.QueryRequest;
import io.pegaflow.proto.QueryResponse;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.proto.ReleaseResponse;
import io.pegaflow.proto.SessionRequest;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Plays the scheduler role of the reference vLLM connector ({@code python/pegaflow/connector/scheduler.py} of
 * novitalabs/pegaflow v0.22.4) against a real server: one {@code Session} per instance, {@code QueryPrefetch} and
 * {@code Release}, on its own channel (the reference uses separate clients for scheduler and workers).
 *
 * <p>Because sealing after a Save is asynchronous, {@link #awaitSealed} polls until every hash hits, releasing each
 * lease it receives, so waiting leaves no lease behind.
 *
 * <p>Ownership: the scheduler owns its channel and every {@link SessionHandle} it opened; {@link #close()} cancels
 * those sessions (the server then cleans their instances up) and shuts the channel. Leases returned by queries belong
 * to the caller: load them with world_size workers or {@link #release} them.
 *
 * <p>Thread-safety: every method may be called from any thread; {@link #close()} is idempotent.
 */
public final class MockScheduler implements AutoCloseable {
    private final ManagedChannel channel;
    private final EngineGrpc.EngineBlockingStub stub;
    private final Duration rpcTimeout;
    private final List<SessionHandle> sessions = new CopyOnWriteArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private MockScheduler(String host, int port, Duration rpcTimeout, ChannelCredentials transport) {
        this.channel = TestkitChannels.open(host, port, transport);
        this.stub = EngineGrpc.newBlockingStub(channel);
        this.rpcTimeout = rpcTimeout;
    }

    /** A scheduler with a 30 s deadline on each unary RPC its helpers send. */
    public static MockScheduler connect(String host, int port) {
        return connect(host, port, Duration.ofSeconds(30));
    }

    public static MockScheduler connect(String host, int port, Duration rpcTimeout) {
        return new MockScheduler(host, port, rpcTimeout, InsecureChannelCredentials.create());
    }

    /** Over {@code transport}: TLS, with a client certificate, for a listener that requires one. */
    public static MockScheduler connect(String host, int port, ChannelCredentials transport) {
        return new MockScheduler(host, port, Duration.ofSeconds(30), transport);
    }

    /** The raw blocking stub, without a deadline, for negative tests. */
    public EngineGrpc.EngineBlockingStub stub() {
        return stub;
    }

    public ManagedChannel channel() {
        return channel;
    }

    /** Opens a Session stream; close the handle (or this scheduler) to cancel it. */
    public SessionHandle openSession(String instanceId, String namespace, int tpSize, int worldSize) {
        SessionRequest request = SessionRequest.newBuilder()
                .setInstanceId(instanceId)
                .setNamespace(namespace)
                .setTpSize(tpSize)
                .setWorldSize(worldSize)
                .build();
        SessionHandle handle = SessionHandle.open(channel, request);
        sessions.add(handle);
        return handle;
    }

    /**
     * One {@code QueryPrefetch}.
     *
     * @throws StatusRuntimeException when the server rejects it
     */
    public QueryResponse query(String instanceId, List<ByteString> hashes, String reqId) {
        QueryRequest request = QueryRequest.newBuilder()
                .setInstanceId(instanceId)
                .addAllBlockHashes(hashes)
                .setReqId(reqId)
                .build();
        return deadlineStub().queryPrefetch(request);
    }

    /**
     * One {@code QueryPrefetch} with the fields of later connectors: {@code group} (a hybrid state group's membership
     * query when {@code > 0}, pegaflow-llm 0.23.11+) and {@code waitForFullPrefix} (0.23.5+).
     *
     * @throws StatusRuntimeException when the server rejects it
     */
    public QueryResponse query(
            String instanceId, List<ByteString> hashes, String reqId, int group, boolean waitForFullPrefix) {
        QueryRequest request = QueryRequest.newBuilder()
                .setInstanceId(instanceId)
                .addAllBlockHashes(hashes)
                .setReqId(reqId)
                .setGroupId(group)
                .setWaitForFullPrefix(waitForFullPrefix)
                .build();
        return deadlineStub().queryPrefetch(request);
    }

    /** As {@link #queryUntilReady(String, List, String, Duration)}, with a group and {@code wait_for_full_prefix}. */
    public QueryReady queryUntilReady(
            String instanceId,
            List<ByteString> hashes,
            String reqId,
            int group,
            boolean waitForFullPrefix,
            Duration timeout) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        while (true) {
            QueryResponse response = query(instanceId, hashes, reqId, group, waitForFullPrefix);
            if (response.hasReady()) {
                return response.getReady();
            }
            if (System.nanoTime() - deadlineNs >= 0) {
                throw new TestkitTimeoutException("query " + reqId + " still loading after " + timeout);
            }
            pause();
        }
    }

    /**
     * Polls a membership query of state group {@code group} until at least {@code expectedHits} of {@code hashes}
     * hit, releasing every lease it receives.
     *
     * @return the hit positions of the answer that satisfied the wait
     * @throws TestkitTimeoutException when fewer hit after {@code timeout}
     */
    public List<Integer> awaitMembers(
            String instanceId, int group, List<ByteString> hashes, int expectedHits, Duration timeout) {
        String reqId = "testkit-members-" + UUID.randomUUID();
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        while (true) {
            QueryReady ready = query(instanceId, hashes, reqId, group, false).getReady();
            releaseQuietly(ready.getLease());
            if (ready.getHitPositionsCount() >= expectedHits) {
                return ready.getHitPositionsList();
            }
            if (System.nanoTime() - deadlineNs >= 0) {
                throw new TestkitTimeoutException("expected " + expectedHits + " members of group " + group + " for "
                        + instanceId + ", saw " + ready.getHitPositionsCount() + " after " + timeout);
            }
            pause();
        }
    }

    /**
     * Queries with the same {@code reqId} every 10 ms while the answer is {@code Loading}, like vLLM retrying next
     * step.
     *
     * @throws TestkitTimeoutException when still loading after {@code timeout}
     */
    public QueryReady queryUntilReady(String instanceId, List<ByteString> hashes, String reqId, Duration timeout) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        while (true) {
            QueryResponse response = query(instanceId, hashes, reqId);
            if (response.hasReady()) {
                return response.getReady();
            }
            if (System.nanoTime() - deadlineNs >= 0) {
                throw new TestkitTimeoutException("query " + reqId + " still loading after " + timeout);
            }
            pause();
        }
    }

    /**
     * Polls until every hash is a prefix hit, releasing each lease on the way.
     *
     * @return the number of hits (the number of hashes)
     * @throws TestkitTimeoutException when fewer hit after {@code timeout}
     */
    public long awaitSealed(String instanceId, List<ByteString> hashes, Duration timeout) {
        return awaitHits(instanceId, hashes, hashes.size(), timeout);
    }

    /**
     * Polls (one req_id for the whole wait, Loading answers included) until at least {@code expectedHits} hit,
     * releasing every lease it receives, including the last.
     *
     * @return the hit count that satisfied the wait
     * @throws TestkitTimeoutException when fewer hit after {@code timeout}
     */
    public long awaitHits(String instanceId, List<ByteString> hashes, long expectedHits, Duration timeout) {
        String reqId = "testkit-await-" + UUID.randomUUID();
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        long lastHits = -1;
        while (true) {
            QueryResponse response = query(instanceId, hashes, reqId);
            if (response.hasReady()) {
                QueryReady ready = response.getReady();
                releaseQuietly(ready.getLease());
                lastHits = ready.getNumHitBlocks();
                if (lastHits >= expectedHits) {
                    return lastHits;
                }
            }
            if (System.nanoTime() - deadlineNs >= 0) {
                throw new TestkitTimeoutException("expected " + expectedHits + " hits for " + instanceId + ", last "
                        + (lastHits < 0 ? "answer was Loading" : "saw " + lastHits) + " after " + timeout);
            }
            pause();
        }
    }

    /**
     * Polls until a query fails, e.g. until a closed Session's cleanup made the instance unknown; leases of
     * successful answers are released.
     *
     * @return the failure status
     * @throws TestkitTimeoutException when queries still succeed after {@code timeout}
     */
    public Status awaitQueryFailure(String instanceId, List<ByteString> hashes, Duration timeout) {
        String reqId = "testkit-await-" + UUID.randomUUID();
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                QueryResponse response = query(instanceId, hashes, reqId);
                if (response.hasReady()) {
                    releaseQuietly(response.getReady().getLease());
                }
            } catch (StatusRuntimeException e) {
                return e.getStatus();
            }
            if (System.nanoTime() - deadlineNs >= 0) {
                throw new TestkitTimeoutException("queries for " + instanceId + " still succeed after " + timeout);
            }
            pause();
        }
    }

    /**
     * Releases a lease.
     *
     * @throws StatusRuntimeException when the server rejects it (FAILED_PRECONDITION for unknown leases)
     */
    public ReleaseResponse release(ByteString lease) {
        return deadlineStub()
                .release(ReleaseRequest.newBuilder().setLease(lease).build());
    }

    public HealthResponse health() {
        return deadlineStub().health(HealthRequest.getDefaultInstance());
    }

    /** Cancels the sessions this scheduler opened and shuts its channel; idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            sessions.forEach(SessionHandle::close);
        } finally {
            TestkitChannels.shutdown(channel);
        }
    }

    private void releaseQuietly(ByteString lease) {
        if (lease.isEmpty()) {
            return;
        }
        try {
            release(lease);
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.FAILED_PRECONDITION) {
                throw e;
            }
        }
    }

    private EngineGrpc.EngineBlockingStub deadlineStub() {
        return stub.withDeadlineAfter(rpcTimeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    private static void pause() {
        LockSupport.parkNanos(ReferenceHarness.POLL_INTERVAL.toNanos());
    }
}
