package io.pegaflow.push;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A push server in its own JVM, for tests that SIGKILL it ({@link PushKillProcessTest}): {@code transports
 * push-timeout-s receive-timeout-s}. Prints {@code PORT <n>} once serving, and closes when its stdin ends.
 */
public final class PushNodeProcess {
    private PushNodeProcess() {}

    public static void main(String[] args) throws IOException {
        PushConfig config = PushConfig.defaults()
                .withTimeouts(Duration.ofSeconds(Long.parseLong(args[1])), Duration.ofSeconds(Long.parseLong(args[2])));
        try (PushNode node = PushNode.start(args[0], config)) {
            System.out.write(("PORT " + node.port() + "\n").getBytes(StandardCharsets.UTF_8));
            System.out.flush();
            InputStream in = System.in;
            while (in.read() >= 0) {
                // until the parent closes our stdin (or kills us)
            }
        }
    }
}
