package io.pegaflow.metaserver.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.testkit.RawHttp;
import java.net.URI;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The metaserver's HTTP port refuses a rebinding name and another site's mutation, as the server's does. */
@Tag("integration")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaserverBrowserGuardTest {
    private static final String LOGGER = "/actuator/loggers/io.pegaflow.metaserver";

    @TempDir
    Path dir;

    @Test
    void shouldRefuseARebindingHostAndACrossSiteMutation() {
        try (MetaserverTestApp app = MetaserverTestApp.start(
                dir, new AdjustableClock(), "--management.endpoints.web.exposure.include=health,info,loggers")) {
            int port = URI.create(app.httpBase()).getPort();
            assertThat(RawHttp.exchange(port, "GET", "/api/nodes", "Host: rebind.attacker.example"))
                    .startsWith("403 Host rebind.attacker.example");
            assertThat(RawHttp.exchange(port, "GET", "/api/nodes")).startsWith("200 ");
            assertThat(RawHttp.exchange(
                            port, "POST", LOGGER, "Origin: http://evil.example", "Content-Type: application/json"))
                    .startsWith("403 cross-origin request refused");
            assertThat(RawHttp.exchange(port, "POST", LOGGER, "Content-Type: text/plain"))
                    .startsWith("403 mutations need the header");
        }
    }
}
