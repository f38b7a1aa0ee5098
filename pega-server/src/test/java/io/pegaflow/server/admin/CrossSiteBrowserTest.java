package io.pegaflow.server.admin;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.ByteString;
import com.sun.net.httpserver.HttpServer;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import io.pegaflow.testkit.browser.HeadlessChromium;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;

/**
 * CSRF against the documented secure shape (HTTP on 127.0.0.1, no token, so every local caller is admitted): a page
 * served from another origin ({@code http://localhost:<other port>}, as an attacker's page or a local dev server
 * would be) runs {@code fetch(..., {method: 'POST', mode: 'no-cors'})} at the memory cleanup and auto-submits a form
 * to the instance cleanup. Both requests reach the server and nothing is cleaned; the dashboard's own buttons, on the
 * same server, still clean.
 */
@Timeout(180)
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "spring.grpc.server.host=127.0.0.1",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host"
        })
class CrossSiteBrowserTest {
    private static final String HOST = "127.0.0.1";
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final BlockPattern PATTERN = BlockPattern.perByte(71);
    private static HeadlessChromium browser;
    private static HttpServer attacker;

    @Autowired
    GrpcPort grpcPort;

    @Autowired
    PegaEngine engine;

    @Autowired
    Environment env;

    private MockScheduler scheduler;

    @BeforeAll
    static void startBrowser() {
        Optional<String> missing = HeadlessChromium.unavailable();
        assumeTrue(missing.isEmpty(), () -> missing.orElse(""));
        browser = HeadlessChromium.start(Path.of("target", "screenshots"));
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.close();
        }
        if (attacker != null) {
            attacker.stop(0);
        }
    }

    @BeforeEach
    void openScheduler() {
        engine.cleanupInstances(null);
        engine.cleanupMemory();
        scheduler = MockScheduler.connect(HOST, grpcPort.port());
    }

    @AfterEach
    void closeScheduler() {
        scheduler.close();
        engine.cleanupInstances(null);
        engine.flushSeals();
        engine.cleanupMemory();
    }

    private String base() {
        return "http://" + HOST + ":" + env.getProperty("local.server.port");
    }

    private MockVllmWorker savedWorker(String id, List<ByteString> hashes) {
        MockVllmWorker w =
                ReferenceHarness.worker(HOST, grpcPort.port()).instanceId(id).build();
        w.register();
        w.fillBlocks(blockIds(4), PATTERN);
        w.save(blockIds(4), hashes);
        scheduler.awaitSealed(id, hashes, WAIT);
        return w;
    }

    /** The attacker's page, on another port of this host, aimed at this server's cleanups. */
    private String serveAttackPage() throws IOException {
        String page = """
                <!doctype html><title>csrf</title>
                <iframe name="sink" id="sink"></iframe>
                <form id="f" method="POST" action="%1$s/instances/cleanup" target="sink">
                  <input type="hidden" name="id" value="csrf-victim"></form>
                <script>
                  fetch('%1$s/cache/memory/cleanup', {method: 'POST', mode: 'no-cors'})
                    .then(() => document.body.dataset.fetch = 'answered', () => document.body.dataset.fetch = 'failed');
                  document.getElementById('sink').onload = () => document.body.dataset.form = 'answered';
                  document.getElementById('f').submit();
                </script>
                """.formatted(base());
        byte[] bytes = page.getBytes(StandardCharsets.UTF_8);
        attacker = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        attacker.createContext("/csrf.html", exchange -> {
            exchange.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        attacker.start();
        return "http://localhost:" + attacker.getAddress().getPort() + "/csrf.html";
    }

    @Test
    void shouldCleanNothingForAPageOfAnotherOrigin() throws IOException {
        List<ByteString> hashes = BlockPattern.hashes(711, 4);
        try (MockVllmWorker w = savedWorker("csrf-victim", hashes)) {
            browser.open(serveAttackPage());
            // Both requests went out and were answered (an opaque answer for no-cors, the refusal page in the frame).
            browser.await(
                    "the no-cors fetch answered",
                    d -> "answered".equals(d.findElement(By.tagName("body")).getDomAttribute("data-fetch"))
                            ? Boolean.TRUE
                            : null);
            browser.await(
                    "the form post answered",
                    d -> "answered".equals(d.findElement(By.tagName("body")).getDomAttribute("data-form"))
                            ? Boolean.TRUE
                            : null);

            assertThat(engine.instanceIds())
                    .as("the instance survived the form post")
                    .contains(w.instanceId());
            assertThat(engine.cache().size())
                    .as("nothing was evicted by the fetch")
                    .isEqualTo(4);
        }
    }

    @Test
    void shouldStillCleanFromTheDashboardItself() {
        List<ByteString> hashes = BlockPattern.hashes(712, 4);
        try (MockVllmWorker w = savedWorker("csrf-dashboard", hashes)) {
            browser.open(base() + "/#actions");
            browser.awaitElement(By.cssSelector("#instance-select option[value='csrf-dashboard']"));
            browser.driver().findElement(By.id("cleanup-memory")).click();
            browser.await(
                    "confirmation dialog", d -> d.findElement(By.id("confirm")).isDisplayed() ? Boolean.TRUE : null);
            browser.driver().findElement(By.id("confirm-yes")).click();
            assertThat(browser.awaitText(By.id("action-result"), "Done").getText())
                    .contains("\"evicted_blocks\":4");
            assertThat(engine.cache().size()).isZero();
            assertThat(engine.instanceIds()).contains(w.instanceId());
        }
    }
}
