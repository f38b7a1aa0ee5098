package io.pegaflow.core.device.cuda;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A named list of (device offset, host offset, length) ranges that the GPU copy tests move in every mode; offsets are
 * relative to a device buffer and a host buffer. Ranges never overlap on either side.
 */
record CopyCase(String name, long[] device, long[] host, long[] length) {
    static final long KIB = 1024;
    static final long MIB = 1024 * KIB;

    int size() {
        return length.length;
    }

    long bytes() {
        long b = 0;
        for (long l : length) {
            b += l;
        }
        return b;
    }

    /** One past the last byte on the device side. */
    long deviceExtent() {
        return extent(device);
    }

    long hostExtent() {
        return extent(host);
    }

    private long extent(long[] offsets) {
        long e = 0;
        for (int i = 0; i < offsets.length; i++) {
            e = Math.max(e, offsets[i] + length[i]);
        }
        return e;
    }

    /** {@code count} blocks of {@code block} bytes: device slots shuffled over twice as many, host packed. */
    static CopyCase scattered(String name, int count, long block, long seed) {
        int[] slots = shuffledSlots(2 * count, new Random(seed));
        long[] d = new long[count];
        long[] h = new long[count];
        long[] l = new long[count];
        for (int i = 0; i < count; i++) {
            d[i] = slots[i] * block;
            h[i] = i * block;
            l[i] = block;
        }
        return new CopyCase(name, d, h, l);
    }

    static CopyCase oneRange(String name, long bytes) {
        return new CopyCase(name, new long[] {0}, new long[] {0}, new long[] {bytes});
    }

    /** Random lengths in [1, maxLength], each side packed with its own random gaps of 0 to 63 bytes. */
    static CopyCase misaligned(String name, int count, long maxLength, long seed) {
        Random r = new Random(seed);
        long[] d = new long[count];
        long[] h = new long[count];
        long[] l = new long[count];
        long dAt = r.nextInt(16);
        long hAt = r.nextInt(16);
        for (int i = 0; i < count; i++) {
            l[i] = 1 + (long) (r.nextDouble() * maxLength);
            d[i] = dAt;
            h[i] = hAt;
            dAt += l[i] + r.nextInt(64);
            hAt += l[i] + r.nextInt(64);
        }
        return new CopyCase(name, d, h, l);
    }

    /** Ranges whose addresses share a non-zero 16-byte phase on both sides (the kernel's head, body and tail). */
    static CopyCase phased(String name, int count, long length, long phase) {
        long[] d = new long[count];
        long[] h = new long[count];
        long[] l = new long[count];
        long stride = (length + 64) / 16 * 16;
        for (int i = 0; i < count; i++) {
            d[i] = (count - 1 - i) * stride + phase;
            h[i] = i * stride + phase;
            l[i] = length;
        }
        return new CopyCase(name, d, h, l);
    }

    /** The cases every mode must copy byte for byte. */
    static List<CopyCase> all() {
        List<CopyCase> cases = new ArrayList<>();
        cases.add(scattered("2048 scattered 16 KiB blocks", 2048, 16 * KIB, 1));
        cases.add(scattered("1500 scattered 4 KiB blocks (more than one batch call)", 1500, 4 * KIB, 2));
        cases.add(scattered("512 scattered 64 KiB blocks", 512, 64 * KIB, 3));
        cases.add(scattered("24 scattered 2 MiB blocks", 24, 2 * MIB, 4));
        cases.add(oneRange("one 150 MiB range (three kernel launches)", 150 * MIB));
        cases.add(misaligned("500 misaligned ranges of 1 B to 70 KB", 500, 70_000, 5));
        cases.add(phased("300 ranges at 16-byte phase 3", 300, 40_000, 3));
        cases.add(scattered("70000 scattered 64 B ranges (two kernel launches)", 70_000, 64, 6));
        return cases;
    }

    private static int[] shuffledSlots(int n, Random r) {
        int[] s = new int[n];
        for (int i = 0; i < n; i++) {
            s[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = s[i];
            s[i] = s[j];
            s[j] = t;
        }
        return s;
    }
}
