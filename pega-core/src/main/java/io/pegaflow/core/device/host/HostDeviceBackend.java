package io.pegaflow.core.device.host;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.device.MappingCache;
import io.pegaflow.sys.LibC;
import io.pegaflow.sys.NativeException;
import io.pegaflow.sys.Posix;
import io.pegaflow.sys.SelfVmCopy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * The device backend for machines without a GPU: a worker's "device memory" is a POSIX shared-memory object in
 * {@code /dev/shm}, described by a {@link HostShmDescriptor}, and copies are done by the kernel ({@link
 * HostDeviceCopier}).
 *
 * <p>Each object is mapped once (keyed by path and inode, so a re-created object of the same name gets a fresh
 * mapping) and shared by every layer in it, through the {@link MappingCache} the CUDA backend uses for its IPC
 * mappings. Thread-safe.
 */
public final class HostDeviceBackend implements DeviceBackend {
    private final Path shmDir;
    private final MappingCache<ShmKey, ShmMapping> mappings =
            new MappingCache<>(HostDeviceBackend::map, HostDeviceBackend::unmap);

    /** Which object: its path and inode (a re-created object of the same name is another object). */
    record ShmKey(Path path, Object inode) {}

    public HostDeviceBackend() {
        this(Path.of("/dev/shm"));
    }

    HostDeviceBackend(Path shmDir) {
        if (!SelfVmCopy.available()) {
            throw new IllegalStateException("the host backend copies with process_vm_readv/process_vm_writev, which "
                    + "this process may not call (a seccomp profile that forbids them?); allow both system calls");
        }
        this.shmDir = shmDir;
    }

    @Override
    public String name() {
        return "host";
    }

    /**
     * {@inheritDoc}
     *
     * <p>The object must belong to the caller: it is owned by the caller's uid, and no other instance has it
     * registered. Root gets no exemption: a root worker registers objects it created, which root owns. A caller whose uid the transport could not tell (a peer on another host) cannot register
     * host memory at all: shared memory is local by nature.
     */
    @Override
    public LayerMemory openLayer(Caller caller, int deviceId, byte[] wrapperBytes) {
        HostShmDescriptor d = HostShmDescriptor.parse(wrapperBytes);
        Path path = shmDir.resolve(d.name());
        int callerUid = caller.uid()
                .orElseThrow(() -> HostShmDescriptor.bad("the caller's user cannot be verified over this connection;"
                        + " host-shm memory is accepted only from callers on this host"));
        ShmKey key;
        int ownerUid;
        try {
            Object inode = Files.getAttribute(path, "unix:ino", LinkOption.NOFOLLOW_LINKS);
            if (!Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) {
                throw HostShmDescriptor.bad(path + " is not a regular shared-memory object");
            }
            ownerUid = (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            key = new ShmKey(path, inode);
        } catch (IOException | UnsupportedOperationException e) {
            throw HostShmDescriptor.bad(path + " cannot be opened: " + e.getMessage());
        }
        if (callerUid != ownerUid) {
            throw HostShmDescriptor.bad(
                    path + " belongs to uid " + ownerUid + ", not to the caller (uid " + callerUid + ")");
        }
        MappingCache.Entry<ShmKey, ShmMapping> mapping = mappings.acquire(key);
        if (!mapping.mapping().bindTo(caller.instanceId())) {
            mapping.release();
            throw HostShmDescriptor.bad(path + " is registered by another instance");
        }
        long end = d.offset() + d.size();
        if (end < 0 || end > mapping.mapping().sizeBytes()) {
            mapping.release();
            throw HostShmDescriptor.bad("range [" + d.offset() + ", " + end + ") exceeds " + path + " of "
                    + mapping.mapping().sizeBytes() + " bytes");
        }
        return new HostLayerMemory(mapping, d.offset(), d.size());
    }

    private static ShmMapping map(ShmKey key) {
        Path path = key.path();
        int fd = -1;
        try {
            fd = Posix.open(path.toString(), LibC.O_RDWR | LibC.O_NOFOLLOW, 0);
            long size = Posix.fileSize(fd, path.toString());
            if (size <= 0) {
                throw HostShmDescriptor.bad(path + " is empty");
            }
            return new ShmMapping(Posix.mmapShared(fd, size, path.toString()), size);
        } catch (NativeException e) {
            throw HostShmDescriptor.bad(path + " cannot be mapped: " + e.getMessage());
        } finally {
            // The mapping keeps the object alive; the descriptor is no longer needed.
            Posix.closeQuietly(fd);
        }
    }

    private static void unmap(ShmMapping mapping) {
        // OFF-HEAP: every layer over this mapping has been closed, after its lanes drained.
        Posix.munmap(mapping.address(), mapping.sizeBytes());
    }

    /** Objects currently mapped; tests assert this returns to 0 after teardown. */
    public int mappedObjects() {
        return mappings.size();
    }

    @Override
    public DeviceCopier openCopier(int deviceId) {
        return new HostDeviceCopier();
    }

    @Override
    public void close() {}
}
