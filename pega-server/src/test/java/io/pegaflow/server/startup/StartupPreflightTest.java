package io.pegaflow.server.startup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.device.cuda.CudaDeviceBackend;
import io.pegaflow.server.config.PegaProperties;
import io.pegaflow.server.ssd.SsdProperties;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;

/** Each preflight check on its own, against real sockets, real directories and a given memory picture. */
@Timeout(30)
class StartupPreflightTest {
    private static final long GIB = 1L << 30;

    @TempDir
    Path dir;

    private static PegaProperties.Pool pool(String size, boolean hugePages) {
        return new PegaProperties.Pool(
                DataSize.parse(size),
                1,
                hugePages,
                -1,
                DataSize.ofBytes(0),
                0,
                DataSize.ofGigabytes(1),
                DataSize.ofBytes(0));
    }

    private static HostMemory memory(long availableBytes, long hugeFreeBytes) {
        return new HostMemory(availableBytes, "MemAvailable", hugeFreeBytes);
    }

    @Test
    void shouldRefuseAPoolLargerThanAvailableMemoryLessMarginAndHeapRoom() {
        Runtime jvm = Runtime.getRuntime();
        long heapRoom = jvm.maxMemory() - jvm.totalMemory();
        long available = 8 * GIB + heapRoom;
        // 8 GiB after the heap's room; the 1 GB margin leaves 7 GiB for the pool.
        assertThatCode(() -> StartupPreflight.checkPool(pool("7GB", false), memory(available, 0), jvm))
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> StartupPreflight.checkPool(pool("8GB", false), memory(available, 0), jvm))
                .isInstanceOfSatisfying(StartupCheckException.class, e -> {
                    assertThat(e.key()).isEqualTo("pega.pool.size");
                    assertThat(e.getMessage())
                            .startsWith("pega.pool.size: 8GB (expected: at most ")
                            .contains("pega.pool.memory-margin 1GB");
                    assertThat(e.fix()).contains("lower pega.pool.size");
                });
    }

    @Test
    void shouldCountFreeHugePagesForAHugePagePool() {
        Runtime jvm = Runtime.getRuntime();
        assertThatCode(() -> StartupPreflight.checkPool(pool("4GB", true), memory(GIB, 4 * GIB), jvm))
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> StartupPreflight.checkPool(pool("4GB", false), memory(GIB, 4 * GIB), jvm))
                .isInstanceOf(StartupCheckException.class);
    }

    @Test
    void shouldRefuseAPortAnotherSocketHolds() throws IOException {
        try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() ->
                            StartupPreflight.checkPortFree("spring.grpc.server.port", "127.0.0.1", held.getLocalPort()))
                    .isInstanceOfSatisfying(
                            StartupCheckException.class,
                            e -> assertThat(e.getMessage())
                                    .startsWith("spring.grpc.server.port: " + held.getLocalPort()
                                            + " (expected: a port free"));
        }
        int free;
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            free = probe.getLocalPort();
        }
        assertThatCode(() -> StartupPreflight.checkPortFree("server.port", "127.0.0.1", free))
                .doesNotThrowAnyException();
        assertThatCode(() -> StartupPreflight.checkPortFree("server.port", "127.0.0.1", 0))
                .doesNotThrowAnyException();
    }

    private static SsdProperties ssd(List<String> paths, long capacityBytes) {
        return new SsdProperties(
                true,
                paths,
                DataSize.ofBytes(capacityBytes),
                DataSize.ofBytes(0),
                8,
                2,
                2,
                16,
                800,
                true,
                DataSize.ofGigabytes(1));
    }

    @Test
    void shouldRefuseSsdCapacityAboveFreeSpaceBeforeCreatingAnyFile() throws IOException {
        long free = Files.getFileStore(dir).getUsableSpace();
        assertThatThrownBy(() -> StartupPreflight.checkSsd(ssd(List.of(dir.toString()), free)))
                .isInstanceOfSatisfying(StartupCheckException.class, e -> {
                    assertThat(e.key()).isEqualTo("pega.ssd.capacity");
                    assertThat(e.getMessage()).contains("free").contains("pega.ssd.free-space-margin 1GB");
                });
        try (var files = Files.list(dir)) {
            assertThat(files).as("files left in the shard directory").isEmpty();
        }
    }

    @Test
    void shouldAddUpShardsOnTheSameFilesystem() throws IOException {
        long free = Files.getFileStore(dir).getUsableSpace();
        // Two shards of half the capacity each: either fits alone, both together do not leave the 1 GB margin.
        long capacity = free - GIB / 2;
        List<String> two = List.of(dir.resolve("a").toString(), dir.resolve("b").toString());
        assertThatThrownBy(() -> StartupPreflight.checkSsd(ssd(two, capacity)))
                .isInstanceOf(StartupCheckException.class);
        assertThatCode(() -> StartupPreflight.checkSsd(ssd(two, free - 4 * GIB)))
                .doesNotThrowAnyException();
    }

    @Test
    void shouldRefuseAShardPathUnderAFileButCountMissingDirectoriesOnTheirParent() throws IOException {
        Path file = Files.writeString(dir.resolve("plain-file"), "x");
        String underFile = file.resolve("shard.dat").toString();
        assertThatThrownBy(() -> StartupPreflight.checkSsd(ssd(List.of(underFile), 1L << 20)))
                .isInstanceOfSatisfying(StartupCheckException.class, e -> {
                    assertThat(e.key()).isEqualTo("pega.ssd.paths");
                    assertThat(e.fix()).contains("is a file");
                });
        // The store creates missing directories; their space is that of the nearest existing one.
        String inNewDirs = dir.resolve("a").resolve("b").resolve("shard.dat").toString();
        assertThatCode(() -> StartupPreflight.checkSsd(ssd(List.of(inNewDirs), 1L << 20)))
                .doesNotThrowAnyException();
        assertThat(dir.resolve("a")).as("the preflight creates nothing").doesNotExist();
    }

    @Test
    void shouldRefuseTheCudaBackendExactlyWhenNoGpuIsUsable() {
        if (CudaDeviceBackend.isAvailable()) {
            assertThatCode(() -> StartupPreflight.checkBackend("cuda")).doesNotThrowAnyException();
        } else {
            assertThatThrownBy(() -> StartupPreflight.checkBackend("cuda"))
                    .isInstanceOfSatisfying(
                            StartupCheckException.class,
                            e -> assertThat(e.key()).isEqualTo("pega.device.backend"));
        }
        assertThatCode(() -> StartupPreflight.checkBackend("auto")).doesNotThrowAnyException();
        assertThatCode(() -> StartupPreflight.checkBackend("host")).doesNotThrowAnyException();
    }
}
