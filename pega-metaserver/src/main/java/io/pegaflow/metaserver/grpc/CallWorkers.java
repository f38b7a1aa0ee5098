package io.pegaflow.metaserver.grpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.agent.TaskAgents;
import io.pegaflow.proto.MetaServerGrpc;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The gRPC server's application threads: fixed sets of worker agents draining bounded queues, instead of gRPC's
 * default cached pool, which grew to thousands of threads on a saturated metaserver and spent the machine switching
 * between them. Index calls (Insert, Remove, QueryPrefix) are CPU only and run on {@code metaserver-grpc-i} (by
 * default two per core). HeartbeatNode and UnregisterNode write the database and run on their own
 * {@code metaserver-grpc-db-i} (by default as many as the connection pool), so a slow commit never holds up the index
 * calls queued behind it. The counts and the queue are {@code pega.metaserver.calls.*}.
 *
 * <p>When the queue is full the task runs on the thread that handed it over (a transport event loop): the event loop
 * stops reading while it works, so HTTP/2 flow control slows the clients down instead of the metaserver queueing
 * without bound. Nothing is dropped here: a gRPC callback that never runs would leave its call open.
 * {@link ExpiredCallInterceptor} drops the work of calls whose deadline passed while they waited, and sheds calls
 * that waited too long (the task that runs them says how long, {@link #waitedNanos}).
 */
final class CallWorkers implements AutoCloseable {

    private static final ThreadLocal<long[]> WAITED = ThreadLocal.withInitial(() -> new long[1]);

    private final TaskAgents workers;
    private final TaskAgents dbWorkers;
    private final int count;

    /**
     * @param count workers for the index calls
     * @param dbCount workers for the calls that write the database
     * @param queue tasks that may wait for each set of workers; past it the transport thread runs them
     */
    CallWorkers(int count, int dbCount, int queue, AgentGroup group) {
        this.count = count;
        this.workers = new TaskAgents("metaserver-grpc", count, queue, NanoClock.SYSTEM).start(group);
        this.dbWorkers = new TaskAgents("metaserver-grpc-db", dbCount, queue, NanoClock.SYSTEM).start(group);
    }

    /** The executor of the index calls, and of everything gRPC runs that belongs to no call. */
    Executor executor() {
        return timed(workers.orCallerRuns());
    }

    /** Heartbeat and Unregister on the database workers; every other call on {@link #executor()}'s. */
    ServerCallExecutorSupplier perCall() {
        Executor db = timed(dbWorkers.orCallerRuns());
        return new ServerCallExecutorSupplier() {
            @Override
            public <Q, R> @Nullable Executor getExecutor(ServerCall<Q, R> call, Metadata headers) {
                String method = call.getMethodDescriptor().getFullMethodName();
                return DB_METHODS.contains(method) ? db : null;
            }
        };
    }

    private static final Set<String> DB_METHODS = Set.of(
            MetaServerGrpc.getHeartbeatNodeMethod().getFullMethodName(),
            MetaServerGrpc.getUnregisterNodeMethod().getFullMethodName());

    private static Executor timed(Executor queue) {
        return task -> {
            long queuedAt = NanoClock.SYSTEM.nanoTime();
            queue.execute(() -> {
                long[] waited = WAITED.get();
                waited[0] = NanoClock.SYSTEM.nanoTime() - queuedAt;
                try {
                    task.run();
                } finally {
                    waited[0] = 0;
                }
            });
        };
    }

    /** How long the task running on this thread waited in the queue; 0 outside a worker's task. */
    static long waitedNanos() {
        return WAITED.get()[0];
    }

    /** For tests: runs {@code task} as if it had waited {@code nanos} in the queue. */
    static void runAsQueued(long nanos, Runnable task) {
        long[] waited = WAITED.get();
        waited[0] = nanos;
        try {
            task.run();
        } finally {
            waited[0] = 0;
        }
    }

    int count() {
        return count;
    }

    /** Tasks waiting for an index worker now. */
    int queued() {
        return workers.queued();
    }

    /** After the gRPC server stopped: finishes what is queued within 5 s each, runs the rest on this thread. */
    @Override
    public void close() {
        workers.close(5, TimeUnit.SECONDS);
        dbWorkers.close(5, TimeUnit.SECONDS);
    }
}
