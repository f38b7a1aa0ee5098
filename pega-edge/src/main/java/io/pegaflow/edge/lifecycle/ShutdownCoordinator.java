package io.pegaflow.edge.lifecycle;

import io.pegaflow.kernel.SuppressForbidden;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The only place that ends the process (forbidden-apis bans {@code System.exit} everywhere else). A request closes
 * the application context on a separate non-daemon thread, so the caller (a gRPC or HTTP handler) can still send its
 * answer while the context's graceful shutdown drains the servers, then exits with the context's exit code. Only the
 * first request acts; later ones are ignored. Thread-safe.
 */
public final class ShutdownCoordinator {

    private static final Logger LOG = LoggerFactory.getLogger(ShutdownCoordinator.class);

    private final ConfigurableApplicationContext context;
    private final IntConsumer exit;
    private final AtomicBoolean requested = new AtomicBoolean();

    @SuppressForbidden // the one place that may end the process
    public ShutdownCoordinator(ConfigurableApplicationContext context) {
        this(context, System::exit);
    }

    /** With another exit action, for tests that must keep their JVM. */
    ShutdownCoordinator(ConfigurableApplicationContext context, IntConsumer exit) {
        this.context = context;
        this.exit = exit;
    }

    /**
     * Starts stopping the application.
     *
     * @param reason for the log line, e.g. {@code "Shutdown RPC"}
     * @return whether this call started the shutdown (false when one was already under way)
     */
    public boolean requestShutdown(String reason) {
        if (!requested.compareAndSet(false, true)) {
            return false;
        }
        Thread stopper = new Thread(
                () -> {
                    LOG.info("stopping the application: {}", reason);
                    exit.accept(SpringApplication.exit(context, () -> 0));
                },
                "pega-shutdown");
        stopper.setDaemon(false);
        stopper.start();
        return true;
    }

    /** Whether a shutdown was requested. */
    public boolean requested() {
        return requested.get();
    }
}
