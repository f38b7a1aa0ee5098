package io.pegaflow.core.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.error.EngineException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Attaching to and signalling the worker's 32-byte load state. */
@Timeout(30)
class LoadStateSignalTest {
    private static final Path SHM = Path.of("/dev/shm");

    private final List<Path> created = new ArrayList<>();

    @AfterEach
    void cleanUp() throws IOException {
        for (Path p : created) {
            Files.deleteIfExists(p);
        }
    }

    /** Writes a load state object; returns its name. */
    private String object(int sizeBytes, long offset, int magic, int version) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(sizeBytes).order(ByteOrder.LITTLE_ENDIAN);
        if (sizeBytes >= 8) {
            b.putLong(0, offset);
        }
        if (offset >= 8 && offset + 8 <= sizeBytes) {
            b.putInt((int) offset, magic);
            b.putInt((int) offset + 4, version);
        }
        String name = "pega_load_" + UUID.randomUUID().toString().replace("-", "");
        Path path = SHM.resolve(name);
        Files.write(path, b.array());
        created.add(path);
        return name;
    }

    private String valid() throws IOException {
        return object(32, 8, LoadStateSignal.MAGIC, LoadStateSignal.VERSION);
    }

    private static long state(String name) throws IOException {
        return ByteBuffer.wrap(Files.readAllBytes(SHM.resolve(name)))
                .order(ByteOrder.LITTLE_ENDIAN)
                .getLong(16);
    }

    private static void assertAttachFails(String name, String messagePart) {
        assertThatThrownBy(() -> LoadStateSignal.attach(name)).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.INTERNAL);
            assertThat(e.getMessage()).startsWith("storage error: LoadState: ").contains(messagePart);
        });
    }

    @Test
    void shouldWriteSuccessExactlyWhereTheWorkerReads() throws IOException {
        String name = valid();

        LoadStateSignal signal = LoadStateSignal.attach(name);
        assertThat(state(name)).isZero();
        assertThat(signal.succeed()).isTrue();

        assertThat(state(name)).isEqualTo(1);
    }

    @Test
    void shouldWriteFailureAsMinusOne() throws IOException {
        String name = valid();

        assertThat(LoadStateSignal.attach(name).fail()).isTrue();

        assertThat(state(name)).isEqualTo(-1);
    }

    @Test
    void shouldAcceptLeadingSlashLikeShmOpen() throws IOException {
        String name = valid();

        assertThat(LoadStateSignal.attach("/" + name).succeed()).isTrue();

        assertThat(state(name)).isEqualTo(1);
    }

    @Test
    void shouldReportFalseWhenWorkerUnlinkedBeforeCompletion() throws IOException {
        String name = valid();
        LoadStateSignal signal = LoadStateSignal.attach(name);
        Files.delete(SHM.resolve(name));

        assertThat(signal.succeed()).isFalse();
        assertThat(signal.fail()).isFalse();
    }

    @Test
    void shouldRejectMissingObject() {
        assertAttachFails("pega_load_" + UUID.randomUUID().toString().replace("-", ""), "cannot attach shared memory");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ".", "..", "a/b", "../etc/passwd", "pega load", "/"})
    void shouldRejectNamesThatAreNotPlainShmNames(String name) {
        assertAttachFails(name, "invalid shared-memory name");
    }

    @Test
    void shouldRejectTooSmallObject() throws IOException {
        String name = object(16, 8, LoadStateSignal.MAGIC, LoadStateSignal.VERSION);

        assertAttachFails(name, "is 16 bytes, expected at least 32");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 4, 12, 24, -8})
    void shouldRejectInvalidStateOffset(long offset) throws IOException {
        String name = object(32, offset, LoadStateSignal.MAGIC, LoadStateSignal.VERSION);

        assertAttachFails(name, "invalid state offset " + offset);
    }

    @Test
    void shouldRejectWrongMagic() throws IOException {
        String name = object(32, 8, 0x12345678, LoadStateSignal.VERSION);

        assertAttachFails(name, "has magic 0x12345678 version 1, expected 0x50464c44 version 1");
    }

    @Test
    void shouldRejectWrongVersion() throws IOException {
        String name = object(32, 8, LoadStateSignal.MAGIC, 2);

        assertAttachFails(name, "version 2");
    }

    @Test
    void shouldRefuseToFollowSymlink() throws IOException {
        String target = valid();
        String link = "pega_load_" + UUID.randomUUID().toString().replace("-", "");
        Path linkPath = SHM.resolve(link);
        Files.createSymbolicLink(linkPath, SHM.resolve(target));
        created.add(linkPath);

        assertAttachFails(link, "cannot attach shared memory");
        assertThat(state(target)).isZero();
    }

    @Test
    void shouldAcceptLargerObjectWithStateFurtherIn() throws IOException {
        String name = object(64, 32, LoadStateSignal.MAGIC, LoadStateSignal.VERSION);

        assertThat(LoadStateSignal.attach(name).succeed()).isTrue();

        long written = ByteBuffer.wrap(Files.readAllBytes(SHM.resolve(name)))
                .order(ByteOrder.LITTLE_ENDIAN)
                .getLong(40);
        assertThat(written).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 8, 16, 20})
    void shouldReportFalseWhenWorkerShrankTheObjectBeforeCompletion(int newSize) throws IOException {
        // A mapped write here would raise SIGBUS in the server; through the descriptor it is a clean refusal.
        String name = valid();
        LoadStateSignal signal = LoadStateSignal.attach(name);
        try (RandomAccessFile object = new RandomAccessFile(SHM.resolve(name).toFile(), "rw")) {
            object.setLength(newSize);
        }

        assertThat(signal.succeed()).isFalse();
        assertThat(signal.fail()).isFalse();
        assertThat(Files.size(SHM.resolve(name))).isEqualTo(newSize);
    }
}
