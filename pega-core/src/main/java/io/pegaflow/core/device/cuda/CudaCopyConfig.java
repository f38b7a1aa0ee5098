package io.pegaflow.core.device.cuda;

/**
 * The cuda copier's settings ({@code pega.cuda.*}, docs/configuration.md), validated when built. Defaults were
 * measured on an H200 (docs/gpu.md "Copy methods").
 *
 * @param mode {@code pega.cuda.copy-mode}
 * @param kernelMaxCtas {@code pega.cuda.kernel-max-ctas}: CTAs per kernel launch at most, so the copy holds few SMs
 * @param kernelMaxLaunchBytes {@code pega.cuda.kernel-max-launch-bytes}: bytes per kernel launch at most, so a launch
 *     never holds them for long
 * @param kernelBelowBytes {@code pega.cuda.kernel-below}: {@code auto} takes the kernel for plans whose mean range is
 *     smaller than this (0: never)
 * @param serializeBelowBytes {@code pega.cuda.serialize-below}: batched plans whose mean range is smaller than this
 *     take turns with the device's other lane instead of running at once (0: never)
 * @param batchMaxRanges {@code pega.cuda.batch-max-ranges}: ranges per {@code cuMemcpyBatchAsync} call at most; the
 *     lane issues the calls back to back
 * @param batchSubmitters {@code pega.cuda.batch-submitters}: threads, each with its own stream, that issue one batched
 *     plan's calls at once (1: the lane thread alone); the batch is bound by the driver's host time per descriptor
 *     below about 64 KiB, and a second thread doubles what the host can issue
 * @param splitBelowBytes {@code pega.cuda.split-below}: a batched plan is split over the submitters only when its mean
 *     range is smaller than this (0: never)
 * @param splitMinRanges {@code pega.cuda.split-min-ranges}: and only when it has at least this many ranges, so the
 *     hand-off to the other threads (tens of µs) is small against the plan
 */
public record CudaCopyConfig(
        CopyMode mode,
        int kernelMaxCtas,
        long kernelMaxLaunchBytes,
        long kernelBelowBytes,
        long serializeBelowBytes,
        int batchMaxRanges,
        int batchSubmitters,
        long splitBelowBytes,
        int splitMinRanges) {

    /** At most this many submitting threads per lane: each is a core spinning in the driver while its calls go out. */
    static final int MAX_SUBMITTERS = 8;

    /** The kernel's piece size: a launch never carries less than one piece, so the launch cap cannot be lower. */
    static final long MIN_LAUNCH_BYTES = KernelDescriptors.PIECE_BYTES;

    public CudaCopyConfig {
        if (mode == null) {
            throw new IllegalArgumentException(
                    "pega.cuda.copy-mode: null (expected: auto, batch, kernel or per-range)");
        }
        if (kernelMaxCtas < 1 || kernelMaxCtas > 65535) {
            throw new IllegalArgumentException(
                    "pega.cuda.kernel-max-ctas: " + kernelMaxCtas + " (expected: 1 to 65535)");
        }
        if (kernelMaxLaunchBytes < MIN_LAUNCH_BYTES) {
            throw new IllegalArgumentException("pega.cuda.kernel-max-launch-bytes: " + kernelMaxLaunchBytes
                    + " (expected: >= " + MIN_LAUNCH_BYTES + ")");
        }
        if (kernelBelowBytes < 0) {
            throw new IllegalArgumentException("pega.cuda.kernel-below: " + kernelBelowBytes + " (expected: >= 0)");
        }
        if (serializeBelowBytes < 0) {
            throw new IllegalArgumentException(
                    "pega.cuda.serialize-below: " + serializeBelowBytes + " (expected: >= 0)");
        }
        if (batchMaxRanges < 1) {
            throw new IllegalArgumentException("pega.cuda.batch-max-ranges: " + batchMaxRanges + " (expected: >= 1)");
        }
        if (batchSubmitters < 1 || batchSubmitters > MAX_SUBMITTERS) {
            throw new IllegalArgumentException(
                    "pega.cuda.batch-submitters: " + batchSubmitters + " (expected: 1 to " + MAX_SUBMITTERS + ")");
        }
        if (splitBelowBytes < 0) {
            throw new IllegalArgumentException("pega.cuda.split-below: " + splitBelowBytes + " (expected: >= 0)");
        }
        if (splitMinRanges < 2) {
            throw new IllegalArgumentException("pega.cuda.split-min-ranges: " + splitMinRanges + " (expected: >= 2)");
        }
    }

    /** The settings before plans were split over submitters: one submitting thread per lane. */
    public CudaCopyConfig(
            CopyMode mode,
            int kernelMaxCtas,
            long kernelMaxLaunchBytes,
            long kernelBelowBytes,
            long serializeBelowBytes,
            int batchMaxRanges) {
        this(
                mode,
                kernelMaxCtas,
                kernelMaxLaunchBytes,
                kernelBelowBytes,
                serializeBelowBytes,
                batchMaxRanges,
                1,
                0,
                DEFAULT_SPLIT_MIN_RANGES);
    }

    static final int DEFAULT_SUBMITTERS = 2;
    static final long DEFAULT_SPLIT_BELOW = 128L << 10;
    static final int DEFAULT_SPLIT_MIN_RANGES = 2048;

    /** The measured defaults. */
    public static CudaCopyConfig defaults() {
        return new CudaCopyConfig(
                CopyMode.AUTO,
                16,
                64L << 20,
                0,
                0,
                256,
                DEFAULT_SUBMITTERS,
                DEFAULT_SPLIT_BELOW,
                DEFAULT_SPLIT_MIN_RANGES);
    }

    public CudaCopyConfig withMode(CopyMode m) {
        return new CudaCopyConfig(
                m,
                kernelMaxCtas,
                kernelMaxLaunchBytes,
                kernelBelowBytes,
                serializeBelowBytes,
                batchMaxRanges,
                batchSubmitters,
                splitBelowBytes,
                splitMinRanges);
    }

    /** The same settings with {@code n} submitting threads per lane (benchmarks compare 1, 2, 3). */
    public CudaCopyConfig withSubmitters(int n) {
        return new CudaCopyConfig(
                mode,
                kernelMaxCtas,
                kernelMaxLaunchBytes,
                kernelBelowBytes,
                serializeBelowBytes,
                batchMaxRanges,
                n,
                splitBelowBytes,
                splitMinRanges);
    }
}
