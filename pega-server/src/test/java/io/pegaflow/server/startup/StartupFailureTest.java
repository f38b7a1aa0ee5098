package io.pegaflow.server.startup;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.server.PegaServerApplication;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Whole-server starts that must fail before anything costly, each with the one line an operator reads: the failure
 * runs through the same analyzer and line format as the real process ({@link OneLineStartupFailureTest} shows the
 * process's whole output).
 */
@Timeout(180)
class StartupFailureTest {
    private static final long GIB = 1L << 30;

    @TempDir
    Path dir;

    private static String[] args(String... extra) {
        return StartupFailures.hostArgs(extra);
    }

    /** The one line the process would print for a start with {@code extra}. */
    private static String failureLine(String... extra) {
        return OneLineFailureReporter.line(StartupFailures.analysisOf(args(extra)));
    }

    @Test
    void shouldRefuseAnUnknownKeyAndSuggestTheKnownOne() {
        assertThat(failureLine("--pega.pool.sise=1GB"))
                .startsWith("pega.pool.sise: 1GB (command line) (expected: a key of pega-server")
                .contains("did you mean pega.pool.size?");
        assertThat(failureLine("--pega.ssd.path=/tmp/x")).contains("did you mean pega.ssd.paths?");
        assertThat(failureLine("--pega.metaserver.allow-loopbak=true"))
                .contains("did you mean pega.metaserver.allow-loopback?");
    }

    @Test
    void shouldRefuseAnUnknownSpringKeyUnderThePrefixesTheDocsNameAndSuggestTheKnownOne() {
        assertThat(failureLine("--server.prot=9095"))
                .startsWith("server.prot: 9095 (command line) (expected: a key that Spring Boot or spring-grpc binds")
                .contains("did you mean server.port?");
        assertThat(failureLine("--spring.grpc.server.prot=50066")).contains("did you mean spring.grpc.server.port?");
        assertThat(failureLine("--management.endpoint.health.probes.enable=true"))
                .contains("did you mean management.endpoint.health.probes.enabled?");
    }

    @Test
    void shouldRefuseAnExposedEndpointThatDoesNotExist() {
        assertThat(failureLine("--management.endpoints.web.exposure.include=health,loggerz"))
                .startsWith("management.endpoints.web.exposure.include: loggerz (command line)")
                .contains("expected: an actuator endpoint id or *; did you mean loggers?");
    }

    @Test
    void shouldRefuseAProfileWithoutItsFileAndSuggestTheShippedOne() {
        assertThat(failureLine("--spring.profiles.active=prodution"))
                .startsWith("spring.profiles.active: prodution (expected: a profile with its own")
                .contains("did you mean production?");
        assertThat(failureLine("--spring.profiles.active=dev,nosuchprofile"))
                .startsWith("spring.profiles.active: nosuchprofile");
    }

    @Test
    void shouldListEveryUnknownKeyInTheOneLine() {
        assertThat(failureLine("--pega.pool.sise=1GB", "--pega.bogus=1"))
                .startsWith("pega.")
                .contains("also unknown: pega.");
    }

    @Test
    void shouldRefuseAPoolLargerThanTheHostBeforeMappingIt() {
        long total = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getTotalMemorySize();
        String size = (2 * total / GIB + 1) + "GB";
        // Mapping it would fail with "mmap failed (errno 12)" instead: the preflight's text shows it came first.
        assertThat(failureLine("--pega.pool.size=" + size))
                .startsWith("pega.pool.size: " + size + " (expected: at most ")
                .contains("MemAvailable")
                .contains("Fix: lower pega.pool.size");
    }

    @Test
    void shouldRefuseAValueThatDoesNotBindNamingTheUnits() {
        assertThat(failureLine("--pega.pool.size=lots"))
                .startsWith("pega.pool.size: lots (command line)")
                .contains("expected: a size such as 512MB or 2GB");
        assertThat(failureLine("--pega.pool.shards=0"))
                .startsWith("pega.pool.shards: 0")
                .contains("expected: must be greater than or equal to 1");
    }

    @Test
    void shouldRefuseAGrpcPortInUse() throws IOException {
        try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = held.getLocalPort();
            assertThat(failureLine("--spring.grpc.server.port=" + port, "--spring.grpc.server.host=127.0.0.1"))
                    .startsWith("spring.grpc.server.port: " + port + " (expected: a port free on 127.0.0.1");
        }
    }

    @Test
    void shouldRefuseSsdCapacityAboveFreeSpaceAndLeaveNoFileBehind() throws IOException {
        long free = Files.getFileStore(dir).getUsableSpace();
        String capacity = (free / GIB + 16) + "GB";
        assertThat(failureLine("--pega.ssd.enabled=true", "--pega.ssd.paths=" + dir, "--pega.ssd.capacity=" + capacity))
                .startsWith("pega.ssd.capacity: " + capacity + " (expected: shards that fit");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files).as("files in the shard directory").isEmpty();
        }
    }

    @Test
    void shouldRefuseAnAdvertiseAddressPeersCannotDialBeforeMappingThePool() {
        assertThat(failureLine("--pega.metaserver.addr=127.0.0.1:1", "--pega.metaserver.advertise-addr=0.0.0.0:50055"))
                .startsWith("pega.metaserver.advertise-addr: 0.0.0.0:50055");
    }

    @Test
    void shouldTurnTheSsdTierOnFromPathsAlone() throws IOException {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(PegaServerApplication.class)
                .run(args("--pega.ssd.paths=" + dir, "--pega.ssd.capacity=8MB", "--pega.ssd.free-space-margin=0B"))) {
            assertThat(context.getBeansOfType(SsdStore.class)).hasSize(1);
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("shard-000000.dat");
        }
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(PegaServerApplication.class)
                .run(args("--pega.ssd.paths=" + dir, "--pega.ssd.enabled=false"))) {
            assertThat(context.getBeansOfType(SsdStore.class))
                    .as("written out, false wins")
                    .isEmpty();
        }
    }
}
