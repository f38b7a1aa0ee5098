package io.pegaflow.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.MessageLite;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs {@link ForeignCaller} as another operating-system user: {@code setpriv} drops to uid {@value #UID} and keeps
 * only {@code CAP_DAC_OVERRIDE}, so the child can read this build's class path under {@code /root} while every socket
 * it opens is listed with uid {@value #UID}, which is all the server's caller identity looks at.
 */
final class ForeignProcess implements AutoCloseable {
    static final int UID = 4242;

    private final Process process;
    private final BufferedReader stdout;
    private final List<String> lines = new ArrayList<>();

    private ForeignProcess(Process process) {
        this.process = process;
        this.stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Request arguments for {@link ForeignCaller}: {@code method:base64}. */
    static String call(String method, MessageLite request) {
        return method + ":" + Base64.getEncoder().encodeToString(request.toByteArray());
    }

    /** Starts the child and returns once it printed {@code DONE} (at most 60 s). */
    static ForeignProcess run(String host, int port, String... calls) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                "setpriv",
                "--reuid=" + UID,
                "--regid=" + UID,
                "--clear-groups",
                "--inh-caps=+dac_override",
                "--ambient-caps=+dac_override",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx96m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                ForeignCaller.class.getName(),
                host,
                Integer.toString(port)));
        cmd.addAll(List.of(calls));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        ForeignProcess child = new ForeignProcess(p);
        try {
            child.awaitDone();
            return child;
        } catch (RuntimeException | Error e) {
            child.close();
            throw e;
        }
    }

    private void awaitDone() {
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> {
            try {
                for (String line = stdout.readLine(); line != null; line = stdout.readLine()) {
                    synchronized (lines) {
                        lines.add(line);
                    }
                    if (line.equals("DONE")) {
                        return;
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            done.get(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("the foreign caller did not finish: " + output(), e);
        }
        synchronized (lines) {
            assertThat(lines).as("foreign caller output").contains("DONE");
        }
    }

    /** The child's result lines (and anything else it printed), in order. */
    List<String> output() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    /** The result line of the {@code index}-th call (0-based), without the method name. */
    String result(int index) {
        String line = output().stream()
                .filter(l -> l.startsWith("RESULT "))
                .skip(index)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no result " + index + " in " + output()));
        String rest = line.substring("RESULT ".length());
        return rest.substring(rest.indexOf(' ') + 1);
    }

    /** Ends the child: its standard input closes, it cancels its Sessions and exits; killed after 20 s. */
    @Override
    public void close() {
        try {
            process.getOutputStream().close();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
