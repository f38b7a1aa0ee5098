package io.pegaflow.server.grpc;

import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.stub.ServerCalls;

/**
 * Replaces one unary method of a generated service binding by a handler of another request type (and marshaller).
 * The path, method type and response marshaller stay the generated ones, so the wire is unchanged; every other
 * method keeps its generated binding.
 */
final class RequestBinding {
    private RequestBinding() {}

    static <Q, R> ServerServiceDefinition rebind(
            ServerServiceDefinition generated, MethodDescriptor<Q, R> method, ServerCalls.UnaryMethod<Q, R> handler) {
        String name = method.getFullMethodName();
        ServiceDescriptor original = generated.getServiceDescriptor();
        ServiceDescriptor.Builder descriptor =
                ServiceDescriptor.newBuilder(original.getName()).setSchemaDescriptor(original.getSchemaDescriptor());
        for (MethodDescriptor<?, ?> m : original.getMethods()) {
            descriptor.addMethod(m.getFullMethodName().equals(name) ? method : m);
        }
        ServerServiceDefinition.Builder out = ServerServiceDefinition.builder(descriptor.build());
        for (ServerMethodDefinition<?, ?> m : generated.getMethods()) {
            if (!m.getMethodDescriptor().getFullMethodName().equals(name)) {
                out.addMethod(m);
            }
        }
        out.addMethod(method, ServerCalls.asyncUnaryCall(handler));
        return out.build();
    }
}
