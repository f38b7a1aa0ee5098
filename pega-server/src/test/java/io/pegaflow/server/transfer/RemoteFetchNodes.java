package io.pegaflow.server.transfer;

import io.pegaflow.server.PegaServerApplication;
import io.pegaflow.testkit.KvLayout;
import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A node of the remote fetch tests: a whole pega-server in this JVM on a loopback port of its own, with the host
 * backend and a 32 MB pool (unless the test asks for another), announcing to an owner-keeping metaserver ({@link OwnerIndexMetaServer}) and fetching from
 * its peers over UCX TCP on {@code lo}.
 */
final class RemoteFetchNodes {
    static final String HOST = "127.0.0.1";
    /** The layout of every layer the tests' workers register. */
    static final KvLayout LAYOUT = KvLayout.kvFirst(16, 16, 2, 64, 2);

    private RemoteFetchNodes() {}

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /**
     * Starts a node whose gRPC listener is {@code HOST:port}.
     *
     * @param extra further {@code --name=value} arguments: the cluster's credential, TLS
     */
    static ConfigurableApplicationContext start(OwnerIndexMetaServer metaserver, int port, List<String> extra) {
        return start(metaserver, port, 32L << 20, extra);
    }

    /** As above, with a pool of {@code poolBytes} (whole MiB). */
    static ConfigurableApplicationContext start(
            OwnerIndexMetaServer metaserver, int port, long poolBytes, List<String> extra) {
        List<String> args = new ArrayList<>(List.of(
                "--spring.grpc.server.port=" + port,
                "--spring.grpc.server.host=" + HOST,
                "--server.port=0",
                "--server.address=" + HOST,
                "--pega.pool.size=" + (poolBytes >> 20) + "MB",
                "--pega.device.backend=host",
                "--pega.metaserver.addr=" + metaserver.target(),
                "--pega.metaserver.advertise-addr=" + HOST + ":" + port,
                "--pega.metaserver.allow-loopback=true",
                "--pega.metaserver.heartbeat-interval=200ms",
                "--pega.rdma.enabled=true",
                "--pega.rdma.nics=lo",
                "--pega.rdma.transports=tcp",
                "--pega.rdma.connect-timeout=5s",
                "--logging.level.root=WARN"));
        args.addAll(extra);
        return new SpringApplicationBuilder(PegaServerApplication.class).run(args.toArray(String[]::new));
    }
}
