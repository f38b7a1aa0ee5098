package io.pegaflow.server.admin;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.ByteString;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ConnectorRelease;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import io.pegaflow.testkit.browser.HeadlessChromium;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;

/**
 * The dashboard in a real browser (Debian's headless Chromium) against a server where a mock worker saved and queried
 * blocks: what each page shows (on the overview each instance's connector version, generation and seal, for workers
 * of v0.22.4 and v0.23.12), that actions are refused without the token and succeed with it, and that no page asks
 * another host for anything. One browser for the class; a screenshot of each page lands in target/screenshots (and in
 * docs/images with {@code -Dpega.screenshots.docs=true}).
 */
@Timeout(180)
class AdminUiBrowserTest extends AdminServerBase {
    static final Path SHOTS = Path.of("target", "screenshots");
    private static final BlockPattern PATTERN = BlockPattern.perByte(53);
    private static HeadlessChromium browser;

    @BeforeAll
    static void startBrowser() {
        Optional<String> missing = HeadlessChromium.unavailable();
        assumeTrue(missing.isEmpty(), () -> missing.orElse(""));
        browser = HeadlessChromium.start(SHOTS);
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.close();
        }
    }

    private MockVllmWorker savedWorker(String id, List<ByteString> hashes) {
        MockVllmWorker w =
                ReferenceHarness.worker(HOST, grpcPort()).instanceId(id).build();
        w.register();
        w.fillBlocks(blockIds(4), PATTERN);
        w.save(blockIds(4), hashes);
        scheduler.awaitSealed(id, hashes, WAIT);
        return w;
    }

    private void openPage(String page) {
        browser.open(base() + "/#" + page);
        browser.await(
                "page " + page + " rendered",
                d -> page.equals(d.findElement(By.id("page")).getDomAttribute("data-page")) ? Boolean.TRUE : null);
    }

    private void assertOwnOriginOnly() {
        assertThat(browser.foreignRequests()).as("requests to other hosts").isEmpty();
    }

    @Test
    void shouldShowBlockCountPoolUsageAndInstanceOnTheOverview() {
        List<ByteString> hashes = BlockPattern.hashes(501, 4);
        try (MockVllmWorker w = savedWorker("ui-overview", hashes)) {
            QueryReady ready = scheduler.queryUntilReady(w.instanceId(), hashes, "ui", WAIT);
            scheduler.release(ready.getLease());
            history.sample();

            openPage("overview");

            assertThat(browser.awaitText(By.id("blocks"), "4").getText()).isEqualTo("4");
            assertThat(browser.awaitElement(By.id("pool-used")).getText()).startsWith("4.00 KiB / ");
            browser.awaitText(By.cssSelector("tr[data-instance='ui-overview']"), "mock-vllm");
            assertThat(browser.awaitElement(By.cssSelector("tr[data-tier='ram']"))
                            .getText())
                    .contains("RAM");
            browser.screenshot("admin-overview");
            assertOwnOriginOnly();
        }
    }

    @Test
    void shouldShowEachInstancesConnectorGenerationAndSeal() {
        try (MockVllmWorker reference = ReferenceHarness.worker(HOST, grpcPort())
                        .instanceId("ui-g0")
                        .build();
                MockVllmWorker rank0 = ReferenceHarness.worker(HOST, grpcPort())
                        .instanceId("ui-g3")
                        .connector(ConnectorRelease.V0_23_12)
                        .tp(0, 2)
                        .worldSize(2)
                        .deviceId(0)
                        .build();
                MockVllmWorker rank1 = ReferenceHarness.worker(HOST, grpcPort())
                        .instanceId("ui-g3")
                        .connector(ConnectorRelease.V0_23_12)
                        .tp(1, 2)
                        .worldSize(2)
                        .deviceId(1)
                        .build()) {
            reference.register();
            rank0.register();

            openPage("overview");

            awaitCell("ui-g0", "connector", "v0.22.4 (no version sent)");
            awaitCell("ui-g0", "generation", "G0 reference wire");
            awaitCell("ui-g0", "layer-space", "num_layers sent");
            awaitCell("ui-g0", "groups", "1");
            awaitCell("ui-g3", "connector", "0.23.12");
            awaitCell("ui-g3", "generation", "G3 grouped Load");
            awaitCell("ui-g3", "layer-space", "waiting: 1/2 workers registered");

            ((JavascriptExecutor) browser.driver())
                    .executeScript("document.getElementById('instance-table').scrollIntoView();");
            browser.screenshot("admin-instances");

            rank1.register();

            awaitCell("ui-g3", "layer-space", "sealed");
            assertOwnOriginOnly();
        }
    }

    /**
     * Waits until the {@code td.<cell>} of the instance's row on the overview reads exactly {@code text}; the page
     * re-renders every 2 s, so an element read between two renders is read again.
     */
    private void awaitCell(String instance, String cell, String text) {
        By by = By.cssSelector("tr[data-instance='" + instance + "'] td." + cell);
        browser.await(by + " reading '" + text + "'", d -> {
            try {
                List<WebElement> found = d.findElements(by);
                return (!found.isEmpty() && found.get(0).getText().equals(text)) ? Boolean.TRUE : null;
            } catch (StaleElementReferenceException e) {
                return null;
            }
        });
    }

    @Test
    void shouldShowTheLiveLeaseAndDropItAfterRelease() {
        List<ByteString> hashes = BlockPattern.hashes(502, 4);
        try (MockVllmWorker w = savedWorker("ui-lease", hashes)) {
            QueryReady ready = scheduler.queryUntilReady(w.instanceId(), hashes, "ui", WAIT);
            String prefix = HexFormat.of().formatHex(ready.getLease().toByteArray(), 0, 4);
            By row = By.cssSelector("tr[data-lease='" + prefix + "']");

            openPage("leases");

            WebElement lease = browser.awaitText(row, "ui-lease");
            assertThat(lease.getText()).contains(prefix).contains("expires in");
            assertThat(browser.awaitElement(By.id("lease-count")).getText()).isEqualTo("1");
            browser.screenshot("admin-leases");
            assertOwnOriginOnly();

            scheduler.release(ready.getLease());

            browser.awaitAbsent(row);
            browser.awaitElement(By.id("no-leases"));
        }
    }

    @Test
    void shouldSayWhichSubsystemsAreNotConfigured() {
        openPage("ssd");
        browser.awaitText(By.id("ssd-off"), "SSD tier not configured");
        browser.screenshot("admin-ssd-off");

        openPage("transfer");
        browser.awaitText(By.id("transfer-off"), "transfer engine not configured");
        browser.screenshot("admin-transfer-off");

        openPage("cluster");
        browser.awaitText(By.id("metaserver-off"), "metaserver not configured");
        assertOwnOriginOnly();
    }

    @Test
    void shouldRefuseActionsWithoutTheTokenAndRunThemWithIt() {
        List<ByteString> hashes = BlockPattern.hashes(503, 4);
        try (MockVllmWorker w = savedWorker("ui-actions", hashes)) {
            openPage("actions");
            browser.awaitText(By.id("access"), "refused");
            browser.awaitElement(By.cssSelector("#instance-select option[value='ui-actions']"));

            confirm(By.id("cleanup-memory"));
            WebElement refused = browser.awaitText(By.id("action-result"), "Refused (403)");
            assertThat(refused.getText()).contains("pega.admin.token").contains("server.address=127.0.0.1");
            assertThat(engine.cache().size()).as("nothing was evicted").isEqualTo(4);
            browser.screenshot("admin-actions-refused");

            browser.driver().findElement(By.id("token")).sendKeys(TOKEN);
            browser.driver().findElement(By.id("save-token")).click();
            browser.awaitText(By.id("access"), "enabled");
            confirm(By.id("cleanup-memory"));
            assertThat(browser.awaitText(By.id("action-result"), "Done").getText())
                    .contains("\"evicted_blocks\":4");
            assertThat(engine.cache().size()).isZero();

            new Select(browser.driver().findElement(By.id("instance-select"))).selectByValue(w.instanceId());
            confirm(By.id("cleanup-instance"));
            assertThat(browser.awaitText(By.id("action-result"), "removed_instances")
                            .getText())
                    .contains("ui-actions");
            assertThat(engine.instanceIds()).doesNotContain("ui-actions");
            browser.screenshot("admin-actions");
            assertOwnOriginOnly();
        } finally {
            browser.driver().findElement(By.id("clear-token")).click();
        }
    }

    /** This machine's own non-loopback IPv4 address: a browser that connects to it is off the host for the server. */
    private static @Nullable String nonLoopbackAddress() throws SocketException {
        return NetworkInterface.networkInterfaces()
                .filter(nic -> {
                    try {
                        return nic.isUp() && !nic.isLoopback();
                    } catch (SocketException e) {
                        return false;
                    }
                })
                .flatMap(NetworkInterface::inetAddresses)
                .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress())
                .map(InetAddress::getHostAddress)
                .findFirst()
                .orElse(null);
    }

    @Test
    void shouldAskABrowserOffTheHostForTheTokenBeforeShowingTheData() throws SocketException {
        String remote = nonLoopbackAddress();
        assumeTrue(remote != null, "no non-loopback IPv4 address to act as a remote browser");
        String origin = "http://" + remote + ":" + httpPort();
        try {
            browser.open(origin + "/#overview");
            browser.awaitText(By.id("needs-token"), "needs the admin token");
            browser.screenshot("admin-needs-token");

            browser.open(origin + "/#actions");
            browser.awaitText(By.id("access"), "refused");
            assertThat(browser.awaitText(By.cssSelector("#instance-select option"), "needs the admin token")
                            .getText())
                    .as("the instance list is an admin view")
                    .contains("needs the admin token");
            browser.driver().findElement(By.id("token")).sendKeys(TOKEN);
            browser.driver().findElement(By.id("save-token")).click();
            browser.awaitText(By.id("access"), "enabled");

            browser.open(origin + "/#overview");
            browser.awaitElement(By.id("pool-used"));
            browser.awaitAbsent(By.id("needs-token"));
        } finally {
            ((JavascriptExecutor) browser.driver()).executeScript("sessionStorage.removeItem('pega.admin.token');");
        }
    }

    /** Clicks an action's button, then Confirm in the page's dialog. */
    private void confirm(By button) {
        browser.driver().findElement(button).click();
        browser.await(
                "confirmation dialog", d -> d.findElement(By.id("confirm")).isDisplayed() ? Boolean.TRUE : null);
        browser.driver().findElement(By.id("confirm-yes")).click();
    }
}
