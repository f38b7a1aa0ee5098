package io.pegaflow.core.device;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** This process's real uid, read once from {@code /proc/self/status} (no native call needed). */
public final class ProcessUid {
    private static final int UID = read();

    private ProcessUid() {}

    public static int current() {
        return UID;
    }

    private static int read() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    return Integer.parseInt(line.substring(4).trim().split("\\s+", -1)[0]);
                }
            }
            throw new IllegalStateException("/proc/self/status has no Uid line");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
