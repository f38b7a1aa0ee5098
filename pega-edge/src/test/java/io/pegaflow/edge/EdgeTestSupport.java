package io.pegaflow.edge;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;

/**
 * {@link EdgeTestApp} on ephemeral ports, with forwarded headers trusted the way Spring Boot does on Kubernetes
 * ({@code native}: Tomcat's RemoteIpValve rewrites the remote address from {@code X-Forwarded-For} sent by a
 * private-range or loopback peer).
 */
@SpringBootTest(
        classes = EdgeTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "server.address=127.0.0.1",
            "server.forward-headers-strategy=native",
            "spring.grpc.server.host=127.0.0.1",
            "spring.grpc.server.port=0"
        })
public abstract class EdgeTestSupport {

    @Autowired
    EdgeTestApp.GrpcPort grpcPort;

    @Autowired
    Environment env;

    protected int grpcPort() {
        return grpcPort.port;
    }

    protected int httpPort() {
        return Integer.parseInt(env.getProperty("local.server.port"));
    }
}
