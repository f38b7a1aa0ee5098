package io.pegaflow.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class LoadStateShmTest {

    @Test
    void shouldLayOutTheObjectLikeTheReferenceWorker() throws IOException {
        try (LoadStateShm state = LoadStateShm.create()) {
            assertThat(state.name()).matches("^pega_load_[0-9a-f]{32}$");
            Path path = Path.of("/dev/shm", state.name());
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(path)))
                    .isEqualTo("rw-------");

            byte[] raw = Files.readAllBytes(path);
            assertThat(raw).hasSize(32);
            ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
            assertThat(b.getLong(0)).isEqualTo(8);
            assertThat(b.getInt(8)).isEqualTo(0x50464C44);
            assertThat(raw[8]).isEqualTo((byte) 'D'); // "PFLD" as a little-endian u32 reads "DLFP" in memory
            assertThat(b.getInt(12)).isEqualTo(1);
            assertThat(b.getLong(16)).isZero();
            for (int i = 24; i < 32; i++) {
                assertThat(raw[i]).as("padding byte %d", i).isZero();
            }
            assertThat(state.state()).isEqualTo(LoadStateShm.PENDING);
        }
    }

    @Test
    void shouldSeeAStateWrittenThroughAnotherMappingAndUnlinkOnClose() throws IOException {
        Path path;
        try (LoadStateShm state = LoadStateShm.create()) {
            path = Path.of(state.path());
            writeState(path, LoadStateShm.FAILURE);
            assertThat(state.state()).isEqualTo(-1);
            assertThat(state.awaitTerminal(Duration.ofMillis(10))).isEqualTo(-1);
        }
        assertThat(Files.exists(path)).isFalse();
    }

    @Test
    void shouldReturnTheTerminalStateOnceAnotherThreadPublishesIt() throws Exception {
        try (LoadStateShm state = LoadStateShm.create()) {
            Path path = Path.of(state.path());
            CompletableFuture<Long> waiter =
                    CompletableFuture.supplyAsync(() -> state.awaitTerminal(Duration.ofSeconds(5)));
            writeState(path, LoadStateShm.SUCCESS);
            assertThat(waiter.get(5, TimeUnit.SECONDS)).isEqualTo(LoadStateShm.SUCCESS);
        }
    }

    @Test
    void shouldThrowWhenStillPendingAtTheTimeout() {
        try (LoadStateShm state = LoadStateShm.create()) {
            assertThatThrownBy(() -> state.awaitTerminal(Duration.ofMillis(20)))
                    .isInstanceOf(TestkitTimeoutException.class)
                    .hasMessageContaining(state.name());
        }
    }

    @Test
    void shouldWriteACustomHeaderForAttachValidationTests() throws IOException {
        try (LoadStateShm state = LoadStateShm.createWithHeader(0x12345678, 2)) {
            ByteBuffer b =
                    ByteBuffer.wrap(Files.readAllBytes(Path.of(state.path()))).order(ByteOrder.LITTLE_ENDIAN);
            assertThat(b.getLong(0)).isEqualTo(8);
            assertThat(b.getInt(8)).isEqualTo(0x12345678);
            assertThat(b.getInt(12)).isEqualTo(2);
        }
    }

    @Test
    void shouldCloseExactlyOnce() {
        LoadStateShm state = LoadStateShm.create();
        state.close();
        state.close();
        assertThat(state.isClosed()).isTrue();
        assertThatThrownBy(state::state).isInstanceOf(IllegalStateException.class);
    }

    private static void writeState(Path path, long value) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_WRITE, 0, 32);
            map.order(ByteOrder.LITTLE_ENDIAN).putLong(16, value);
            map.force();
        }
    }
}
