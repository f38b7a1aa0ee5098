package io.pegaflow.transfer.ucx;

import io.pegaflow.core.memory.ShardMemory;
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
 * ({@code ucp_mem_map} with {@code UCP_MEM_MAP_ALLOCATE}): UCX 1.13 then places them in System V or POSIX shared memory,
 * and a peer on the same host reads them by attaching the segment and copying, where the pool's own anonymous mappings
 * leave it only the active-message emulation that TCP uses (docs/transfer.md, decision 0019). Over a network the
 * allocated memory is registered with the NICs like any other.
 *
 * <p>The transfer engine borrows the context and these allocations' memory handles ({@link UcxTransferEngine#open(
 * TransferConfig, UcxSharedMemory, List, io.pegaflow.core.agent.NanoClock)}), so the pool, the engine and this object
 * close in that order: the engine's endpoints and workers, then the pool's shards (each {@link Mapping#release()} is a
 * {@code ucp_mem_unmap}), then the context. {@link #close()} with allocations still out logs an error and leaves the
 * context open: closing a context under mapped memory aborts the process (spec/dependencies.md §2).
 *
 * <p>Thread-safe.
 */
public final class UcxSharedMemory implements ShardMemory, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(UcxSharedMemory.class);

    private final TransferConfig config;
    private final UcpContext context;
    private final List<Allocation> allocations = new ArrayList<>();
    private boolean closed;
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
        return open(config, Path.of("/sys/class"));
    }

    static UcxSharedMemory open(TransferConfig config, Path sysClass) {
        return new UcxSharedMemory(config, UcxContexts.open(config, sysClass));
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

    UcpContext context() {
        return context;
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

    private synchronized void released(Allocation a) {
        allocations.remove(a);
    }

    /** Closes the context, unless an allocation is still out (see the class comment). Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!allocations.isEmpty()) {
            LOG.error(
                    "UCX context left open: {} pool allocations were never released, and closing it under mapped"
                            + " memory aborts the process",
                    allocations.size());
            return;
        }
        context.close();
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
