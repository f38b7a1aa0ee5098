package io.pegaflow.core.memory;

import io.pegaflow.kernel.memory.ShardMemory;
import io.pegaflow.sys.LibC;
import io.pegaflow.sys.NativeException;
import io.pegaflow.sys.Posix;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard's memory: mapped (or allocated from a {@link ShardMemory}), optionally bound to a NUMA node, and
 * pre-touched by {@link #map}; unmapped or handed back by {@link #unmap}. The pool's own mappings are anonymous, in
 * this order:
 *
 * <ol>
 *   <li>{@code hugePages}: round the length up to {@code Hugepagesize} and map with {@code MAP_HUGETLB}. When the
 *       kernel has too few reserved huge pages that fails with {@code ENOMEM}; then map regular pages of the same
 *       length and ask for transparent huge pages ({@code MADV_HUGEPAGE}), warning once per process.
 *   <li>otherwise regular pages of exactly the requested length.
 * </ol>
 *
 * Neither uses {@code MAP_NORESERVE}: a huge-page mapping without a reservation would raise {@code SIGBUS} during
 * pre-touch instead of failing here.
 *
 * <p>Not thread-safe; the owning pool maps all shards from one thread and unmaps them once.
 */
final class BackingRegion {
    private static final Logger log = LoggerFactory.getLogger(BackingRegion.class);
    private static final AtomicBoolean HUGETLB_FALLBACK_WARNED = new AtomicBoolean();

    /** How the pages of a region were obtained. */
    enum PageKind {
        REGULAR,
        HUGETLB,
        TRANSPARENT_HUGE,
        /** Allocated by a {@link ShardMemory}, which chose the pages. */
        SHARD_MEMORY
    }

    private final long address;
    private final long lengthBytes;
    private final PageKind pageKind;
    private final ShardMemory.@Nullable Mapping external;

    private BackingRegion(long address, long lengthBytes, PageKind pageKind) {
        this(address, lengthBytes, pageKind, null);
    }

    private BackingRegion(long address, long lengthBytes, PageKind pageKind, ShardMemory.@Nullable Mapping external) {
        this.address = address;
        this.lengthBytes = lengthBytes;
        this.pageKind = pageKind;
        this.external = external;
    }

    /**
     * Maps, binds and pre-touches a region of at least {@code requestedBytes}.
     *
     * @throws NativeException when no mapping can be made; nothing stays mapped then
     * @throws IllegalStateException when pre-touching stalled past its deadline; the mapping is left in place then
     */
    static BackingRegion map(long requestedBytes, PoolConfig config, String name, @Nullable ShardMemory memory) {
        BackingRegion region = memory != null
                ? allocated(memory.allocate(requestedBytes, name), requestedBytes)
                : config.hugePages() ? mapHuge(requestedBytes) : mapRegular(requestedBytes);
        try {
            region.prepare(config, name);
        } catch (PreToucher.Stalled e) {
            // a writer may still be running in the mapping: unmapping it would fault that thread
            throw e;
        } catch (RuntimeException | Error e) {
            region.unmap();
            throw e;
        }
        return region;
    }

    private static BackingRegion allocated(ShardMemory.Mapping m, long requestedBytes) {
        if (m.lengthBytes() < requestedBytes) {
            m.release();
            throw new IllegalStateException(
                    "shard memory allocated " + m.lengthBytes() + " bytes, asked for " + requestedBytes);
        }
        return new BackingRegion(m.address(), m.lengthBytes(), PageKind.SHARD_MEMORY, m);
    }

    private static BackingRegion mapRegular(long bytes) {
        return new BackingRegion(Posix.mmapAnonymousCommitted(bytes, false), bytes, PageKind.REGULAR);
    }

    private static BackingRegion mapHuge(long requestedBytes) {
        long hugePageBytes = HugePages.sizeBytesFromMeminfo();
        long bytes = HugePages.roundUp(requestedBytes, hugePageBytes);
        try {
            return new BackingRegion(Posix.mmapAnonymousCommitted(bytes, true), bytes, PageKind.HUGETLB);
        } catch (NativeException e) {
            if (HUGETLB_FALLBACK_WARNED.compareAndSet(false, true)) {
                log.warn(
                        "MAP_HUGETLB mapping of {} bytes failed ({}); using regular pages with MADV_HUGEPAGE."
                                + " Reserve pages via /proc/sys/vm/nr_hugepages to get hugetlb pages."
                                + " Further fallbacks are logged at debug.",
                        bytes,
                        e.getMessage());
            } else {
                log.debug("MAP_HUGETLB mapping of {} bytes failed ({}); using MADV_HUGEPAGE", bytes, e.getMessage());
            }
        }
        long address = Posix.mmapAnonymousCommitted(bytes, false);
        if (!Posix.madvise(address, bytes, LibC.MADV_HUGEPAGE)) {
            log.debug("madvise(MADV_HUGEPAGE) refused for {} bytes; transparent huge pages are off", bytes);
        }
        return new BackingRegion(address, bytes, PageKind.TRANSPARENT_HUGE);
    }

    /**
     * Binds to the NUMA node (before any page exists, so first touch lands there) and faults every page in.
     *
     * <p>OFF-HEAP: {@code [address, address + lengthBytes)} is the mapping this object just created; nothing else can
     * see it yet, and {@link PreToucher#touch} joins its writers before returning.
     */
    private void prepare(PoolConfig config, String name) {
        if (config.numaNode() >= 0 && !Posix.mbindToNode(address, lengthBytes, config.numaNode())) {
            log.warn(
                    "mbind of {} to NUMA node {} failed; pages follow the kernel's default placement",
                    name,
                    config.numaNode());
        }
        // Pre-touching at the small page size is correct for any pages, only slower for huge ones.
        long pageBytes = pageKind == PageKind.HUGETLB || pageKind == PageKind.TRANSPARENT_HUGE
                ? HugePages.sizeBytesFromMeminfo()
                : Posix.pageSize();
        int threads =
                PreToucher.threadCount(lengthBytes, pageBytes, config.pretouchThreads(), CpuTopology.availableCores());
        PreToucher.touch(address, lengthBytes, pageBytes, threads, name);
    }

    long address() {
        return address;
    }

    long lengthBytes() {
        return lengthBytes;
    }

    PageKind pageKind() {
        return pageKind;
    }

    /**
     * Unmaps, or hands an allocated region back to its {@link ShardMemory}; a failure is logged, because nothing can be
     * done about it at shutdown.
     *
     * <p>OFF-HEAP: the caller guarantees no allocation inside the region is still in use (the pool calls this only
     * when none is outstanding) and calls it once.
     */
    void unmap() {
        if (external != null) {
            try {
                external.release();
            } catch (RuntimeException e) {
                log.error("release of {} bytes at {} failed", lengthBytes, Long.toHexString(address), e);
            }
            return;
        }
        try {
            Posix.munmap(address, lengthBytes);
        } catch (NativeException e) {
            log.error("munmap of {} bytes at {} failed", lengthBytes, Long.toHexString(address), e);
        }
    }
}
