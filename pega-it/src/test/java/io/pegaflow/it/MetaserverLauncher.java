package io.pegaflow.it;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.testkit.ChildJvm;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The packaged pega-metaserver in a JVM of its own, as the ITs run it: on loopback ports the test chose, logging only
 * warnings, and ready once it answers a QueryPrefixBlocks (its gRPC port is open and its index serves).
 */
public final class MetaserverLauncher {
    private MetaserverLauncher() {}

    /**
     * Starts the metaserver; the caller closes the returned process.
     *
     * @param channel a channel to {@code grpcPort}, for the readiness probe
     * @param extra further {@code --name=value} arguments (database, index, lifecycle timings)
     */
    public static ChildJvm start(
            String name, Path dir, ManagedChannel channel, int grpcPort, int httpPort, List<String> extra)
            throws IOException {
        List<String> args = new ArrayList<>(List.of(
                "-jar",
                PackagedJars.path("pega.it.metaserverJar"),
                "--pega.metaserver.addr=127.0.0.1:" + grpcPort,
                "--pega.metaserver.http-addr=127.0.0.1:" + httpPort,
                "--logging.level.root=WARN"));
        args.addAll(extra);
        return ChildJvm.start(name, dir, args, answers(MetaServerGrpc.newBlockingStub(channel)));
    }

    /** True once the metaserver behind {@code stub} answers a query within 2 s. */
    public static BooleanSupplier answers(MetaServerGrpc.MetaServerBlockingStub stub) {
        return () -> {
            try {
                stub.withDeadlineAfter(2, TimeUnit.SECONDS)
                        .queryPrefixBlocks(QueryPrefixBlocksRequest.newBuilder()
                                .setNamespace("probe")
                                .addBlockHashes(ByteString.copyFromUtf8("probe"))
                                .build());
                return true;
            } catch (StatusRuntimeException notYet) {
                return false;
            }
        };
    }
}
