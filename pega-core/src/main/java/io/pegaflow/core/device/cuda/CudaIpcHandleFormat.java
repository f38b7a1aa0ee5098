package io.pegaflow.core.device.cuda;

/**
 * How item 1 of torch's {@code _share_cuda_()} tuple encodes the IPC handle.
 *
 * <pre>
 *   RAW        64 bytes: cudaIpcMemHandle_t                          (torch before ~2.4)
 *   VERSIONED  66 bytes: [0] version 0x01|0x02  [1] type 'c'  [2..65] cudaIpcMemHandle_t   (torch ~2.4 and later)
 *              type 'e' = expandable-segment export (fd / fabric handles, variable length): rejected
 * </pre>
 */
public enum CudaIpcHandleFormat {
    /** The bare 64-byte {@code cudaIpcMemHandle_t}. */
    RAW,
    /** Version byte, type byte {@code 'c'} (cudaMalloc), then the 64-byte handle. */
    VERSIONED
}
