package io.pegaflow.sys.cuda;

/**
 * A CUDA driver call that returned something other than {@code CUDA_SUCCESS}: names the call, the numeric
 * {@code CUresult} and its symbolic name (for example {@code CUDA_ERROR_INVALID_VALUE}), plus the argument that
 * matters to an operator.
 *
 * <p>Unchecked: every caller either turns it into an engine error (INTERNAL) or fails startup.
 */
public final class CudaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int result;
    private final String errorName;

    public CudaException(String call, int result, String errorName, String detail) {
        super(call + " failed: " + errorName + " (" + result + ")" + (detail.isEmpty() ? "" : ": " + detail));
        this.call = call;
        this.result = result;
        this.errorName = errorName;
    }

    /** The driver function that failed, for example {@code cuIpcOpenMemHandle_v2}. */
    public String call() {
        return call;
    }

    /** The numeric {@code CUresult}. */
    public int result() {
        return result;
    }

    /** The symbolic name of {@link #result()}, or {@code CUresult(n)} when the driver does not know it. */
    public String errorName() {
        return errorName;
    }
}
