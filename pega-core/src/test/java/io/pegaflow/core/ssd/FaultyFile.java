package io.pegaflow.core.ssd;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real {@link DirectIoFile} with faults a drive or filesystem produces, switched on by tests: a failing errno, a
 * short transfer, or a stall until released.
 */
final class FaultyFile implements ShardFile {
    /** Opens a store on fault-injecting shard files, collecting them in {@code files} in shard order. */
    static SsdStore openStore(SsdConfig config, List<FaultyFile> files) {
        return SsdStore.open(config, p -> {
            FaultyFile f = new FaultyFile(p);
            files.add(f);
            return f;
        });
    }

    enum Fault {
        NONE,
        EIO,
        ENOSPC,
        EROFS,
        SHORT
    }

    private final ShardFile real;
    volatile Fault writeFault = Fault.NONE;
    volatile Fault readFault = Fault.NONE;
    volatile CountDownLatch writeGate;
    volatile CountDownLatch readGate;
    final AtomicInteger writes = new AtomicInteger();

    FaultyFile(Path path) {
        this.real = DirectIoFile.open(path);
    }

    @Override
    public Path path() {
        return real.path();
    }

    @Override
    public long sizeBytes() {
        return real.sizeBytes();
    }

    @Override
    public void resize(long bytes) {
        real.resize(bytes);
    }

    @Override
    public long writev(long iovAddress, int iovCount, long fileOffset) {
        await(writeGate);
        writes.incrementAndGet();
        return switch (writeFault) {
            case NONE -> real.writev(iovAddress, iovCount, fileOffset);
            case EIO -> throw SsdIoException.ofErrno("pwritev", 5, path().toString());
            case ENOSPC -> throw SsdIoException.ofErrno("pwritev", 28, path().toString());
            case EROFS -> throw SsdIoException.ofErrno("pwritev", 30, path().toString());
            case SHORT -> real.writev(iovAddress, 1, fileOffset); // only the header lands
        };
    }

    @Override
    public long read(long address, long length, long fileOffset) {
        await(readGate);
        return switch (readFault) {
            case NONE -> real.read(address, length, fileOffset);
            case EIO -> throw SsdIoException.ofErrno("pread", 5, path().toString());
            case ENOSPC, EROFS -> throw SsdIoException.ofErrno("pread", 9, path().toString());
            case SHORT -> real.read(address, length - 512, fileOffset);
        };
    }

    private static void await(CountDownLatch gate) {
        if (gate != null) {
            try {
                gate.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void sync() {
        real.sync();
    }

    @Override
    public boolean isReplaced() {
        return real.isReplaced();
    }

    @Override
    public void close() {
        real.close();
    }
}
