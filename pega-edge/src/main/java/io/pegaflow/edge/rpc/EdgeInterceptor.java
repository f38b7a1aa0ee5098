package io.pegaflow.edge.rpc;

import io.grpc.ServerInterceptor;

/**
 * A server interceptor of the edge. Beans of this type are not registered with Spring gRPC one by one (its ordering
 * of global interceptors follows {@code @Order} found on superclasses, which made the order an accident); the single
 * global {@link EdgeInterceptorChain} applies them, outermost stage first, and in bean order within a stage.
 */
public interface EdgeInterceptor extends ServerInterceptor {

    EdgeStage stage();
}
