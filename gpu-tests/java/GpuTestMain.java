import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs the CUDA test packages (GPU-tagged tests included) on a machine without Maven: the GPU machine gets a jlink JRE
 * and the test classpath from scripts/device-bundle.sh. Usage: java -cp ... GpuTestMain REPORT_FILE [TEST_CLASS | TEST_CLASS#method ...]
 */
public final class GpuTestMain {
    public static void main(String[] args) throws Exception {
        List<String> lines = new ArrayList<>();
        LauncherDiscoveryRequestBuilder builder = LauncherDiscoveryRequestBuilder.request();
        if (args.length > 1) { // only the named classes
            for (int i = 1; i < args.length; i++) {
                builder.selectors(args[i].contains("#") ? selectMethod(args[i]) : selectClass(args[i]));
            }
        } else {
            builder.selectors(selectPackage("io.pegaflow.sys.cuda"), selectPackage("io.pegaflow.core.device.cuda"));
        }
        LauncherDiscoveryRequest request = builder.build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        TestExecutionListener printer = new TestExecutionListener() {
            @Override
            public void executionSkipped(TestIdentifier id, String reason) {
                log(lines, "SKIP " + name(id) + ": " + reason);
            }

            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (!id.isTest()) {
                    if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
                        log(lines, "SKIP " + name(id) + " (all tests): "
                                + result.getThrowable().map(Throwable::getMessage).orElse(""));
                    } else if (result.getStatus() == TestExecutionResult.Status.FAILED) {
                        log(lines, "FAIL " + name(id) + " (container): " + trace(result));
                    }
                    return;
                }
                switch (result.getStatus()) {
                    case SUCCESSFUL -> log(lines, "PASS " + name(id));
                    case ABORTED -> log(lines, "SKIP " + name(id) + ": " + result.getThrowable().map(Throwable::getMessage).orElse(""));
                    case FAILED -> log(lines, "FAIL " + name(id) + ": " + trace(result));
                }
            }
        };
        launcher.execute(request, summary, printer);
        TestExecutionSummary s = summary.getSummary();
        log(lines, String.format("tests found %d, succeeded %d, failed %d, aborted %d, skipped %d, %.1f s",
                s.getTestsFoundCount(), s.getTestsSucceededCount(), s.getTestsFailedCount(),
                s.getTestsAbortedCount(), s.getTestsSkippedCount(),
                (s.getTimeFinished() - s.getTimeStarted()) / 1000.0));
        if (args.length > 0) {
            Files.write(Path.of(args[0]), lines);
        }
        System.exit(s.getTotalFailureCount() == 0 ? 0 : 1);
    }

    private static String name(TestIdentifier id) {
        String legacy = id.getLegacyReportingName();
        String uid = id.getUniqueId();
        int c = uid.indexOf("[class:");
        String cls = c >= 0 ? uid.substring(c + 7, uid.indexOf(']', c)) : "";
        cls = cls.substring(cls.lastIndexOf('.') + 1);
        return cls.isEmpty() ? legacy : cls + "." + legacy;
    }

    private static String trace(TestExecutionResult r) {
        return r.getThrowable()
                .map(t -> {
                    StringWriter w = new StringWriter();
                    t.printStackTrace(new PrintWriter(w));
                    String s = w.toString();
                    return s.length() > 4000 ? s.substring(0, 4000) + "..." : s;
                })
                .orElse("");
    }

    private static synchronized void log(List<String> lines, String line) {
        System.out.println(line);
        lines.add(line);
    }
}
