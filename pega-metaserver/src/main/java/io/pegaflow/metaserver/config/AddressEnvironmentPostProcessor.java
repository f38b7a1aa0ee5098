package io.pegaflow.metaserver.config;

import io.pegaflow.metaserver.MetaserverApplication;
import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Maps the reference's address flags onto Spring's server settings: {@code pega.metaserver.addr} becomes
 * {@code spring.grpc.server.address} and {@code pega.metaserver.http-addr} ({@code host:port}) becomes
 * {@code server.address} and {@code server.port}. The derived values have the lowest precedence, so an explicit
 * Spring setting (tests use {@code server.port=0}) still wins. Only the metaserver application is affected.
 */
public final class AddressEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

    static final String SOURCE_NAME = "pegaMetaserverAddresses";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (!application.getAllSources().contains(MetaserverApplication.class)) {
            return; // registered JVM-wide through spring.factories: leave other applications alone
        }
        Map<String, Object> derived = new HashMap<>();
        String grpcAddr = environment.getProperty("pega.metaserver.addr");
        boolean springGrpcSet = environment.containsProperty("spring.grpc.server.port")
                || environment.containsProperty("spring.grpc.server.host");
        if (grpcAddr != null || !springGrpcSet) {
            // The address beats host and port in Spring gRPC, so it is only derived when it is what the user meant.
            derived.put("spring.grpc.server.address", grpcAddr != null ? grpcAddr : "127.0.0.1:50056");
        }
        String httpAddr = environment.getProperty("pega.metaserver.http-addr", "0.0.0.0:9092");
        int colon = httpAddr.lastIndexOf(':');
        if (colon <= 0 || colon == httpAddr.length() - 1) {
            throw new IllegalArgumentException(
                    "pega.metaserver.http-addr: " + httpAddr + " (expected: host:port, e.g. 0.0.0.0:9092)");
        }
        derived.put("server.address", stripBrackets(httpAddr.substring(0, colon)));
        derived.put("server.port", httpAddr.substring(colon + 1));
        environment.getPropertySources().addLast(new MapPropertySource(SOURCE_NAME, derived));
    }

    private static String stripBrackets(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    @Override
    public int getOrder() {
        // After ConfigDataEnvironmentPostProcessor, so application.yml and profiles are visible.
        return Ordered.LOWEST_PRECEDENCE;
    }
}
