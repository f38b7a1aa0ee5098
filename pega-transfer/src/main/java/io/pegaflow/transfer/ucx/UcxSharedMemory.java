package io.pegaflow.transfer.ucx;

import io.pegaflow.kernel.memory.ShardMemory;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.UcxException;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's UCX context, created before the pool so that the pool's shards are memory UCX allocated
 * ({@code ucp_mem_map} with {@code UCP_MEM_MAP_ALLOCATE}): UCX 1.13 then places them in System V or POSIX shared
 * memory, and a peer on the same host reads them by attaching the segment and copying, where the pool's own anonymous
 * mappings leave it only the active-message emulation that TCP uses (docs/transfer.md, decision 0019). Over a network
 * the allocated memory is registered with the NICs like any other.
 *
 * <p>Transfer engines borrow the context (the node's transfer engine and its push engine may both, with their own lane
 * counts) and these allocations' memory handles
 * ({@link UcxTransferEngine#open(TransferConfig, UcxSharedMemory, List, io.pegaflow.kernel.agent.NanoClock)}), each
 * until its fabric is released, after its workers closed. The context closes once this object is closed, every
 * allocation was handed back (each {@link Mapping#release()} is a {@code ucp_mem_unmap}) and every borrowing engine has
 * released: closing a context under mapped memory or live workers aborts the process. {@link #close()} before that logs
 * an error and leaves the context to the last of them, as the pool leaves its regions to its last allocation.
 *
 * <p>Thread-safe.
 */
public final class UcxSharedMemory implements ShardMemory, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(UcxSharedMemory.class);

    private final TransferConfig config;
    private final UcpContext context;
    private final List<Allocation> allocations = new ArrayList<>();
    private int borrowers;
    private boolean closed;
    private boolean contextClosed;
    private boolean privateWarned;

    private UcxSharedMemory(TransferConfig config, UcpContext context) {
        this.config = config;
        this.context = context;
    }

    /**
     * Creates the context the transfer engine will use.
     *
     * @throws TransferException {@code INIT_FAILED} naming the NICs, transports and UCX's reason
     */
    public static UcxSharedMemory open(TransferConfig config) {
        return new UcxSharedMemory(config, UcxContexts.open(config, Path.of("/sys/class")));
    }

    @Override
    public synchronized Mapping allocate(long bytes, String name) {
        if (closed) {
            throw new IllegalStateException("UCX shared memory is closed");
        }
        UcpMemory memory;
        try {
            memory = context.memoryMap(new UcpMemMapParams().allocate().setLength(bytes));
        } catch (UcxException e) {
            throw new IllegalStateException(
                    "UCX could not allocate " + bytes + " bytes for " + name + ": "
                            + Objects.requireNonNullElse(e.getMessage(), e.toString()),
                    e);
        }
        Allocation a = new Allocation(memory, ProcMaps.isShared(memory.getAddress()));
        allocations.add(a);
        if (a.shared) {
            LOG.debug(
                    "{}: {} bytes of shared memory allocated by UCX at {}",
                    name,
                    a.lengthBytes(),
                    Long.toHexString(a.address()));
        } else if (config.allowsSharedMemory() && !privateWarned) {
            privateWarned = true;
            // UCX fell back past System V and POSIX shared memory (shmmax, shmall or /dev/shm too small)
            LOG.warn(
                    "{}: UCX allocated {} bytes of private memory, not shared memory (check kernel.shmmax,"
                            + " kernel.shmall and the size of /dev/shm): peers on this host read it through the"
                            + " transport's emulation, as over TCP",
                    name,
                    a.lengthBytes());
        }
        return a;
    }

    @Override
    public String describe() {
        return "UCX_ALLOCATED";
    }

    TransferConfig config() {
        return config;
    }

    /**
     * Whether an engine of {@code engine}'s configuration can borrow this context ({@link
     * TransferConfig#sharesContextWith}): same NICs and transports, any lane count.
     */
    public boolean serves(TransferConfig engine) {
        return engine.sharesContextWith(config);
    }

    /**
     * The context, for an engine's fabric, which must {@link #giveBack()} once its workers are closed.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    synchronized UcpContext borrow() {
        if (closed) {
            throw new IllegalStateException("UCX shared memory is closed");
        }
        borrowers++;
        return context;
    }

    /** An engine's fabric is done with the context. */
    synchronized void giveBack() {
        borrowers--;
        closeContextIfUnused();
    }

    /** The allocation that holds {@code [address, address + length)} entirely, or null. */
    synchronized @Nullable UcpMemory memoryHolding(long address, long length) {
        for (Allocation a : allocations) {
            if (address >= a.address() && address - a.address() <= a.lengthBytes() - length) {
                return a.memory;
            }
        }
        return null;
    }

    /** Transfer engines running on this context now. */
    public synchronized int borrowers() {
        return borrowers;
    }

    /** Allocations not yet released. */
    public synchronized int outstanding() {
        return allocations.size();
    }

    /** Of the {@link #outstanding()} allocations, those in shared memory a peer on this host can attach. */
    public synchronized int sharedOutstanding() {
        int n = 0;
        for (Allocation a : allocations) {
            n += a.shared ? 1 : 0;
        }
        return n;
    }

    /** Whether the context has been closed (after {@link #close()}, the last allocation and the last borrower). */
    synchronized boolean contextClosed() {
        return contextClosed;
    }

    private synchronized void released(Allocation a) {
        allocations.remove(a);
        closeContextIfUnused();
    }

    private void closeContextIfUnused() {
        if (closed && !contextClosed && allocations.isEmpty() && borrowers == 0) {
            contextClosed = true;
            context.close();
        }
    }

    /** Closes the context now, or when the last allocation or borrower goes (see the class comment). Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!allocations.isEmpty() || borrowers > 0) {
            LOG.error(
                    "UCX context kept open past close: {} pool allocations and {} transfer engines still use it, and"
                            + " closing it under mapped memory or live workers aborts the process; it closes after"
                            + " the last of them",
                    allocations.size(),
                    borrowers);
            return;
        }
        closeContextIfUnused();
    }

    private final class Allocation implements Mapping {
        final UcpMemory memory;
        final boolean shared;
        private boolean released;

        Allocation(UcpMemory memory, boolean shared) {
            this.memory = memory;
            this.shared = shared;
        }

        @Override
        public long address() {
            return memory.getAddress();
        }

        @Override
        public long lengthBytes() {
            return memory.getLength();
        }

        @Override
        public void release() {
            synchronized (UcxSharedMemory.this) {
                if (released) {
                    return;
                }
                released = true;
                memory.deregister();
                released(this);
            }
        }
    }
}
