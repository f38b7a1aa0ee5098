package io.pegaflow.server.grpc;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeStage;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.agent.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Ends a call whose one request message has not arrived within {@code pega.grpc.incomplete-message-timeout} of its
 * headers (decision 0030 §3): grpc-java buffers a message's bytes until it is complete and never times that out, so a
 * sender that declares a large Save and stalls would hold the buffer for as long as its connection lives. Only methods
 * whose client sends exactly one message (unary, server-streaming) are watched; their service method runs only after
 * that message, so nothing else touches the call while it waits. A once-a-second ticker closes expired calls with
 * {@code DEADLINE_EXCEEDED}, which resets the stream and frees what it buffered.
 */
final class IncompleteMessageTimeout implements EdgeInterceptor, AutoCloseable {
    private static final int WAITING = 0;
    private static final int ARRIVED = 1;
    private static final int EXPIRED = 2;

    private final long timeoutNanos;
    private final String description;
    private final NanoClock clock;
    private final Map<Waiting, Long> deadlines = new ConcurrentHashMap<>();
    private final AgentRunner ticker;

    private static final class Waiting {
        final ServerCall<?, ?> call;
        final AtomicInteger state = new AtomicInteger(WAITING);

        Waiting(ServerCall<?, ?> call) {
            this.call = call;
        }
    }

    IncompleteMessageTimeout(Duration timeout, NanoClock clock) {
        this.timeoutNanos = timeout.toNanos();
        this.description = "no complete request message within " + timeout.toMillis()
                + " ms of the call's headers (pega.grpc.incomplete-message-timeout)";
        this.clock = clock;
        this.ticker = new Ticker(
                        "grpc-message-timeout",
                        clock,
                        List.of(Ticker.Tick.every("expire", 1, 1, TimeUnit.SECONDS, this::expire)))
                .start();
    }

    @Override
    public EdgeStage stage() {
        return EdgeStage.REQUEST;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        if (!call.getMethodDescriptor().getType().clientSendsOneMessage()) {
            return next.startCall(call, headers);
        }
        Waiting waiting = new Waiting(call);
        deadlines.put(waiting, clock.nanoTime() + timeoutNanos);
        ServerCall.Listener<Q> delegate = next.startCall(call, headers);
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
            @Override
            public void onMessage(Q message) {
                deadlines.remove(waiting);
                if (waiting.state.compareAndSet(WAITING, ARRIVED) || waiting.state.get() == ARRIVED) {
                    super.onMessage(message);
                }
            }

            @Override
            public void onHalfClose() {
                deadlines.remove(waiting);
                if (waiting.state.get() != EXPIRED) {
                    super.onHalfClose();
                }
            }

            @Override
            public void onCancel() {
                deadlines.remove(waiting);
                super.onCancel();
            }

            @Override
            public void onComplete() {
                deadlines.remove(waiting);
                super.onComplete();
            }
        };
    }

    private void expire() {
        long now = clock.nanoTime();
        List<Waiting> expired = new ArrayList<>();
        deadlines.forEach((waiting, deadline) -> {
            if (now - deadline >= 0) {
                expired.add(waiting);
            }
        });
        for (Waiting waiting : expired) {
            if (deadlines.remove(waiting) != null && waiting.state.compareAndSet(WAITING, EXPIRED)) {
                waiting.call.close(Status.DEADLINE_EXCEEDED.withDescription(description), new Metadata());
            }
        }
    }

    /** Calls waiting for their message now (tests, diagnostics). */
    int waiting() {
        return deadlines.size();
    }

    @Override
    public void close() {
        ticker.close();
    }
}
