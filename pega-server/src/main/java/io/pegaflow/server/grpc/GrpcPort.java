package io.pegaflow.server.grpc;

import org.springframework.context.ApplicationListener;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;
import org.springframework.stereotype.Component;

/** The port the gRPC server actually bound (useful with port 0 in tests and logs). */
@Component
public class GrpcPort implements ApplicationListener<GrpcServerStartedEvent> {
    private volatile int port = -1;

    @Override
    public void onApplicationEvent(GrpcServerStartedEvent event) {
        port = event.getPort();
    }

    /** The bound port, or -1 before the server started. */
    public int port() {
        return port;
    }
}
