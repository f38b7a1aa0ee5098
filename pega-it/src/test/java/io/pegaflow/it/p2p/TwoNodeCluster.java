package io.pegaflow.it.p2p;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.pegaflow.it.MetaserverLauncher;
import io.pegaflow.it.PackagedJars;
import io.pegaflow.it.net.Site;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.testkit.ChildJvm;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * A metaserver and two pega-servers of the packaged jars, each server at its own {@link Site}, the metaserver at site
 * a's address (so node b reaches it, and node a, across the network between them). Every server binds its gRPC and
 * HTTP listeners to its site's address only (its pool size and the rest come from the caller), advertises that address to the metaserver, and runs with UCX held to
 * TCP on its site's device. The test reaches each process through {@link Site#dial(String, int)}.
 */
final class TwoNodeCluster implements AutoCloseable {
    /** A pega-server process: where it runs, its ports there, and the local ports this JVM reaches them by. */
    record Node(String name, Site site, ChildJvm process, int grpcPort, int httpPort, int localGrpc, int localHttp) {
        /** {@code host:port} as peers dial it and the metaserver indexes it. */
        String advertised() {
            return site.address() + ":" + grpcPort;
        }
    }

    private final Path dir;
    private final Site siteA;
    private final Site siteB;
    private final List<AutoCloseable> open = new ArrayList<>();
    private final ManagedChannel metaChannel;
    private final int metaGrpc;
    private final int metaHttp;
    private final int localMetaHttp;
    private ChildJvm metaserver;
    private Node a;
    private Node b;

    private TwoNodeCluster(Path dir, Site siteA, Site siteB, int metaGrpc, int metaHttp) throws IOException {
        this.dir = dir;
        this.siteA = siteA;
        this.siteB = siteB;
        this.metaGrpc = metaGrpc;
        this.metaHttp = metaHttp;
        this.metaChannel = ManagedChannelBuilder.forAddress("127.0.0.1", siteA.dial(siteA.address(), metaGrpc))
                .usePlaintext()
                .build();
        open.add(metaChannel::shutdownNow);
        this.localMetaHttp = siteA.dial(siteA.address(), metaHttp);
    }

    /** Starts the metaserver, then both servers, each with {@code serverArgs} of its site added to its command line. */
    static TwoNodeCluster start(Path dir, Site siteA, Site siteB, Function<Site, List<String>> serverArgs)
            throws IOException {
        int[] ports = ChildJvm.freePorts(6);
        TwoNodeCluster cluster = new TwoNodeCluster(dir, siteA, siteB, ports[0], ports[1]);
        try {
            cluster.metaserver = cluster.startMetaserver();
            cluster.a = cluster.startServer("node-a", siteA, ports[2], ports[3], serverArgs.apply(siteA));
            cluster.b = cluster.startServer("node-b", siteB, ports[4], ports[5], serverArgs.apply(siteB));
            return cluster;
        } catch (IOException | RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
    }

    private ChildJvm startMetaserver() throws IOException {
        List<String> args = List.of(
                "-jar",
                PackagedJars.path("pega.it.metaserverJar"),
                "--pega.metaserver.addr=" + siteA.address() + ":" + metaGrpc,
                "--pega.metaserver.http-addr=" + siteA.address() + ":" + metaHttp,
                "--pega.metaserver.db-path=" + dir.resolve("metaserver-db/metaserver"),
                "--logging.level.root=WARN");
        BooleanSupplier answers = MetaserverLauncher.answers(metaserverStub());
        return track(ChildJvm.start("metaserver", dir, siteA.wrapper(), Map.of(), args, answers));
    }

    private Node startServer(String name, Site site, int grpcPort, int httpPort, List<String> extra)
            throws IOException {
        List<String> args = new ArrayList<>(List.of(
                "-jar",
                PackagedJars.path("pega.it.serverJar"),
                "--spring.grpc.server.host=" + site.address(),
                "--spring.grpc.server.port=" + grpcPort,
                "--server.address=" + site.address(),
                "--server.port=" + httpPort,
                "--pega.device.backend=host",
                "--pega.metaserver.addr=" + siteA.address() + ":" + metaGrpc,
                "--pega.metaserver.advertise-addr=" + site.address() + ":" + grpcPort,
                "--pega.metaserver.heartbeat-interval=200ms",
                "--logging.level.root=WARN",
                "--logging.level.io.pegaflow.server.internode=INFO"));
        if (site.isLoopback()) {
            args.add("--pega.metaserver.allow-loopback=true");
        }
        args.addAll(extra);
        int localGrpc = site.dial(site.address(), grpcPort);
        int localHttp = site.dial(site.address(), httpPort);
        ChildJvm process = track(ChildJvm.start(
                name, dir, site.wrapper(), site.ucxTcpEnvironment(), args, ChildJvm.pegaServerReady(localHttp)));
        return new Node(name, site, process, grpcPort, httpPort, localGrpc, localHttp);
    }

    /**
     * One more server at {@code site}, as the two started with the cluster, with {@code serverArgs} added to its command
     * line. Closed with the cluster, or earlier by the caller.
     */
    Node startAnother(String name, Site site, List<String> serverArgs) throws IOException {
        int[] ports = ChildJvm.freePorts(2);
        return startServer(name, site, ports[0], ports[1], serverArgs);
    }

    private <T extends AutoCloseable> T track(T resource) {
        open.add(resource);
        return resource;
    }

    MetaServerGrpc.MetaServerBlockingStub metaserverStub() {
        return MetaServerGrpc.newBlockingStub(metaChannel);
    }

    /** The metaserver's {@code /api/nodes} JSON, or null while it does not answer. */
    String metaserverNodesJson() {
        return ChildJvm.httpGet(localMetaHttp, "/api/nodes");
    }

    ChildJvm metaserver() {
        return metaserver;
    }

    Node a() {
        return a;
    }

    Node b() {
        return b;
    }

    /** The logs of every process, for a failure message. */
    String logs() {
        StringBuilder out = new StringBuilder();
        List<ChildJvm> children = new ArrayList<>();
        for (Object o : open) {
            if (o instanceof ChildJvm child) {
                children.add(child);
            }
        }
        for (ChildJvm child : children) {
            out.append("\n--- ")
                    .append(child.log().getFileName())
                    .append(" ---\n")
                    .append(child.logText());
        }
        return out.toString();
    }

    @Override
    public void close() {
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (Exception e) {
                // go on closing the rest; a child that would not die is reported by its own close
            }
        }
        siteA.close();
        siteB.close();
    }
}
