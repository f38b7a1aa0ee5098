package io.pegaflow.server.ssd;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.server.grpc.GrpcPort;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.env.Environment;

/**
 * What the in-process SSD server tests share: the server's beans, its HTTP port, and shard directories that exist
 * before the context starts (their paths go into {@code @DynamicPropertySource}) and are removed after the class.
 */
abstract class SsdServerTestBase {
    @Autowired
    GrpcPort grpcPort;

    @Autowired
    PegaEngine engine;

    @Autowired
    SsdStore store;

    @Autowired
    Environment env;

    static Path shardDir(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static void deleteShardDir(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    int httpPort() {
        return Integer.parseInt(env.getProperty("local.server.port"));
    }
}
