package io.pegaflow.server.ssd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.ssd.SsdConfig;
import io.pegaflow.core.ssd.SsdStore;
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
import org.springframework.util.unit.DataSize;

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

    /** {@code pega.ssd.paths=/mnt/nvme0/pega/} names a directory even before it exists: never a file of that name. */
    @Test
    void shouldCreateAMissingDirectoryThatEndsInASlash() throws IOException {
        String missing = dir.resolve("cache").toString() + "/";
        SsdProperties properties = new SsdProperties(
                true,
                List.of(missing),
                DataSize.ofMegabytes(1),
                DataSize.ofBytes(0),
                8,
                2,
                2,
                16,
                800,
                false,
                DataSize.ofMegabytes(1));

        SsdConfig config = properties.toConfig();

        assertThat(config.paths()).containsExactly(dir.resolve("cache").resolve("shard-000000.dat"));
        try (SsdStore store = SsdStartup.open(config, new AgentGroup())) {
            assertThat(dir.resolve("cache")).isDirectory();
            assertThat(dir.resolve("cache").resolve("shard-000000.dat")).isRegularFile();
            assertThat(store).isNotNull();
        }
    }
}
