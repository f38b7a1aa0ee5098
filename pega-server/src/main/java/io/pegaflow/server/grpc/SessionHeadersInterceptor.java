package io.pegaflow.server.grpc;

import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeStage;
import io.pegaflow.proto.EngineGrpc;

/**
 * The Session stream never sends a message, so grpc-java would never send its headers either. Sending them right after
 * the handler installed the session tells the client the session is live (tonic does the same).
 */
final class SessionHeadersInterceptor implements EdgeInterceptor {

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        ServerCall.Listener<Q> listener = next.startCall(call, headers);
        if (!EngineGrpc.getSessionMethod()
                .getFullMethodName()
                .equals(call.getMethodDescriptor().getFullMethodName())) {
            return listener;
        }
        return new SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onHalfClose() {
                super.onHalfClose();
                try {
                    call.sendHeaders(new Metadata());
                } catch (IllegalStateException alreadyClosed) {
                    // The handler failed the call (empty instance_id): headers went with the status.
                }
            }
        };
    }

    @Override
    public EdgeStage stage() {
        return EdgeStage.REQUEST;
    }
}
