package io.pegaflow.metaserver.grpc;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.MeterRegistry;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.QueryPrefixBlocksResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pega.metaserver.calls.*} on a real metaserver with one index worker: while that worker is held busy, a call
 * that waits behind it longer than {@code max-queue-wait-ms} is shed with {@code RESOURCE_EXHAUSTED} and counted under
 * its method, and the worker serves calls again once it is free. (The skip of a call cancelled while queued is
 * {@link ExpiredCallInterceptorTest}'s.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetaServerSheddingTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    /** Occupies one worker until {@link #release}; {@link #running} opens once it holds the worker. */
    private static final class Hold implements Runnable {
        final CountDownLatch running = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void run() {
            running.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void shouldShedACallThatWaitedPastTheLimitAndCountIt() throws Exception {
        try (MetaserverTestApp app = MetaserverTestApp.start(
                dir,
                new AdjustableClock(),
                "--logging.level.root=WARN",
                "--pega.metaserver.calls.workers=1",
                "--pega.metaserver.calls.db-workers=1",
                "--pega.metaserver.calls.queue=16",
                "--pega.metaserver.calls.max-queue-wait-ms=100")) {
            MeterRegistry meters = app.bean(MeterRegistry.class);
            CallWorkers workers = app.bean(CallWorkers.class);
            assertThat(workers.count()).isEqualTo(1);
            assertThat(shed(meters, "query_prefix_blocks"))
                    .as("every method's series exists from the start")
                    .isZero();
            assertThat(app.stub().queryPrefixBlocks(query("ns", h(1))).getNodesCount())
                    .as("served while the worker is free")
                    .isZero();

            MetaServerGrpc.MetaServerFutureStub stub = MetaServerGrpc.newFutureStub(app.channel());
            ListenableFuture<QueryPrefixBlocksResponse> late = heldPastTheLimit(
                    workers, () -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).queryPrefixBlocks(query("ns", h(2))));
            assertThat(code(late)).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(shed(meters, "query_prefix_blocks")).isEqualTo(1);
            assertThat(skipped(meters, "query_prefix_blocks")).isZero();
            assertThat(shed(meters, "heartbeat_node")).isZero();

            assertThat(app.stub().queryPrefixBlocks(query("ns", h(4))).getNodesCount())
                    .as("served again once the worker is free")
                    .isZero();
            assertThat(shed(meters, "query_prefix_blocks")).isEqualTo(1);
        }
    }

    /**
     * Starts a call while the only index worker is held, and holds it past the 100 ms limit for each of the call's
     * turns. gRPC runs a unary call in up to two turns on its executor, the start and then (once the start asked for
     * it) the request, and the half-close's turn is the one whose wait counts; whether the request joins the start's
     * turn is a race, so both are held: the start behind a first hold, the request behind a second queued after it.
     */
    private static <T> ListenableFuture<T> heldPastTheLimit(CallWorkers workers, Supplier<ListenableFuture<T>> start)
            throws Exception {
        Hold first = new Hold();
        workers.executor().execute(first);
        assertThat(first.running.await(10, TimeUnit.SECONDS)).isTrue();
        // tasks of earlier calls (their context's closing) may still arrive: the queue is empty and stays so first
        await().atMost(WAIT).pollDelay(Duration.ofMillis(200)).until(() -> workers.queued() == 0);
        ListenableFuture<T> call = start.get();
        await().atMost(WAIT).until(() -> workers.queued() >= 1); // the start's turn
        Hold second = new Hold();
        workers.executor().execute(second);
        Thread.sleep(300);
        first.release.countDown();
        assertThat(second.running.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(300);
        second.release.countDown();
        return call;
    }

    private static double shed(MeterRegistry meters, String method) {
        return meters.get("pegaflow_metaserver_calls_shed")
                .tag("method", method)
                .counter()
                .count();
    }

    private static double skipped(MeterRegistry meters, String method) {
        return meters.get("pegaflow_metaserver_calls_skipped")
                .tag("method", method)
                .counter()
                .count();
    }

    private static Status.Code code(ListenableFuture<?> call) throws InterruptedException {
        try {
            call.get(20, TimeUnit.SECONDS);
            throw new AssertionError("the call was served");
        } catch (ExecutionException e) {
            return ((StatusRuntimeException) e.getCause()).getStatus().getCode();
        } catch (TimeoutException e) {
            throw new AssertionError("the call did not end", e);
        }
    }
}
