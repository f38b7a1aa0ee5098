package io.pegaflow.server.ssd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.ssd.SsdConfig;
import io.pegaflow.kernel.agent.AgentGroup;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A store that fails to open takes the shard files and directories it created with it, and nothing else. */
@Timeout(60)
class SsdStartupTest {

    @TempDir
    Path dir;

    @Test
    void shouldRemoveWhatAFailedOpenCreatedAndKeepWhatWasThere() throws IOException {
        Path created = dir.resolve("new").resolve("deeper").resolve("shard-0.dat");
        Path sibling = dir.resolve("new").resolve("deeper").resolve("shard-1.dat");
        Path existing = Files.writeString(dir.resolve("old.dat"), "an operator's file");
        // The last shard is held by someone else: the store opens (and allocates) the first two, then fails.
        try (FileChannel holder = FileChannel.open(existing, StandardOpenOption.WRITE);
                FileLock lock = holder.lock()) {
            SsdConfig config = new SsdConfig(List.of(created, sibling, existing), 1L << 20, 8, 2, 2, 16, false);

            assertThatThrownBy(() -> SsdStartup.open(config, new AgentGroup()))
                    .hasMessageContaining("pega.ssd.paths")
                    .hasMessageContaining("in use");
            assertThat(lock.isValid()).isTrue();
        }
        assertThat(dir.resolve("new"))
                .as("directories created by the failed start")
                .doesNotExist();
        assertThat(existing).as("there before").hasContent("an operator's file");
    }
}
