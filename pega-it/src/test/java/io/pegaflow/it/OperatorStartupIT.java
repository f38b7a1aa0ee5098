package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.testkit.ChildJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped jar as an operator starts it, from a directory that is not the repository: the profiles come from
 * inside the jar, the ready summary names them, /actuator/info carries the build, and a mistyped key is one line.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class OperatorStartupIT {

    @TempDir
    Path dir;

    @Test
    void shouldStartTheDevProfileFromInsideTheJarOutsideTheRepository() throws Exception {
        int[] ports = ChildJvm.freePorts(2);
        List<String> args = List.of(
                "-jar",
                JarMetadata.jar("pega.it.serverJar"),
                "--spring.profiles.active=dev",
                "--spring.grpc.server.port=" + ports[0],
                "--server.port=" + ports[1]);
        try (ChildJvm server = ChildJvm.start("dev server", dir, args, ChildJvm.pegaServerReady(ports[1]))) {
            String info = ChildJvm.httpGet(ports[1], "/actuator/info");
            assertThat(info).contains("\"build\"").contains("\"artifact\":\"pega-server\"");
            // Readiness turns UP when gRPC is bound; the summary follows at ApplicationReadyEvent, a moment later.
            await().atMost(Duration.ofSeconds(30)).until(() -> server.logText().contains("pega-server ready"));
            String log = server.logText();
            assertThat(log)
                    .as("the ready summary")
                    .contains("pega-server ready")
                    .contains("profile     dev")
                    .containsPattern("config .*class path resource \\[application-dev.yml\\]")
                    .doesNotContain("file [")
                    .contains("pool        256.0 MiB");
            assertThat(log).as("the dev profile's debug logs").contains("DEBUG");
        }
    }

    @Test
    void shouldRefuseAMistypedKeyWithOneLine() throws Exception {
        ChildJvm server = ChildJvm.runToExit(
                "typo server",
                dir,
                List.of(
                        "-jar",
                        JarMetadata.jar("pega.it.serverJar"),
                        "--server.port=0",
                        "--spring.grpc.server.port=0",
                        "--pega.pool.sise=1GB"),
                Duration.ofSeconds(90));
        String log = server.logText();
        assertThat(server.process().exitValue()).as(log).isEqualTo(1);
        assertThat(log.lines().filter(l -> l.contains(" ERROR ")).toList())
                .as(log)
                .singleElement()
                .satisfies(l -> assertThat(l).contains("did you mean pega.pool.size?"));
        assertThat(log).doesNotContain("\tat ");
    }
}
