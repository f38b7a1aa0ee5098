package io.pegaflow.core.device.cuda;

import com.jayway.jsonpath.JsonPath;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Drives {@code gpu-tests/producer.py}: a separate Python process with torch that allocates KV tensors the way a vLLM
 * worker does and hands out real {@code CudaIPCWrapper} pickles. Only the GPU tests use it.
 */
final class PythonProducer implements AutoCloseable {
    private final Process process;
    private final Writer in;
    private final BufferedReader out;

    /** An allocated tensor as the producer reports it. */
    record Tensor(String name, byte[] pickle, long nbytes, long n, long b, long k, int g) {}

    private PythonProducer(Process process) {
        this.process = process;
        this.in = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** The producer script, found from the working directory upwards; null when absent. */
    static Path script() {
        String configured = System.getProperty("pega.gpuTests.dir");
        if (configured != null) {
            Path p = Path.of(configured, "producer.py");
            return Files.isRegularFile(p) ? p : null;
        }
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path p = d.resolve("gpu-tests/producer.py");
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        return null;
    }

    /** True when python3 with torch and CUDA can run the producer here. */
    static boolean usable() {
        if (script() == null) {
            return false;
        }
        try {
            Process p = new ProcessBuilder(
                            python(), "-c", "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)")
                    .redirectErrorStream(true)
                    .start();
            p.getInputStream().readAllBytes();
            return p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    static String python() {
        return System.getProperty("pega.python", "python3");
    }

    static PythonProducer start(int device, Map<String, String> env) {
        try {
            ProcessBuilder pb = new ProcessBuilder(python(), script().toString(), Integer.toString(device))
                    .redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().putAll(env);
            return new PythonProducer(pb.start());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    synchronized String call(String command) {
        try {
            in.write(command + "\n");
            in.flush();
            String line = out.readLine();
            if (line == null) {
                throw new IllegalStateException("producer exited during '" + command + "'");
            }
            if (line.contains("\"error\"")) {
                throw new IllegalStateException("producer: " + line);
            }
            return line;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Tensor alloc(String name, String layout, int seed) {
        String json = call("alloc " + name + " " + layout + " " + seed);
        var doc = JsonPath.parse(json);
        return new Tensor(
                name,
                Base64.getDecoder().decode(doc.read("$.pickle_b64", String.class)),
                ((Number) doc.read("$.nbytes")).longValue(),
                ((Number) doc.read("$.N")).longValue(),
                ((Number) doc.read("$.B")).longValue(),
                ((Number) doc.read("$.K")).longValue(),
                ((Number) doc.read("$.G")).intValue());
    }

    String sha256(String name) {
        return JsonPath.parse(call("sha " + name)).read("$.sha256", String.class);
    }

    void zero(String name) {
        call("zero " + name);
    }

    void free(String name) {
        call("free " + name);
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL, as a crashing worker would die. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        try {
            in.write("exit\n");
            in.flush();
        } catch (IOException ignored) {
            // already gone
        }
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Byte {@code i} of a tensor filled with {@code seed}, as producer.py writes it. */
    static byte patternByte(long i, int seed) {
        return (byte) ((i * 31 + seed) % 256);
    }
}
