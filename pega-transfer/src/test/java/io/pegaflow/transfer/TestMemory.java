package io.pegaflow.transfer;

import io.pegaflow.sys.Posix;

/** Fills and checks native memory with a pattern that differs per byte position and per seed. */
public final class TestMemory {
    private static final int CHUNK = 64 * 1024;

    private TestMemory() {}

    public static byte patternByte(long seed, long offset) {
        long x = (seed + 1) * 0x9E3779B97F4A7C15L + offset * 0xBF58476D1CE4E5B9L;
        return (byte) (x ^ (x >>> 29) ^ (x >>> 47));
    }

    public static void fill(long address, long length, long seed) {
        byte[] buf = new byte[CHUNK];
        for (long done = 0; done < length; done += CHUNK) {
            int n = (int) Math.min(CHUNK, length - done);
            for (int i = 0; i < n; i++) {
                buf[i] = patternByte(seed, done + i);
            }
            Posix.copyFromArray(buf, 0, address + done, n);
        }
    }

    public static void zero(long address, long length) {
        Posix.memset(address, 0, length);
    }

    /** The offset of the first byte that differs from the pattern, or -1 when all match. */
    public static long firstMismatch(long address, long length, long seed) {
        return firstMismatch(address, length, seed, 0);
    }

    /** As {@link #firstMismatch(long, long, long)} for a slice that starts at {@code patternOffset} of a pattern. */
    public static long firstMismatch(long address, long length, long seed, long patternOffset) {
        byte[] buf = new byte[CHUNK];
        for (long done = 0; done < length; done += CHUNK) {
            int n = (int) Math.min(CHUNK, length - done);
            Posix.copyToArray(address + done, buf, 0, n);
            for (int i = 0; i < n; i++) {
                if (buf[i] != patternByte(seed, patternOffset + done + i)) {
                    return done + i;
                }
            }
        }
        return -1;
    }
}
