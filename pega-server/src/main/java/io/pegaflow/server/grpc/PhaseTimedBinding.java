package io.pegaflow.server.grpc;

import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.pegaflow.core.metrics.DurationRecorder;
import io.pegaflow.kernel.agent.NanoClock;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;

/**
 * Times the transport's share of chosen unary methods (Save and Load): {@code receive}, from the call's headers until
 * its message is complete, and {@code parse}, the request's protobuf decoding. The request marshaller is wrapped to
 * time the parse, and the handler's listener reads that time when the message is delivered: grpc-java parses a
 * request and hands it to {@code onMessage} on one thread, back to back, so a per-thread pair of timestamps carries
 * it across without a map or an allocation per call.
 */
final class PhaseTimedBinding {
    /** Start and end of the last parse on this thread, in {@link NanoClock} nanoseconds. */
    private static final ThreadLocal<long[]> LAST_PARSE = ThreadLocal.withInitial(() -> new long[2]);

    /** What one method records. */
    record Timers(DurationRecorder receive, DurationRecorder parse) {}

    private PhaseTimedBinding() {}

    /**
     * The service with the methods named in {@code timers} (full method names) timed; every other method, the paths
     * and the marshallers' wire format stay as they were.
     */
    static ServerServiceDefinition wrap(ServerServiceDefinition service, NanoClock clock, Map<String, Timers> timers) {
        ServiceDescriptor original = service.getServiceDescriptor();
        Map<String, ServerMethodDefinition<?, ?>> methods = new HashMap<>();
        for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
            String name = m.getMethodDescriptor().getFullMethodName();
            Timers t = timers.get(name);
            methods.put(name, t == null ? m : timed(m, clock, t));
        }
        ServiceDescriptor.Builder descriptor =
                ServiceDescriptor.newBuilder(original.getName()).setSchemaDescriptor(original.getSchemaDescriptor());
        for (MethodDescriptor<?, ?> m : original.getMethods()) {
            ServerMethodDefinition<?, ?> def = methods.get(m.getFullMethodName());
            descriptor.addMethod(def == null ? m : def.getMethodDescriptor());
        }
        ServerServiceDefinition.Builder out = ServerServiceDefinition.builder(descriptor.build());
        methods.values().forEach(out::addMethod);
        return out.build();
    }

    private static <Q, R> ServerMethodDefinition<Q, R> timed(
            ServerMethodDefinition<Q, R> method, NanoClock clock, Timers timers) {
        MethodDescriptor<Q, R> original = method.getMethodDescriptor();
        MethodDescriptor<Q, R> descriptor = original.toBuilder(
                        new TimedMarshaller<>(original.getRequestMarshaller(), clock), original.getResponseMarshaller())
                .build();
        ServerCallHandler<Q, R> next = method.getServerCallHandler();
        ServerCallHandler<Q, R> handler = (call, headers) -> {
            long begun = clock.nanoTime();
            ServerCall.Listener<Q> listener = next.startCall(call, headers);
            return new SimpleForwardingServerCallListener<>(listener) {
                @Override
                public void onMessage(Q message) {
                    long[] parse = LAST_PARSE.get();
                    if (parse[0] >= begun) { // this call's parse (always, unless the transport changes threads)
                        timers.receive().recordNanos(parse[0] - begun);
                        timers.parse().recordNanos(parse[1] - parse[0]);
                    }
                    super.onMessage(message);
                }
            };
        };
        return ServerMethodDefinition.create(descriptor, handler);
    }

    private static final class TimedMarshaller<T> implements MethodDescriptor.Marshaller<T> {
        private final MethodDescriptor.Marshaller<T> inner;
        private final NanoClock clock;

        TimedMarshaller(MethodDescriptor.Marshaller<T> inner, NanoClock clock) {
            this.inner = inner;
            this.clock = clock;
        }

        @Override
        public InputStream stream(T value) {
            return inner.stream(value);
        }

        @Override
        public T parse(InputStream stream) {
            long[] parse = LAST_PARSE.get();
            parse[0] = clock.nanoTime();
            T value = inner.parse(stream);
            parse[1] = clock.nanoTime();
            return value;
        }
    }
}
