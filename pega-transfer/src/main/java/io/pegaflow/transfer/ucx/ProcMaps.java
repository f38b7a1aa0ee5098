package io.pegaflow.transfer.ucx;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** This process's mappings as {@code /proc/self/maps} lists them. */
final class ProcMaps {
    private ProcMaps() {}

    /** The line of the mapping that holds {@code address}, or null when nothing is mapped there. */
    static @Nullable String mappingOf(long address) {
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/self/maps"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (String line : lines) {
            int dash = line.indexOf('-');
            int space = line.indexOf(' ');
            long start = HexFormat.fromHexDigitsToLong(line, 0, dash);
            long end = HexFormat.fromHexDigitsToLong(line, dash + 1, space);
            if (Long.compareUnsigned(address, start) >= 0 && Long.compareUnsigned(address, end) < 0) {
                return line;
            }
        }
        return null;
    }

    /** Whether {@code address} lies in a shared mapping ({@code rw-s}), which another process can attach. */
    static boolean isShared(long address) {
        String line = mappingOf(address);
        if (line == null) {
            return false;
        }
        int space = line.indexOf(' ');
        return line.length() > space + 4 && line.charAt(space + 4) == 's';
    }
}
