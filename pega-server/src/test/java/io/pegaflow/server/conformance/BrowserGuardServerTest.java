package io.pegaflow.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.RawHttp;
import io.pegaflow.testkit.ReferenceHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * UI-03 and UI-04 on the real cleanups of a loopback-only, tokenless server (every local caller admitted by the admin
 * rule): what a rebinding name and another site's page send is refused, the instance stays; curl's request with the
 * marker still cleans.
 */
@Timeout(60)
class BrowserGuardServerTest extends ServerTestBase {

    private String send(String method, String path, String... headers) {
        return RawHttp.exchange(httpPort(), method, path, headers);
    }

    @Test
    void shouldRefuseARebindingHostOnTheAdminApi() {
        assertThat(send("GET", "/api/admin/overview", "Host: rebind.attacker.example:" + httpPort()))
                .startsWith("403 Host rebind.attacker.example");
        assertThat(send("GET", "/api/admin/overview", "Host: localhost:" + httpPort()))
                .startsWith("200 ");
    }

    @Test
    void shouldRefuseCrossSiteCleanupsAndKeepTheInstance() {
        try (MockVllmWorker w =
                ReferenceHarness.worker(HOST, port()).instanceId("guarded").build()) {
            w.register();

            assertThat(send("POST", "/instances/cleanup", "Origin: http://evil.example", "X-Pega-Request: 1"))
                    .startsWith("403 cross-origin request refused");
            assertThat(send("POST", "/instances/cleanup", "Content-Type: application/x-www-form-urlencoded"))
                    .startsWith("403 mutations need the header 'X-Pega-Request: 1'");
            assertThat(send("POST", "/cache/memory/cleanup", "Sec-Fetch-Site: cross-site"))
                    .startsWith("403 cross-site request refused");
            assertThat(engine.instanceIds()).contains("guarded");

            assertThat(send("POST", "/instances/cleanup?id=guarded", "X-Pega-Request: 1"))
                    .startsWith("200 ")
                    .contains("guarded");
            assertThat(engine.instanceIds()).doesNotContain("guarded");
        }
    }
}
