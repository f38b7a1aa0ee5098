package io.pegaflow.core.device.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.error.EngineException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The host backend maps whatever {@code wrapper_bytes} names, and those bytes come from the network: every hostile or
 * malformed descriptor must be refused with INVALID_ARGUMENT and leave no mapping behind.
 */
@Timeout(30)
class HostDeviceBackendTest {
    private static final Path SHM = Path.of("/dev/shm");
    private static final int OBJECT_BYTES = 8192;

    private final HostDeviceBackend backend = new HostDeviceBackend();
    private final List<Path> created = new ArrayList<>();
    private final List<LayerMemory> opened = new ArrayList<>();
    private String object;

    @BeforeEach
    void createObject() throws IOException {
        object = newObject(OBJECT_BYTES);
    }

    @AfterEach
    void cleanUp() throws IOException {
        opened.forEach(LayerMemory::close);
        assertThat(backend.mappedObjects()).as("mappings left behind").isZero();
        for (Path p : created) {
            Files.deleteIfExists(p);
        }
    }

    private String newObject(int sizeBytes) throws IOException {
        String name = "pega_hosttest_" + UUID.randomUUID().toString().replace("-", "");
        Path path = SHM.resolve(name);
        Files.write(path, new byte[sizeBytes]);
        created.add(path);
        return name;
    }

    private static byte[] json(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] descriptor(String name, long offset, long size) {
        return json(
                "{\"kind\":\"host-shm\",\"name\":\"" + name + "\",\"offset\":" + offset + ",\"size\":" + size + "}");
    }

    private LayerMemory open(byte[] wrapper) {
        LayerMemory memory = backend.openLayer(Caller.inProcess("test"), 0, wrapper);
        opened.add(memory);
        return memory;
    }

