package io.pegaflow.server;

import io.pegaflow.testkit.ChildJvm;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A pega-server in a JVM of its own ({@link ChildJvm}) on the test classpath, with a 32 MB host pool: for tests that
 * need what an in-process server cannot survive, SIGKILL or the {@code System.exit} of the Shutdown RPC.
 *
 * @param jvm the child
 * @param grpcPort its gRPC port
 * @param httpPort its HTTP (operations and actuator) port
 */
public record ChildServer(ChildJvm jvm, int grpcPort, int httpPort) implements AutoCloseable {

    /**
     * Starts a server and waits until it is ready. {@code extraArgs} are Spring arguments ({@code --name=value}) added
     * to the ports, pool and {@code logging.level.root=WARN} set here; they must not repeat those, since Spring joins a
     * repeated command-line argument's values with commas. Bind addresses are the caller's choice.
     */
    public static ChildServer start(String name, Path dir, String... extraArgs) throws IOException {
        int[] ports = ChildJvm.freePorts(2);
        List<String> args = new ArrayList<>(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                PegaServerApplication.class.getName(),
                "--spring.grpc.server.port=" + ports[0],
                "--server.port=" + ports[1],
                "--pega.pool.size=32MB",
                "--pega.device.backend=host",
                "--logging.level.root=WARN"));
        args.addAll(List.of(extraArgs));
        return new ChildServer(
                ChildJvm.start("server " + name, dir, args, ChildJvm.pegaServerReady(ports[1])), ports[0], ports[1]);
    }

    public Process process() {
        return jvm.process();
    }

    public Path log() {
        return jvm.log();
    }

    public String logText() {
        return jvm.logText();
    }

    public AssertionError failure(String what, Throwable cause) {
        return jvm.failure(what, cause);
    }

    @Override
    public void close() {
        jvm.close();
    }
}
