package io.pegaflow.sys.cuda;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * The batched copy entry point, bound apart from {@link CudaDriver} because only drivers of CUDA 13 and later export
 * it: a missing symbol fails this class's registration, never the rest of the bindings. {@link Cuda#batchCopyProbe()}
 * looks the symbol up first and initialises this class only when it is there.
 *
 * <p>{@code cuMemcpyBatchAsync_v2} is what CUDA 13's {@code cuda.h} maps {@code cuMemcpyBatchAsync} to: the
 * signature without {@code failIdx}. Every pointer is a native address passed as {@code long}, so one call costs one
 * JNA transition however many copies it carries.
 */
final class CudaBatchDriver {
    static final String SYMBOL = "cuMemcpyBatchAsync_v2";

    static {
        Native.register(CudaBatchDriver.class, NativeLibrary.getInstance(Cuda.libraryName()));
    }

    private CudaBatchDriver() {}

    static native int cuMemcpyBatchAsync_v2(
            long dsts, long srcs, long sizes, long count, long attrs, long attrsIdxs, long numAttrs, long stream);
}
