package io.pegaflow.server.ssd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.ssd.SsdConfig;
import io.pegaflow.kernel.agent.AgentGroup;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * A shard on a real filesystem that cannot hold it (decision 0016 §3): mounted read-only, or too small for the shard's
 * preallocation. The store refuses to start with the path and the reason, and leaves nothing behind on the filesystem.
 */
@Timeout(120)
@EnabledIf(value = "io.pegaflow.server.ssd.LoopFilesystem#available", disabledReason = "needs root and loop mounts")
class SsdRealFilesystemStartupTest {
    private static SsdConfig oneShard(Path path, long capacityBytes) {
        return new SsdConfig(List.of(path), capacityBytes, 8, 2, 2, 16, false);
    }

    @Test
    void shouldRefuseAShardOnAReadOnlyFilesystem() throws IOException {
        try (LoopFilesystem fs = LoopFilesystem.create("pega-ssd-ro", 16, true)) {
            Path shard = fs.mount().resolve("shard-0.dat");
            assertThatThrownBy(() -> SsdStartup.open(oneShard(shard, 4L << 20), new AgentGroup()))
                    .hasMessageContaining("pega.ssd.paths")
                    .hasMessageContaining(shard.toString())
                    .hasMessageContaining("Read-only file system");
            assertThat(shard).doesNotExist();
        }
    }

    @Test
    void shouldRefuseAShardTheFilesystemCannotHold() throws IOException {
        try (LoopFilesystem fs = LoopFilesystem.create("pega-ssd-small", 16, false)) {
            Path shard = fs.mount().resolve("shard-0.dat");
            assertThatThrownBy(() -> SsdStartup.open(oneShard(shard, 64L << 20), new AgentGroup()))
                    .hasMessageContaining(shard.toString())
                    .hasMessageContaining("errno 28");
            assertThat(shard).as("a shard that did not fit is removed").doesNotExist();
        }
    }
}
