package io.pegaflow.server.grpc;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.LoadResponse;
import io.pegaflow.proto.compat.LoadRequestWire;

/**
 * Binds {@code pegaflow.Engine/Load} to a handler that parses the request as {@link LoadRequestWire}. The generated
 * binding parses it as engine.proto's v0.22.4 {@code LoadRequest}, which cannot hold a 0.23.7+ connector's layer
 * groups (protobuf refuses a string field that is not UTF-8). Every other method keeps its generated binding; the
 * path, method type and response marshaller stay the same, so the wire is unchanged.
 */
final class LoadBinding {
    private LoadBinding() {}

    static ServerServiceDefinition rebind(
            ServerServiceDefinition generated, ServerCalls.UnaryMethod<LoadRequestWire, LoadResponse> load) {
        MethodDescriptor<LoadRequestWire, LoadResponse> loadMethod = EngineGrpc.getLoadMethod().toBuilder(
                        ProtoUtils.marshaller(LoadRequestWire.getDefaultInstance()),
                        ProtoUtils.marshaller(LoadResponse.getDefaultInstance()))
                .build();
        return RequestBinding.rebind(generated, loadMethod, load);
    }
}
