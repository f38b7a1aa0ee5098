package io.pegaflow.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.sys.NativeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ShmDeviceMemoryTest {

    @Test
    void shouldCreateZeroFilledObjectUnderDevShmAndUnlinkOnClose() throws IOException {
        Path path;
        try (ShmDeviceMemory memory = ShmDeviceMemory.create(8192)) {
            assertThat(memory.name()).matches("^pega_dev_[0-9a-f]{32}$");
            path = Path.of("/dev/shm", memory.name());
            assertThat(memory.path()).isEqualTo(path.toString());
            assertThat(Files.size(path)).isEqualTo(8192);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(path)))
                    .isEqualTo("rw-------");
            assertThat(memory.address()).isNotZero();
            assertThat(memory.sizeBytes()).isEqualTo(8192);
            assertThat(memory.readBytes(0, 8192)).containsOnly((byte) 0);
        }
        assertThat(Files.exists(path)).isFalse();
    }

    @Test
    void shouldWriteThroughTheSharedMappingSoTheFileSeesTheBytes() throws IOException {
        try (ShmDeviceMemory memory = ShmDeviceMemory.create(4096)) {
            byte[] data = "kv-bytes".getBytes(StandardCharsets.US_ASCII);
            memory.writeBytes(100, data);
            memory.fill(200, 3, (byte) 0x7F);

            assertThat(memory.readBytes(100, data.length)).isEqualTo(data);
            byte[] file = Files.readAllBytes(Path.of(memory.path()));
            assertThat(Arrays.copyOfRange(file, 100, 108)).isEqualTo(data);
            assertThat(Arrays.copyOfRange(file, 199, 204)).containsExactly(0, 0x7F, 0x7F, 0x7F, 0);

            memory.zero();
            assertThat(Files.readAllBytes(Path.of(memory.path()))).containsOnly((byte) 0);
        }
    }

    @Test
    void shouldProduceTheHostBackendDescriptorExactly() {
        try (ShmDeviceMemory memory = ShmDeviceMemory.create(4096)) {
            String json = new String(memory.descriptor(1024, 2048), StandardCharsets.UTF_8);
            assertThat(json)
                    .isEqualTo(
                            "{\"kind\":\"host-shm\",\"name\":\"" + memory.name() + "\",\"offset\":1024,\"size\":2048}");
        }
        assertThat(new String(ShmDeviceMemory.descriptorJson("pega_x", 0, 4096), StandardCharsets.UTF_8))
                .isEqualTo("{\"kind\":\"host-shm\",\"name\":\"pega_x\",\"offset\":0,\"size\":4096}");
    }

    @Test
    void shouldRejectRangesOutsideTheObject() {
        try (ShmDeviceMemory memory = ShmDeviceMemory.create(4096)) {
            assertThatThrownBy(() -> memory.descriptor(4096, 1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> memory.readBytes(4000, 97)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> memory.fill(-1, 1, (byte) 1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> memory.writeBytes(Long.MAX_VALUE, new byte[1]))
                    .isInstanceOf(IndexOutOfBoundsException.class);
            assertThat(memory.descriptor(0, 4096)).isNotEmpty();
        }
    }

    @Test
    void shouldCloseExactlyOnceAndRefuseAccessAfterwards() {
        ShmDeviceMemory memory = ShmDeviceMemory.create(4096);
        memory.close();
        memory.close();
        assertThat(memory.isClosed()).isTrue();
        assertThatThrownBy(() -> memory.readBytes(0, 1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(memory::address).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldRefuseAnExistingNameAndInvalidNames() {
        try (ShmDeviceMemory memory = ShmDeviceMemory.create(4096)) {
            assertThatThrownBy(() -> ShmDeviceMemory.create(memory.name(), 4096))
                    .isInstanceOf(NativeException.class)
                    .hasMessageContaining("open");
        }
        assertThatThrownBy(() -> ShmDeviceMemory.create("pega_../etc", 4096))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ShmDeviceMemory.create("other_name", 4096))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ShmDeviceMemory.create(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
