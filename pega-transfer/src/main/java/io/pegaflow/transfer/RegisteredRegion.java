package io.pegaflow.transfer;

/**
 * One registered memory region as a peer sees it: where it is in the owner's address space and the opaque packed remote
 * key (UCX {@code ucp_rkey_pack} output; a region token on the loopback fabric) that lets a peer address it.
 *
 * @param packedRkey owned by this record once built; never modified
 */
public record RegisteredRegion(long base, long lengthBytes, byte[] packedRkey) {

    /** Whether {@code [addr, addr + len)} lies entirely inside this region. */
    public boolean contains(long addr, long len) {
        return len > 0 && addr >= base && addr - base <= lengthBytes - len;
    }
}
