package io.pegaflow.edge.rpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import org.springframework.grpc.server.exception.GrpcExceptionHandler;
import org.springframework.grpc.server.exception.GrpcExceptionHandlerInterceptor;

/**
 * Spring gRPC's exception interceptor, placed at {@link EdgeStage#EXCEPTIONS} inside the metrics interceptor: the
 * auto-configured one runs outermost and would close failed calls past the metrics. Declaring this bean turns the
 * auto-configured one off ({@code @ConditionalOnMissingBean}). It also names the method being served in the gRPC
 * context, for {@link InternalErrorLog}'s log line.
 */
public final class EdgeExceptionInterceptor extends GrpcExceptionHandlerInterceptor implements EdgeInterceptor {

    public EdgeExceptionInterceptor(GrpcExceptionHandler handler) {
        super(handler);
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        Context named = Context.current()
                .withValue(InternalErrorLog.METHOD, call.getMethodDescriptor().getFullMethodName());
        return Contexts.interceptCall(named, call, headers, (c, h) -> super.interceptCall(c, h, next));
    }

    @Override
    public EdgeStage stage() {
        return EdgeStage.EXCEPTIONS;
    }
}
