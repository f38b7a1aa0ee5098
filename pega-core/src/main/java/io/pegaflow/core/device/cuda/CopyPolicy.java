package io.pegaflow.core.device.cuda;

/**
 * Picks the copy method for one plan ({@code pega.cuda.copy-mode}), given what the device supports. Immutable.
 *
 * <p>{@code auto}, from what the H200 measured (docs/gpu.md "Copy methods"):
 *
 * <ul>
 *   <li>fewer than {@link #MIN_BATCH_RANGES} ranges: one call per range, a batch saves nothing there;
 *   <li>mean range below {@code pega.cuda.kernel-below}, at least {@link #MIN_KERNEL_RANGES} ranges and every range
 *       co-aligned at 16 bytes: the kernel, where the batch is bound by the driver's per-descriptor host time;
 *   <li>otherwise the batch, which uses copy engines only and reaches the link from about 32 KiB.
 * </ul>
 *
 * A forced mode the device cannot run degrades: kernel to batch, batch to one call per range (the backend logs the
 * reason once at start).
 */
final class CopyPolicy {
    static final int MIN_BATCH_RANGES = 2;
    static final int MIN_KERNEL_RANGES = 16;

    private final CudaCopyConfig config;
    private final boolean batchAvailable;
    private final boolean kernelAvailable;

    CopyPolicy(CudaCopyConfig config, boolean batchAvailable, boolean kernelAvailable) {
        this.config = config;
        this.batchAvailable = batchAvailable;
        this.kernelAvailable = kernelAvailable;
    }

    /** The method for a plan of this shape: never {@link CopyMode#AUTO}. */
    CopyMode choose(PlanShape shape) {
        return switch (config.mode()) {
            case PER_RANGE -> CopyMode.PER_RANGE;
            case BATCH -> batchOrPerRange();
            case KERNEL -> kernelAvailable ? CopyMode.KERNEL : batchOrPerRange();
            case AUTO -> auto(shape);
        };
    }

    /** Whether a batched plan of this shape takes turns with the other lane of its device. */
    boolean serialize(CopyMode method, PlanShape shape) {
        return method == CopyMode.BATCH
                && shape.ranges() >= MIN_BATCH_RANGES
                && shape.meanRangeBytes() < config.serializeBelowBytes();
    }

    /**
     * How many threads issue a batched plan of this shape, each on its own stream: {@code pega.cuda.batch-submitters}
     * for plans of at least {@code pega.cuda.split-min-ranges} ranges whose mean is below {@code pega.cuda.split-below}
     * (where one thread's descriptor time, not the link, is the limit), never more than the plan has whole calls; 1
     * for everything else.
     */
    int submitters(CopyMode method, PlanShape shape) {
        if (method != CopyMode.BATCH
                || config.batchSubmitters() < 2
                || shape.ranges() < config.splitMinRanges()
                || shape.meanRangeBytes() >= config.splitBelowBytes()) {
            return 1;
        }
        return BatchSplit.parts(shape.ranges(), config.batchMaxRanges(), config.batchSubmitters());
    }

    private CopyMode auto(PlanShape shape) {
        if (shape.ranges() < MIN_BATCH_RANGES) {
            return CopyMode.PER_RANGE;
        }
        if (kernelAvailable
                && shape.ranges() >= MIN_KERNEL_RANGES
                && shape.coaligned16()
                && shape.meanRangeBytes() < config.kernelBelowBytes()) {
            return CopyMode.KERNEL;
        }
        return batchOrPerRange();
    }

    private CopyMode batchOrPerRange() {
        return batchAvailable ? CopyMode.BATCH : CopyMode.PER_RANGE;
    }
}
