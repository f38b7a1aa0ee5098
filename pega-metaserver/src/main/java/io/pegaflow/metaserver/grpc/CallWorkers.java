package io.pegaflow.metaserver.grpc;

import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.agent.TaskAgents;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC server's application threads: a fixed set of worker agents ({@code metaserver-grpc-i}) draining one
 * bounded queue, instead of gRPC's default cached pool, which grew to thousands of threads on a saturated metaserver
 * and spent the machine switching between them. Every call is CPU or a short database transaction, so a few workers
 * per core keep the cores busy; more only add contention.
 *
 * <p>When the queue is full the task runs on the thread that handed it over (a transport event loop): the event loop
 * stops reading while it works, so HTTP/2 flow control slows the clients down instead of the metaserver queueing
 * without bound. Nothing is dropped here: a gRPC callback that never runs would leave its call open.
 * {@link ExpiredCallInterceptor} drops the work of calls whose deadline passed while they waited.
 */
final class CallWorkers implements AutoCloseable {

    /** Tasks that may wait; past this the transport thread runs them itself. */
    static final int QUEUE = 4_096;

    private final TaskAgents workers;
    private final int count;

    CallWorkers(int count, AgentGroup group) {
        this.count = count;
        this.workers = new TaskAgents("metaserver-grpc", count, QUEUE, NanoClock.SYSTEM).start(group);
    }

    /** Two workers per core, at least four, so a few callers waiting on the database never idle the cores. */
    static int defaultCount(int cores) {
        return Math.max(4, 2 * cores);
    }

    Executor executor() {
        return workers.orCallerRuns();
    }

    int count() {
        return count;
    }

    /** After the gRPC server stopped: finishes what is queued within 5 s, runs the rest on this thread. */
    @Override
    public void close() {
        workers.close(5, TimeUnit.SECONDS);
    }
}
