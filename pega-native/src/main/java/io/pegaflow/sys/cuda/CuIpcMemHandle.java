package io.pegaflow.sys.cuda;

import com.sun.jna.Structure;

/**
 * {@code CUipcMemHandle}: 64 opaque bytes.
 *
 * <pre>
 *   typedef struct CUipcMemHandle_st { char reserved[64]; } CUipcMemHandle;
 * </pre>
 *
 * <p>{@code cuIpcOpenMemHandle} takes it <b>by value</b>. Passing a {@code byte[]} passes a pointer instead and the
 * driver answers {@code CUDA_ERROR_INVALID_VALUE} (seen on an H200, driver 580); hence this {@link Structure.ByValue}.
 */
@Structure.FieldOrder("reserved")
public class CuIpcMemHandle extends Structure {
    /** Size of the handle in bytes. */
    public static final int SIZE = 64;

    public byte[] reserved = new byte[SIZE];

    /** The by-value flavour the driver signature needs. */
    public static final class ByValue extends CuIpcMemHandle implements Structure.ByValue {
        public ByValue() {}

        public ByValue(byte[] handle) {
            super(handle);
        }
    }

    public CuIpcMemHandle() {}

    public CuIpcMemHandle(byte[] handle) {
        if (handle.length != SIZE) {
            throw new IllegalArgumentException("CUipcMemHandle must be " + SIZE + " bytes, got " + handle.length);
        }
        System.arraycopy(handle, 0, reserved, 0, SIZE);
    }
}
