package io.pegaflow.testkit;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.SessionEvent;
import io.pegaflow.proto.SessionRequest;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One open {@code Session} stream, as the reference scheduler holds it: request sent and half-closed, responses never
 * read by the connector. {@link #close()} cancels the stream, which is how a test plays "the scheduler went away"; the
 * server then cleans the instance up.
 *
 * <p>The server may process the request after a quick cancel, or not at all; tests that need the session installed
 * before they cancel should {@link #awaitHeaders(Duration) wait for response headers} (tonic sends them as soon as the
 * handler returns its stream; a server that sends none leaves nothing to wait on).
 *
 * <p>Ownership: the {@link MockScheduler} that opened it also cancels it on its own close. Thread-safe.
 */
public final class SessionHandle implements AutoCloseable {
    private final String instanceId;
    private final ClientCall<SessionRequest, SessionEvent> call;
    private final CompletableFuture<Metadata> headers = new CompletableFuture<>();
    private final CompletableFuture<Status> closed = new CompletableFuture<>();
    private final AtomicInteger events = new AtomicInteger();
    private boolean cancelled;

    private SessionHandle(String instanceId, ClientCall<SessionRequest, SessionEvent> call) {
        this.instanceId = instanceId;
        this.call = call;
    }

    static SessionHandle open(Channel channel, SessionRequest request) {
        ClientCall<SessionRequest, SessionEvent> call =
                channel.newCall(EngineGrpc.getSessionMethod(), CallOptions.DEFAULT);
        SessionHandle handle = new SessionHandle(request.getInstanceId(), call);
        synchronized (handle) {
            call.start(handle.new Listener(), new Metadata());
            call.request(1);
            call.sendMessage(request);
            call.halfClose();
        }
        return handle;
    }

    public String instanceId() {
        return instanceId;
    }

    /** True when response headers arrived within {@code timeout} (the server accepted the stream). */
    public boolean awaitHeaders(Duration timeout) {
        return await(headers, timeout).isPresent();
    }

    /** The status the stream ended with, if it ended within {@code timeout}; empty while it is still open. */
    public Optional<Status> awaitClosed(Duration timeout) {
        return await(closed, timeout);
    }

    /** False once the stream ended, by {@link #close()} or by the server. */
    public boolean isOpen() {
        return !closed.isDone();
    }

    /** Messages the server sent on the stream; the reference never sends any. */
    public int eventsReceived() {
        return events.get();
    }

    /** Cancels the stream (client-side CANCELLED); idempotent. */
    @Override
    public synchronized void close() {
        if (!cancelled) {
            cancelled = true;
            call.cancel("session closed by MockScheduler", null);
        }
    }

    private static <T> Optional<T> await(CompletableFuture<T> future, Duration timeout) {
        try {
            return Optional.of(future.get(timeout.toNanos(), TimeUnit.NANOSECONDS));
        } catch (TimeoutException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    private final class Listener extends ClientCall.Listener<SessionEvent> {
        @Override
        public void onHeaders(Metadata metadata) {
            headers.complete(metadata);
        }

        @Override
        public void onMessage(SessionEvent message) {
            events.incrementAndGet();
            synchronized (SessionHandle.this) {
                if (!cancelled) {
                    call.request(1);
                }
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            closed.complete(status);
        }
    }
}
