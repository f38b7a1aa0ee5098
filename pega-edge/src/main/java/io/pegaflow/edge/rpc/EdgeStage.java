package io.pegaflow.edge.rpc;

/**
 * Where an {@link EdgeInterceptor} sits in {@link EdgeInterceptorChain}, outermost first. The exception interceptor
 * closes a failed call on the call object it was handed, so whatever must see the <em>mapped</em> status (RPC metrics,
 * response metadata) sits outside it, and whatever only reads the request sits inside.
 */
public enum EdgeStage {
    /** {@link RpcMetricsInterceptor}: sees every call's final status, mapped errors included. */
    METRICS,
    /** Interceptors that add headers or trailers to every response (the metaserver's epoch). */
    RESPONSE_METADATA,
    /** {@link EdgeExceptionInterceptor}: maps what a service method throws through the app's exception handlers. */
    EXCEPTIONS,
    /** Interceptors that read the request into the gRPC context, or act around the service method. */
    REQUEST
}
