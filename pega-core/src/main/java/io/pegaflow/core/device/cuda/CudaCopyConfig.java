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
 */
public record CudaCopyConfig(
        CopyMode mode,
        int kernelMaxCtas,
        long kernelMaxLaunchBytes,
        long kernelBelowBytes,
        long serializeBelowBytes,
        int batchMaxRanges) {

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
    }

    /** The measured defaults. */
    public static CudaCopyConfig defaults() {
        return new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, 0, 0, 256);
    }

    public CudaCopyConfig withMode(CopyMode m) {
        return new CudaCopyConfig(
                m, kernelMaxCtas, kernelMaxLaunchBytes, kernelBelowBytes, serializeBelowBytes, batchMaxRanges);
    }
}
