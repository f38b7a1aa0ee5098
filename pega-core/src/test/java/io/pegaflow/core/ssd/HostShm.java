package io.pegaflow.core.ssd;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;

/** A {@code /dev/shm} object standing in for device memory (host backend) or a load-state signal. */
final class HostShm implements AutoCloseable {
    final String name;
    final Path path;
    final MappedByteBuffer map;

    HostShm(String prefix, long size) {
        this.name = prefix + UUID.randomUUID().toString().replace("-", "");
        this.path = Path.of("/dev/shm", name);
        try (FileChannel ch = FileChannel.open(
                path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(size);
            map = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
            map.order(ByteOrder.LITTLE_ENDIAN);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The host backend's wrapper bytes for {@code [offset, offset + size)}. */
    byte[] wrapper(long offset, long size) {
        return ("{\"kind\":\"host-shm\",\"name\":\"" + name + "\",\"offset\":" + offset + ",\"size\":" + size + "}")
                .getBytes(StandardCharsets.UTF_8);
    }

    void put(long offset, byte[] bytes) {
        map.put((int) offset, bytes);
    }

    byte[] get(long offset, int length) {
        byte[] out = new byte[length];
        map.get((int) offset, out);
        return out;
    }

    void zero() {
        for (int i = 0; i < map.capacity(); i++) {
            map.put(i, (byte) 0);
        }
    }

    /** A fresh 32-byte load-state object: offset 8, magic, version 1, state 0. */
    static HostShm loadState() {
        HostShm s = new HostShm("pega_load_", 32);
        s.map.putLong(0, 8);
        s.map.putInt(8, 0x50464C44);
        s.map.putInt(12, 1);
        s.map.putLong(16, 0);
        return s;
    }

    long state() {
        return map.getLong(16);
    }

    @Override
    public void close() {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
