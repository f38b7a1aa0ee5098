package io.pegaflow.metaserver.support;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.pegaflow.metaserver.MetaserverApplication;
import io.pegaflow.proto.MetaServerGrpc;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;

/**
 * The metaserver as a real process would run it, inside the test JVM: Spring Boot application, gRPC and HTTP on
 * ephemeral loopback ports, H2 file database under a given folder, the test's clock. Closing it stops the process;
 * starting another over the same folder is a restart.
 */
public final class MetaserverTestApp implements AutoCloseable {

    private final ConfigurableApplicationContext context;
    private final int grpcPort;
    private final int httpPort;
    private final ManagedChannel channel;
    private final AtomicReference<Metadata> lastHeaders = new AtomicReference<>();
    private final AtomicReference<Metadata> lastTrailers = new AtomicReference<>();

    private MetaserverTestApp(ConfigurableApplicationContext context, int grpcPort) {
        this.context = context;
        this.grpcPort = grpcPort;
        this.httpPort = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
        this.channel = ManagedChannelBuilder.forAddress("127.0.0.1", grpcPort)
                .usePlaintext()
                .maxInboundMessageSize(64 << 20)
                .build();
    }

    /** Starts the metaserver with its database in {@code dbDir}; {@code args} are extra {@code --name=value}s. */
    public static MetaserverTestApp start(Path dbDir, Clock clock, String... args) {
        AtomicInteger port = new AtomicInteger(-1);
        List<String> all = new ArrayList<>(List.of(
                "--pega.metaserver.addr=127.0.0.1:0",
                "--pega.metaserver.http-addr=127.0.0.1:0",
                "--pega.metaserver.db-path=" + dbDir.resolve("metaserver").toAbsolutePath(),
                "--pega.metaserver.sweep-interval-secs=3600",
                "--pega.metaserver.node-refresh-secs=0",
                "--spring.main.banner-mode=off"));
        all.addAll(List.of(args));
        ApplicationListener<ApplicationEvent> portListener = event -> {
            if (event instanceof GrpcServerStartedEvent started) {
                port.set(started.getPort());
            }
        };
        ConfigurableApplicationContext context = MetaserverApplication.builder()
                .initializers(ctx -> ctx.getBeanFactory().registerSingleton("testClock", clock))
                .listeners(portListener)
                .run(all.toArray(String[]::new));
        if (port.get() <= 0) {
            context.close();
            throw new IllegalStateException("gRPC server did not report its port");
        }
        return new MetaserverTestApp(context, port.get());
    }

    /** A blocking stub whose calls record their response headers and trailers (see {@link #lastHeaders()}). */
    public MetaServerGrpc.MetaServerBlockingStub stub() {
        return MetaServerGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(lastHeaders, lastTrailers));
    }

    /** The channel of {@link #stub()}, for the other kinds of stub. */
    public ManagedChannel channel() {
        return channel;
    }

    public Metadata lastHeaders() {
        return lastHeaders.get();
    }

    public Metadata lastTrailers() {
        return lastTrailers.get();
    }

    public ConfigurableApplicationContext context() {
        return context;
    }

    public <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    public int grpcPort() {
        return grpcPort;
    }

    public String httpBase() {
        return "http://127.0.0.1:" + httpPort;
    }

    @Override
    public void close() {
        channel.shutdownNow();
        context.close();
    }
}
