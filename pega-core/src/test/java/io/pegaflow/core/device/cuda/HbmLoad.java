package io.pegaflow.core.device.cuda;

import com.jayway.jsonpath.JsonPath;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * {@code gpu-tests/hbm_load.py}, a process of its own (as vLLM is beside pega-server) that runs an HBM-bound kernel
 * and times it on request. Owns the process; {@link #close()} ends it.
 */
final class HbmLoad implements AutoCloseable {
    private final Process process;
    private final Writer in;
    private final BufferedReader out;
    final String ready;

    private HbmLoad(Process process) throws IOException {
        this.process = process;
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.ready = out.readLine();
        if (ready == null || !ready.contains("\"ready\": true")) {
            throw new IllegalStateException("hbm_load.py did not start: " + ready);
        }
    }

    /** The script beside the producer's, or null when the GPU test scripts are not here. */
    static Path script() {
        Path producer = PythonProducer.script();
        return producer == null ? null : producer.resolveSibling("hbm_load.py");
    }

    static HbmLoad start() {
        try {
            return new HbmLoad(new ProcessBuilder(PythonProducer.python(), script().toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Milliseconds for {@code launches} back-to-back launches of the kernel. */
    double measure(int launches) throws IOException {
        in.write("measure " + launches + "\n");
        in.flush();
        String line = out.readLine();
        if (line == null) {
            throw new IllegalStateException("hbm_load.py exited");
        }
        return JsonPath.parse(line).read("$.ms", Double.class);
    }

    @Override
    public void close() throws IOException {
        try {
            in.write("exit\n");
            in.flush();
        } catch (IOException ignored) {
            // already gone
        }
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
