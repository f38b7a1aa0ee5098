package io.pegaflow.core.device.cuda;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.kernel.SuppressForbidden;
import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.sys.OffHeap;
import io.pegaflow.sys.cuda.Cuda;
import io.pegaflow.sys.cuda.CudaBatchCopy;
import io.pegaflow.sys.cuda.CudaException;
import io.pegaflow.sys.cuda.CudaModules;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copy engine of one (instance, device) context: a save lane and a load lane, each with its own non-blocking
 * stream, completion event and descriptor buffers, created on first use by the lane's own thread (which also gets the
 * device's primary context made current). The two lanes run at once.
 *
 * <p>Each plan takes one method ({@link CopyPolicy}): one {@code cuMemcpy*Async} per range, {@code cuMemcpyBatchAsync}
 * calls issued back to back, or the copy kernel's launches after one descriptor upload. Then one event record and
 * synchronize, so a call returns only after every byte has landed. A large batched plan of small ranges is split over
 * the lane's submitting threads ({@code pega.cuda.batch-submitters}), each issuing its slice of the calls on its own
 * stream: one thread cannot issue descriptors fast enough to fill the link below about 64 KiB, two can (docs/gpu.md
 * "Submitting threads"). The plan is complete when every stream's event is. On a failed enqueue every stream the plan
 * used is drained before the error returns, so no copy of the plan is still writing when the caller frees or reuses its
 * memory. Small batched plans can be made to take turns with the device's other lanes
 * ({@code pega.cuda.serialize-below}).
 *
 * <p>Thread model: {@link #copyToHost} runs only on the save lane thread and {@link #copyToDevice} only on the load
 * lane thread (the {@link DeviceCopier} contract), so each lane's fields are confined to one thread; a lane's helper
 * submitters touch only their own slice, handed over and returned through their executor's futures; {@link #close}
 * runs after both lanes have drained.
 */
final class CudaCopier implements DeviceCopier {
    private static final Logger LOG = LoggerFactory.getLogger(CudaCopier.class);
    /** Kernel arguments at the start of the lane's host buffer: u64 descriptors, u32 count, then their addresses. */
    private static final int KERNEL_ARGS_BYTES = 64;

    private static final long TURN_TIMEOUT_SECONDS = 60;
    /** A helper issues a 2.4 GB plan's calls in about 10 ms; a minute means it is stuck in the driver. */
    private static final long SLICE_WARN_SECONDS = 60;
    /**
     * No {@code CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE}: on the H200 the hint cost up to a fifth of the H2D rate
     * at 32 KiB ranges and did not lower the cost to a kernel beside the copy (docs/gpu.md, "Copy methods").
     */
    private static final int BATCH_FLAGS = 0;
    /** 16 warps per CTA: with four 16-byte loads in flight per lane, 4 CTAs already fill the link (docs/gpu.md). */
    private static final int THREADS_PER_CTA = 512;
    /**
     * What {@link #prepare} gives each descriptor buffer at most: 4 MiB hold the batch arrays or kernel descriptors of
     * about 170,000 ranges (a 2.4 GB Save of 32 KiB ranges has 73,728), so a lane holds at most 8 MiB of pinned and
     * device memory that no request asked for yet.
     */
    private static final long PREPARED_BYTES = 4L << 20;

    private final CudaDeviceBackend.DeviceState device;
    private final CudaCopyConfig config;
    private final CopyPolicy policy;
    private final Lane save = new Lane("save");
    private final Lane load = new Lane("load");
    private volatile boolean closed;

    CudaCopier(CudaDeviceBackend.DeviceState device, CudaCopyConfig config) {
        this.device = device;
        this.config = config;
        this.policy = new CopyPolicy(config, device.copy.batch, device.copy.kernel != null);
    }

    @Override
    public void copyToHost(RangePlan plan) {
        run(save, plan, true);
    }

    @Override
    public void copyToDevice(RangePlan plan) {
        run(load, plan, false);
    }

    @Override
    public void prepareToHost(long ranges, long bytes) {
        prepare(save, ranges, bytes);
    }

    @Override
    public void prepareToDevice(long ranges, long bytes) {
        prepare(load, ranges, bytes);
    }

    /**
     * Creates the lane's stream and event, its submitting threads' streams, events and threads, and grows its
     * descriptor buffers for a plan of {@code ranges} ranges ({@code bytes} in all), up to {@link #PREPARED_BYTES}
     * each: an instance's first 2.4 GB Save paid for these inside its copy, 1.4 to 4.6 ms more than a warm Save's
     * (docs/gpu.md). A larger plan still grows the buffers when it comes.
     */
    private void prepare(Lane lane, long ranges, long bytes) {
        if (closed || ranges <= 0) {
            return;
        }
        long pieces = ranges + bytes / KernelDescriptors.PIECE_BYTES; // at least the kernel's descriptors
        long batchBytes = BatchDescriptors.bytesFor(ranges);
        long kernelBytes = pieces * KernelDescriptors.DESCRIPTOR_BYTES;
        Lock gate = device.copyGate.readLock();
        gate.lock();
        try {
            Cuda.ctxSetCurrent(device.ctx);
            lane.ensure();
            lane.buffers.host(Math.min(PREPARED_BYTES, Math.max(batchBytes, KERNEL_ARGS_BYTES + kernelBytes)));
            if (device.copy.kernel != null) {
                lane.buffers.device(Math.min(PREPARED_BYTES, kernelBytes));
            }
            if (device.copy.batch && config.batchSubmitters() > 1) {
                lane.ensureSubmitters(config.batchSubmitters());
                lane.startHelpers();
            }
        } catch (CudaException e) {
            LOG.warn(
                    "device {}: preparing the {} lane failed, its first copy creates what is missing: {}",
                    device.ordinal,
                    lane.name,
                    e.getMessage());
        } finally {
            gate.unlock();
        }
    }

    private void run(Lane lane, RangePlan plan, boolean toHost) {
        if (closed) {
            throw EngineException.storage("batch copy failed: the copier of device " + device.ordinal + " is closed");
        }
        if (plan.isEmpty()) {
            return;
        }
        PlanShape shape = PlanShape.of(plan);
        CopyMode method = policy.choose(shape);
        int parts = policy.submitters(method, shape);
        boolean turn = policy.serialize(method, shape);
        Lock gate = device.copyGate.readLock();
        gate.lock();
        try {
            if (turn) {
                takeTurn(lane);
            }
            try {
                Cuda.ctxSetCurrent(device.ctx);
                lane.ensure();
                if (parts > 1) {
                    copySplit(lane, plan, parts);
                } else {
                    copy(lane, plan, toHost, method);
                }
            } finally {
                if (turn) {
                    device.copyTurn.unlock();
                }
            }
        } catch (CudaException e) {
            throw EngineException.storage(
                    "batch copy failed on device " + device.ordinal + " (" + lane.name + "): " + e.getMessage(), e);
        } finally {
            gate.unlock();
        }
    }

    private void copy(Lane lane, RangePlan plan, boolean toHost, CopyMode method) {
        lane.step = 0;
        lane.steps = 0;
        try {
            switch (method) {
                case KERNEL -> enqueueKernel(lane, plan);
                case BATCH -> enqueueBatch(lane, plan);
                default -> enqueuePerRange(lane, plan, toHost);
            }
            Cuda.eventRecord(lane.event, lane.stream);
            Cuda.eventSynchronize(lane.event);
        } catch (CudaException e) {
            // Never return while earlier copies of this plan may still be writing: drain the stream first.
            try {
                Cuda.streamSynchronize(lane.stream);
            } catch (CudaException drain) {
                e.addSuppressed(drain);
            }
            throw EngineException.storage(
                    "batch copy failed on device " + device.ordinal + " (" + lane.name + ", " + unit(method) + " "
                            + lane.step + " of " + lane.steps + "): " + e.getMessage(),
                    e);
        }
    }

    private static String unit(CopyMode method) {
        return switch (method) {
            case KERNEL -> "kernel launch";
            case BATCH -> "batch call";
            default -> "range";
        };
    }

    private void takeTurn(Lane lane) {
        try {
            if (!device.copyTurn.tryLock(TURN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw EngineException.storage("batch copy failed on device " + device.ordinal + " (" + lane.name
                        + "): no copy turn within " + TURN_TIMEOUT_SECONDS + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw EngineException.storage("batch copy interrupted while waiting for the device's copy turn");
        }
    }

    private static void enqueuePerRange(Lane lane, RangePlan plan, boolean toHost) {
        int n = plan.size();
        lane.steps = n;
        for (int i = 0; i < n; i++) {
            if (toHost) {
                Cuda.memcpyDtoHAsync(plan.dstAddress(i), plan.srcAddress(i), plan.lengthBytes(i), lane.stream);
            } else {
                Cuda.memcpyHtoDAsync(plan.dstAddress(i), plan.srcAddress(i), plan.lengthBytes(i), lane.stream);
            }
            lane.step = i + 1;
        }
    }

    private void enqueueBatch(Lane lane, RangePlan plan) {
        int n = plan.size();
        int max = config.batchMaxRanges();
        long base = lane.buffers.host(BatchDescriptors.bytesFor(n));
        BatchDescriptors.write(plan, BATCH_FLAGS, base);
        int calls = BatchDescriptors.calls(n, max);
        lane.steps = calls;
        for (int c = 0; c < calls; c++) {
            batchCall(base, n, max, c, lane.stream);
            lane.step = c + 1;
        }
    }

    /** Call {@code c} of a plan of {@code n} ranges whose descriptors are at {@code base}, enqueued on {@code stream}. */
    private void batchCall(long base, int n, int max, int c, long stream) {
        long at = 8L * BatchDescriptors.callStart(c, max);
        // The test seam's fault: no attributes for the call's copies, which the driver refuses before enqueueing any.
        int attributes = device.batchCallFault.compareAndSet(c, -1) ? 0 : 1;
        CudaBatchCopy.memcpyBatchAsync(
                BatchDescriptors.dsts(base) + at,
                BatchDescriptors.srcs(base, n) + at,
                BatchDescriptors.sizes(base, n) + at,
                BatchDescriptors.callLength(c, n, max),
                BatchDescriptors.attributes(base),
                BatchDescriptors.attributeIndices(base),
                attributes,
                stream);
    }

    /**
     * A batched plan split over {@code parts} submitters: the descriptors are written once, slice 0 is issued by the
     * lane thread and the others by the lane's helpers at the same time, each on its own stream. Returns when every
     * stream's event has completed; on a failure, only after every slice has stopped issuing and every stream is
     * drained.
     */
    private void copySplit(Lane lane, RangePlan plan, int parts) {
        int n = plan.size();
        int max = config.batchMaxRanges();
        long base = lane.buffers.host(BatchDescriptors.bytesFor(n));
        BatchDescriptors.write(plan, BATCH_FLAGS, base);
        int calls = BatchDescriptors.calls(n, max);
        lane.ensureSubmitters(parts);
        Future<?>[] pending = new Future<?>[parts];
        for (int s = 0; s < parts; s++) {
            lane.slices[s].assign(
                    base, n, max, BatchSplit.firstCall(s, parts, calls), BatchSplit.firstCall(s + 1, parts, calls));
        }
        for (int s = 1; s < parts; s++) {
            pending[s] = lane.helpers().submit(lane.slices[s]);
        }
        lane.slices[0].run();
        for (int s = 1; s < parts; s++) {
            awaitSlice(pending[s], lane, lane.slices[s]);
        }
        RuntimeException error = null;
        int failedSlice = 0;
        int failedCall = calls;
        for (int s = 0; s < parts && error == null; s++) {
            error = lane.slices[s].failure;
            failedSlice = s;
            failedCall = lane.slices[s].failedCall;
        }
        if (error == null) {
            try {
                for (int s = 0; s < parts; s++) {
                    Cuda.eventSynchronize(lane.events[s]);
                }
                return;
            } catch (CudaException e) {
                error = e;
                failedSlice = 0;
                failedCall = calls;
            }
        }
        for (int s = 0; s < parts; s++) {
            try {
                Cuda.streamSynchronize(lane.streams[s]);
            } catch (CudaException drain) {
                error.addSuppressed(drain);
            }
        }
        throw EngineException.storage(
                "batch copy failed on device " + device.ordinal + " (" + lane.name + ", batch call "
                        + failedCall + " of " + calls + ", submitter " + (failedSlice + 1) + " of " + parts
                        + "): " + error.getMessage(),
                error);
    }

    /**
     * Waits for a helper's slice. Its deadline only raises a warning, then the wait goes on: the helper is inside a
     * driver call that nothing can bound (like the event synchronize after it), and returning earlier would let the
     * caller free memory that copies the helper is still issuing will write. A lane stuck here is reported by the
     * agent stall rule (decision 0016 §1). An interrupt is kept for later.
     */
    private void awaitSlice(Future<?> f, Lane lane, Slice slice) {
        boolean interrupted = false;
        long waited = 0;
        while (true) {
            try {
                f.get(SLICE_WARN_SECONDS, TimeUnit.SECONDS);
                break;
            } catch (TimeoutException e) {
                waited += SLICE_WARN_SECONDS;
                LOG.warn(
                        "device {}: {} submitter {} still issuing its batch calls after {} s; waiting on",
                        device.ordinal,
                        lane.name,
                        slice.index + 1,
                        waited);
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException e) {
                // Slice.run catches RuntimeException; anything else is a bug, reported as the slice's failure.
                slice.failure = new IllegalStateException("submitter failed", e.getCause());
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void enqueueKernel(Lane lane, RangePlan plan) {
        CopyKernel kernel = java.util.Objects.requireNonNull(
                device.copy.kernel, "the copy policy picks the kernel only on a device where it loaded");
        int threadsPerCta = Math.min(kernel.threadsPerCta, THREADS_PER_CTA);
        long descriptorBytes = (long) KernelDescriptors.count(plan) * KernelDescriptors.DESCRIPTOR_BYTES;
        long host = lane.buffers.host(KERNEL_ARGS_BYTES + descriptorBytes);
        long descriptors = lane.buffers.device(descriptorBytes);
        List<KernelDescriptors.Launch> launches =
                KernelDescriptors.write(plan, config.kernelMaxLaunchBytes(), host + KERNEL_ARGS_BYTES);
        lane.steps = launches.size();
        Cuda.memcpyHtoDAsync(descriptors, host + KERNEL_ARGS_BYTES, descriptorBytes, lane.stream);
        // OFF-HEAP: the argument block is the first KERNEL_ARGS_BYTES of the lane's host buffer; the driver reads the
        // argument values during each launch call, so the block is rewritten for the next launch.
        OffHeap.putLong(host + 16, host);
        OffHeap.putLong(host + 24, host + 8);
        for (int i = 0; i < launches.size(); i++) {
            KernelDescriptors.Launch l = launches.get(i);
            OffHeap.putLong(host, descriptors + (long) l.first() * KernelDescriptors.DESCRIPTOR_BYTES);
            OffHeap.putInt(host + 8, l.count());
            int threads = device.kernelLaunchFault.compareAndSet(i, -1) ? 2 * 1024 : threadsPerCta;
            CudaModules.launchKernel(
                    kernel.function,
                    KernelDescriptors.ctas(l.count(), threads, config.kernelMaxCtas()),
                    threads,
                    lane.stream,
                    host + 16);
            lane.step = i + 1;
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Cuda.ctxSetCurrent(device.ctx);
        } catch (CudaException e) {
            LOG.warn("device {}: cannot bind the context to free copier streams: {}", device.ordinal, e.getMessage());
            return;
        }
        save.destroy();
        load.destroy();
    }

    /**
     * One submitter's share of a split plan: calls {@code [first, end)}, issued on its own stream and followed by its
     * own event. Assigned by the lane thread before it is handed over; its results are read after its future
     * completes.
     */
    private final class Slice implements Runnable {
        final int index;
        final long stream;
        final long event;
        long base;
        int ranges;
        int max;
        int first;
        int end;

        @Nullable
        RuntimeException failure;

        int failedCall;

        Slice(int index, long stream, long event) {
            this.index = index;
            this.stream = stream;
            this.event = event;
        }

        void assign(long base, int ranges, int max, int first, int end) {
            this.base = base;
            this.ranges = ranges;
            this.max = max;
            this.first = first;
            this.end = end;
            this.failure = null;
            this.failedCall = -1;
        }

        @Override
        public void run() {
            int c = first;
            try {
                if (index > 0) {
                    Cuda.ctxSetCurrent(device.ctx);
                }
                for (; c < end; c++) {
                    batchCall(base, ranges, max, c, stream);
                }
                Cuda.eventRecord(event, stream);
            } catch (RuntimeException e) {
                failure = e;
                failedCall = c;
            }
        }
    }

    /**
     * One direction's streams, events, submitters and descriptor buffers; created by, and afterwards used only by, the
     * lane thread (a helper touches only the slice it was handed).
     */
    private final class Lane {
        final String name;
        final LaneBuffers buffers = new LaneBuffers();
        long stream;
        long event;
        int step;
        int steps;
        /** Stream and event of each submitter; index 0 is the lane's own. */
        long[] streams = new long[0];

        long[] events = new long[0];
        Slice[] slices = new Slice[0];
        private @Nullable ExecutorService helpers;

        Lane(String name) {
            this.name = name;
        }

        void ensure() {
            if (stream == 0) {
                stream = Cuda.streamCreate(Cuda.CU_STREAM_NON_BLOCKING);
                event = newEvent();
            }
        }

        private long newEvent() {
            return Cuda.eventCreate(
                    Cuda.CU_EVENT_DISABLE_TIMING | (CudaDeviceBackend.BLOCKING_SYNC ? Cuda.CU_EVENT_BLOCKING_SYNC : 0));
        }

        /** Streams, events and slices for {@code parts} submitters, the lane's own stream first. */
        void ensureSubmitters(int parts) {
            while (slices.length < parts) {
                int s = slices.length;
                long st = s == 0 ? stream : Cuda.streamCreate(Cuda.CU_STREAM_NON_BLOCKING);
                long ev;
                try {
                    ev = s == 0 ? event : newEvent();
                } catch (CudaException e) {
                    if (s > 0) {
                        Cuda.streamDestroy(st);
                    }
                    throw e;
                }
                streams = Arrays.copyOf(streams, s + 1);
                events = Arrays.copyOf(events, s + 1);
                slices = Arrays.copyOf(slices, s + 1);
                streams[s] = st;
                events[s] = ev;
                slices[s] = new Slice(s, st, ev);
            }
        }

        // The one sanctioned pool outside the kernel (decision 0015): slices of the lane's own plan, submitted while
        // the
        // lane thread waits for them, so they are part of the lane's duty cycle rather than agents of their own.
        @SuppressForbidden
        ExecutorService helpers() {
            ExecutorService h = helpers;
            if (h == null) {
                AtomicInteger n = new AtomicInteger();
                h = Executors.newFixedThreadPool(config.batchSubmitters() - 1, r -> {
                    Thread t = new Thread(r, "cuda" + device.ordinal + "-" + name + "-submit-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
                helpers = h;
            }
            return h;
        }

        /**
         * Starts the helper threads now rather than at the first split plan: a fixed pool below its size starts a
         * thread for each task it is handed.
         */
        void startHelpers() {
            ExecutorService h = helpers();
            for (int i = 1; i < config.batchSubmitters(); i++) {
                h.execute(() -> {});
            }
        }

        void destroy() {
            ExecutorService h = helpers;
            if (h != null) {
                h.shutdown();
                helpers = null;
            }
            if (stream == 0) {
                return;
            }
            try {
                for (int s = 1; s < streams.length; s++) {
                    Cuda.streamSynchronize(streams[s]);
                    Cuda.eventDestroy(events[s]);
                    Cuda.streamDestroy(streams[s]);
                }
                Cuda.streamSynchronize(stream);
                buffers.close();
                Cuda.eventDestroy(event);
                Cuda.streamDestroy(stream);
            } catch (CudaException e) {
                LOG.warn("device {}: freeing the {} lane failed: {}", device.ordinal, name, e.getMessage());
            }
            stream = 0;
            event = 0;
            streams = new long[0];
            events = new long[0];
            slices = new Slice[0];
        }
    }
}
