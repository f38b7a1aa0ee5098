package io.pegaflow.testkit.browser;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * One headless Chromium session (Debian's {@code /usr/bin/chromium} and {@code /usr/bin/chromedriver}, given by path
 * so Selenium Manager never downloads anything), with its own throw-away profile. Start one per test class; every
 * wait has a deadline. {@link #close()} quits the browser, stops the driver and deletes the profile.
 */
public final class HeadlessChromium implements AutoCloseable {

    public static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    public static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    /** Set to {@code true} to copy every screenshot into the repository's {@code docs/images/} too. */
    public static final String DOCS_PROPERTY = "pega.screenshots.docs";

    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final AtomicBoolean SKIP_REPORTED = new AtomicBoolean();

    private final ChromeDriverService service;
    private final ChromeDriver driver;
    private final Path profile;
    private final Path screenshots;

    private HeadlessChromium(ChromeDriverService service, ChromeDriver driver, Path profile, Path screenshots) {
        this.service = service;
        this.driver = driver;
        this.profile = profile;
        this.screenshots = screenshots;
    }

    /**
     * Why no browser test can run here, or empty when both binaries are installed. The reason is also printed on
     * stdout, once per test JVM, since Surefire shows a skipped test only as a count (as the PostgreSQL tests do).
     */
    public static Optional<String> unavailable() {
        return unavailable(List.of(CHROMIUM, CHROMEDRIVER), System.out);
    }

    static Optional<String> unavailable(List<Path> binaries, PrintStream out) {
        for (Path p : binaries) {
            if (!Files.isExecutable(p)) {
                String why = "Browser tests skipped: " + p + " is not installed (apt-get install chromium"
                        + " chromium-driver; .ci/run installs them)";
                if (SKIP_REPORTED.compareAndSet(false, true)) {
                    out.println(why);
                }
                return Optional.of(why);
            }
        }
        return Optional.empty();
    }

    /**
     * Starts the browser.
     *
     * @param screenshots where {@link #screenshot} writes its PNGs (created if missing)
     */
    public static HeadlessChromium start(Path screenshots) {
        Path profile;
        try {
            Files.createDirectories(screenshots);
            profile = Files.createTempDirectory("pega-chrome-profile");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--window-size=1280,900",
                "--user-data-dir=" + profile);
        try {
            return new HeadlessChromium(service, new ChromeDriver(service, options), profile, screenshots);
        } catch (RuntimeException e) {
            service.stop();
            deleteTree(profile);
            throw e;
        }
    }

    public WebDriver driver() {
        return driver;
    }

    public void open(String url) {
        driver.get(url);
    }

    /** Waits until {@code condition} returns a non-null, non-false value; fails after 15 s. */
    public <T> T await(String what, Function<WebDriver, @Nullable T> condition) {
        return new WebDriverWait(driver, WAIT)
                .withMessage(() -> what + "; page text: " + pageText())
                .until(condition);
    }

    /** Waits until the element exists and its text contains {@code text}; returns the element. */
    public WebElement awaitText(By by, String text) {
        return await(by + " containing '" + text + "'", d -> {
            List<WebElement> found = d.findElements(by);
            return found.isEmpty() || !found.get(0).getText().contains(text) ? null : found.get(0);
        });
    }

    /** Waits until an element matching {@code by} exists. */
    public WebElement awaitElement(By by) {
        return await(by + " present", d -> {
            List<WebElement> found = d.findElements(by);
            return found.isEmpty() ? null : found.get(0);
        });
    }

    /** Waits until no element matches {@code by}. */
    public void awaitAbsent(By by) {
        await(by + " gone", d -> d.findElements(by).isEmpty() ? Boolean.TRUE : null);
    }

    public String pageText() {
        List<WebElement> body = driver.findElements(By.tagName("body"));
        return body.isEmpty() ? "" : body.get(0).getText();
    }

    /**
     * The URLs of every resource the page loaded whose host differs from the page's own, as the browser's
     * Resource Timing saw them: empty when the page kept to its origin.
     */
    public List<String> foreignRequests() {
        String origin = URI.create(driver.getCurrentUrl()).getAuthority();
        Object names = ((JavascriptExecutor) driver)
                .executeScript("return performance.getEntriesByType('resource').map(e => e.name);");
        List<String> out = new ArrayList<>();
        if (names instanceof List<?> list) {
            for (Object name : list) {
                String url = String.valueOf(name);
                URI uri = URI.create(url);
                if (uri.getAuthority() != null && !uri.getAuthority().equals(origin)) {
                    out.add(url);
                }
            }
        }
        return out;
    }

    /**
     * Writes a PNG of the window as {@code <name>.png} under the screenshot folder, and under the repository's
     * {@code docs/images/} too when {@code -Dpega.screenshots.docs=true}.
     */
    public Path screenshot(String name) {
        Path file = screenshots.resolve(name + ".png");
        try {
            Files.write(file, driver.getScreenshotAs(OutputType.BYTES));
            if (Boolean.parseBoolean(System.getProperty(DOCS_PROPERTY))) {
                Path docs = docsImages();
                Files.createDirectories(docs);
                Files.copy(file, docs.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /** {@code docs/images} of the repository the test runs in: the first folder upwards holding mvnw and docs/. */
    static Path docsImages() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            if (Files.isRegularFile(dir.resolve("mvnw")) && Files.isDirectory(dir.resolve("docs"))) {
                return dir.resolve("docs").resolve("images");
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException(
                "no repository root (mvnw and docs/) above " + Path.of("").toAbsolutePath());
    }

    @Override
    public void close() {
        try {
            driver.quit();
        } finally {
            service.stop();
            deleteTree(profile);
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            // A profile left in /tmp is harmless; the test's result does not depend on it.
        }
    }
}
