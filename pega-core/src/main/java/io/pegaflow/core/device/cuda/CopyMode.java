package io.pegaflow.core.device.cuda;

import java.util.Locale;

/**
 * How the cuda copier moves a plan's ranges ({@code pega.cuda.copy-mode}, docs/gpu.md "Copy methods").
 *
 * <ul>
 *   <li>{@link #AUTO}: per plan, from its fragment size and count ({@link CopyPolicy}).
 *   <li>{@link #BATCH}: {@code cuMemcpyBatchAsync}, chunked; copy engines only, no SMs.
 *   <li>{@link #KERNEL}: the bounded gather/scatter kernel over a descriptor array.
 *   <li>{@link #PER_RANGE}: one {@code cuMemcpy*Async} per range (what every driver supports).
 * </ul>
 */
public enum CopyMode {
    AUTO("auto"),
    BATCH("batch"),
    KERNEL("kernel"),
    PER_RANGE("per-range");

    private final String key;

    CopyMode(String key) {
        this.key = key;
    }

    /** The configuration spelling. */
    public String key() {
        return key;
    }

    /**
     * Parses the configuration spelling, case-insensitively.
     *
     * @throws IllegalArgumentException naming the key and the accepted values
     */
    public static CopyMode parse(String value) {
        String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        for (CopyMode m : values()) {
            if (m.key.equals(v)) {
                return m;
            }
        }
        throw new IllegalArgumentException(
                "pega.cuda.copy-mode: '" + value + "' (expected: auto, batch, kernel or per-range)");
    }
}
