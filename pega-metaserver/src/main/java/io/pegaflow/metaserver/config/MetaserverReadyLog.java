package io.pegaflow.metaserver.config;

import io.pegaflow.metaserver.node.MetaserverEpoch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;

/**
 * The one line that says the metaserver serves, and where: the bound gRPC and HTTP addresses, the node store and the
 * epoch, logged once the application is ready (as pega-server's {@code pega-server ready}). The store is named by its
 * JDBC URL up to the first parameter, so no credential passed as one reaches the log.
 */
final class MetaserverReadyLog {
    private static final Logger log = LoggerFactory.getLogger(MetaserverReadyLog.class);

    private final Environment env;
    private final MetaserverEpoch epoch;
    private volatile String grpc = "?";

    MetaserverReadyLog(Environment env, MetaserverEpoch epoch) {
        this.env = env;
        this.epoch = epoch;
    }

    @EventListener
    void onGrpcStarted(GrpcServerStartedEvent event) {
        grpc = listening(event.getAddress(), event.getPort());
    }

    /** The listening address as spring-grpc reports it ({@code [/127.0.0.1:50056]}), written as {@code host:port}. */
    static String listening(String address, int port) {
        String plain = address.replaceAll("[\\[\\]]", "").replaceAll("(^|, )/", "$1");
        return plain.endsWith(":" + port) ? plain : plain + ":" + port;
    }

    @EventListener
    void onReady(ApplicationReadyEvent event) {
        log.info(
                "pega-metaserver ready: gRPC {}, HTTP {}:{}, node store {}, epoch {}",
                grpc,
                env.getProperty("server.address", "0.0.0.0"),
                env.getProperty("local.server.port", "?"),
                store(env.getProperty("spring.datasource.url", "?")),
                epoch.epoch());
    }

    static String store(String url) {
        return url.replaceFirst("[;?].*$", "");
    }
}