    private void assertRejected(byte[] wrapper, String messagePart) {
        assertThatThrownBy(() -> open(wrapper)).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
            assertThat(e.getMessage()).startsWith("invalid argument: ").contains(messagePart);
        });
        assertThat(backend.mappedObjects()).isZero();
    }

    /** Descriptors refused whatever exists in /dev/shm; {@code $} stands for the name of a real 8 KiB object. */
    static Stream<Arguments> hostileDescriptors() {
        String longName = "pega_" + "a".repeat(201);
        return Stream.of(
                Arguments.of(
                        "slash in name",
                        "{\"kind\":\"host-shm\",\"name\":\"pega_a/b\",\"offset\":0,\"size\":1}",
                        "name must match"),
                Arguments.of(
                        "dot-dot",
                        "{\"kind\":\"host-shm\",\"name\":\"..\",\"offset\":0,\"size\":1}",
                        "name must match"),
                Arguments.of(
                        "traversal",
                        "{\"kind\":\"host-shm\",\"name\":\"pega_../../etc/passwd\",\"offset\":0," + "\"size\":1}",
                        "name must match"),
                Arguments.of(
                        "absolute path",
                        "{\"kind\":\"host-shm\",\"name\":\"/dev/shm/$\",\"offset\":0,\"size\":1}",
                        "name must match"),
                Arguments.of(
                        "no pega_ prefix",
                        "{\"kind\":\"host-shm\",\"name\":\"etc_passwd\",\"offset\":0,\"size\":1}",
                        "name must match"),
                Arguments.of(
                        "name over 200 chars",
                        "{\"kind\":\"host-shm\",\"name\":\"" + longName + "\",\"offset\":0," + "\"size\":1}",
                        "name must match"),
                Arguments.of(
                        "missing size",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":0}",
                        "offset and size are required"),
                Arguments.of(
                        "missing offset",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"size\":1}",
                        "offset and size are required"),
                Arguments.of("missing name", "{\"kind\":\"host-shm\",\"offset\":0,\"size\":1}", "name must match"),
                Arguments.of("missing kind", "{\"name\":\"$\",\"offset\":0,\"size\":1}", "kind must be \"host-shm\""),
                Arguments.of(
                        "other kind",
                        "{\"kind\":\"cuda-ipc\",\"name\":\"$\",\"offset\":0,\"size\":1}",
                        "kind must be \"host-shm\""),
                Arguments.of(
                        "duplicate name",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"name\":\"$\",\"offset\":0," + "\"size\":1}",
                        "duplicate key \"name\""),
                Arguments.of(
                        "duplicate offset",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":0,\"offset\":0," + "\"size\":1}",
                        "duplicate key \"offset\""),
                Arguments.of(
                        "duplicate kind",
                        "{\"kind\":\"host-shm\",\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":0," + "\"size\":1}",
                        "duplicate key \"kind\""),
                Arguments.of(
                        "unknown key",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":0,\"size\":1,\"path\":\"/\"}",
                        "unknown key \"path\""),
                Arguments.of(
                        "negative offset",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":-1,\"size\":1}",
                        "numbers must be non-negative integers"),
                Arguments.of(
                        "negative size",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":0,\"size\":-4096}",
                        "numbers must be non-negative integers"),
                Arguments.of(
                        "huge offset",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":9223372036854775807," + "\"size\":1}",
                        "numbers must be non-negative integers"),
                Arguments.of(
                        "huge size",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":0," + "\"size\":18446744073709551615}",
                        "numbers must be non-negative integers"),
                Arguments.of(
                        "fractional",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":0.5,\"size\":1}",
                        "malformed JSON"),
                Arguments.of(
                        "string number",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":\"0\",\"size\":1}",
                        "numbers must be non-negative integers"),
                Arguments.of(
                        "escape in name",
                        "{\"kind\":\"host-shm\",\"name\":\"pega_\\u002f\",\"offset\":0,\"size\":1}",
                        "escapes and control characters are not allowed"),
                Arguments.of(
                        "trailing bytes",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":0,\"size\":1} {}",
                        "trailing bytes"),
                Arguments.of("array", "[\"pega_x\"]", "malformed JSON"),
                Arguments.of("not JSON", "hello, server", "malformed JSON"),
                Arguments.of("empty", "", "got 0"),
                Arguments.of(
                        "size zero",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":0,\"size\":0}",
                        "size must be > 0"),
                Arguments.of(
                        "range past end",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":4096,\"size\":4097}",
                        "exceeds /dev/shm/$ of 8192 bytes"),
                Arguments.of(
                        "offset past end",
                        "{\"kind\":\"host-shm\",\"name\":\"$\",\"offset\":8192,\"size\":1}",
                        "exceeds"),
                Arguments.of(
                        "missing object",
                        "{\"kind\":\"host-shm\",\"name\":\"pega_no_such_object_" + UUID.randomUUID()
                                + "\",\"offset\":0,\"size\":1}",
                        "cannot be opened"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostileDescriptors")
    void shouldRejectHostileDescriptorWithoutMapping(String label, String template, String messagePart) {
        assertRejected(json(template.replace("$", object)), messagePart.replace("$", object));
    }

    @Test
    void shouldRejectOversizedDescriptor() {
        byte[] big = json(
                "{\"kind\":\"host-shm\",\"name\":\"" + object + "\",\"offset\":0,\"size\":1" + " ".repeat(1100) + "}");

        assertRejected(big, "at most 1024 bytes, got " + big.length);
    }

    @Test
    void shouldRejectPickleWithHostBackendHint() {
        byte[] pickle = {(byte) 0x80, 0x04, (byte) 0x95, 0x10, 0, 0, 0, 0, 0, 0, 0};

        assertRejected(pickle, "host device backend");
    }

    @Test
    void shouldRefuseSymlinkNamedLikeShmObject() throws IOException {
        Path link =
                SHM.resolve("pega_hosttest_link_" + UUID.randomUUID().toString().replace("-", ""));
        Files.createSymbolicLink(link, SHM.resolve(object));
        created.add(link);

        assertRejected(descriptor(link.getFileName().toString(), 0, 1), "is not a regular shared-memory object");
    }

    @Test
    void shouldRefuseSymlinkToFileOutsideShm() throws IOException {
        Path link = SHM.resolve(
                "pega_hosttest_passwd_" + UUID.randomUUID().toString().replace("-", ""));
        Files.createSymbolicLink(link, Path.of("/etc/passwd"));
        created.add(link);

        assertRejected(descriptor(link.getFileName().toString(), 0, 1), "is not a regular shared-memory object");
    }

    @Test
    void shouldRefuseDirectory() throws IOException {
        Path dir =
                SHM.resolve("pega_hosttest_dir_" + UUID.randomUUID().toString().replace("-", ""));
        Files.createDirectory(dir);
        created.add(dir);

        assertRejected(descriptor(dir.getFileName().toString(), 0, 1), "is not a regular shared-memory object");
    }

    @Test
    void shouldRefuseEmptyObject() throws IOException {
        String empty = newObject(0);

        assertRejected(descriptor(empty, 0, 1), "is empty");
    }

    @Test
    void shouldAcceptNameOfExactly200CharactersAfterPrefix() throws IOException {
        String name = "pega_" + "b".repeat(200);
        Path path = SHM.resolve(name);
        Files.deleteIfExists(path);
        Files.write(path, new byte[4096]);
        created.add(path);

        LayerMemory memory = open(descriptor(name, 0, 4096));

        assertThat(memory.sizeBytes()).isEqualTo(4096);
    }

    @Test
    void shouldShareOneMappingBetweenLayersOfOneObject() {
        LayerMemory first = open(descriptor(object, 0, 4096));
        LayerMemory second = open(descriptor(object, 4096, 4096));

        assertThat(backend.mappedObjects()).isEqualTo(1);
        assertThat(second.baseAddress() - first.baseAddress()).isEqualTo(4096);
        first.close();
        assertThat(backend.mappedObjects()).as("second layer still holds it").isEqualTo(1);
        second.close();
        second.close();
        assertThat(backend.mappedObjects()).isZero();
    }

    @Test
    void shouldMapRecreatedObjectOfSameNameAfresh() throws IOException {
        LayerMemory before = open(descriptor(object, 0, 4096));
        Path path = SHM.resolve(object);
        Files.delete(path);
        Files.write(path, new byte[2 * OBJECT_BYTES]);

        LayerMemory after = open(descriptor(object, OBJECT_BYTES, OBJECT_BYTES));

        assertThat(backend.mappedObjects()).isEqualTo(2);
        assertThat(after.baseAddress()).isNotEqualTo(before.baseAddress() + OBJECT_BYTES);
    }

    @Test
    void shouldAcceptWhitespaceAndAnyKeyOrder() {
        LayerMemory memory = open(
                json(" {\n \"size\" : 100 , \"offset\":28,\"name\" :\"" + object + "\",\"kind\":\"host-shm\" }\n"));

        assertThat(memory.sizeBytes()).isEqualTo(100);
    }
}
