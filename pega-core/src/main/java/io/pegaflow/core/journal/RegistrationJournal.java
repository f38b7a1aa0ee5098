package io.pegaflow.core.journal;

import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.engine.RegisterCommand;
import io.pegaflow.core.engine.RegistrationLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registration journal: every accepted RegisterContextBatch and every ended instance, appended and fsync'd before
 * the RPC answers, so that a restarted server can re-open the registrations of workers that outlived it
 * (docs/decisions/0010-restart.md). The format is {@link JournalFormat}.
 *
 * <p>Opening reads what a previous process left: a torn or corrupt tail is dropped with a warning, a file that is no
 * journal (or a link, or another user's) is set aside as {@value #SET_ASIDE_NAME} with a warning, and a journal of a
 * newer format is refused ({@link JournalVersionException}); nothing else stops a start. It then rewrites the file
 * from what it kept (compaction), so the next appends follow valid records. Later compactions happen when the file
 * grows past twice what is live (and at least a threshold): the kept records go to a new file created with
 * {@code O_EXCL|O_NOFOLLOW}, mode {@code 0600}, fsync'd and renamed over the journal, and the directory is fsync'd.
 *
 * <p>Thread-safety: every method is synchronised; registrations are rare and each waits for its fsync anyway.
 * Ownership: the journal owns its file channel; {@link #close()} releases it (idempotent).
 */
public final class RegistrationJournal implements RegistrationLog, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RegistrationJournal.class);
    public static final String FILE_NAME = "registrations.journal";
    static final String COMPACT_NAME = "registrations.journal.compacting";
    static final String SET_ASIDE_NAME = "registrations.journal.unreadable";
    static final long DEFAULT_COMPACT_MIN_BYTES = 1 << 20;

    private record Entry(byte[] frame, RegisterCommand command) {}

    /**
     * What opening found.
     *
     * @param registrations the journaled registrations still live, in the order they were accepted
     * @param droppedTailBytes bytes of a torn or corrupt tail that were dropped (0 for a clean journal)
     * @param setAside why an unreadable file was set aside, or null
     */
    public record Recovery(
            List<RegisterCommand> registrations,
            long droppedTailBytes,
            @Nullable String setAside) {}

    private final Path dir;
    private final Path file;
    private final long compactMinBytes;
    private final Map<String, List<Entry>> live = new LinkedHashMap<>();
    private final Recovery recovery;
    private long liveBytes;
    private FileChannel channel;
    private long size;
    private long compactions;
    private long droppedTail;
    private boolean closed;

    private RegistrationJournal(Path dir, long compactMinBytes) {
        this.dir = dir;
        this.file = dir.resolve(FILE_NAME);
        this.compactMinBytes = compactMinBytes;
        StateDirectory.prepare(dir);
        this.recovery = read();
        compact(); // drops the tail and whatever the journal no longer needs, before anything is appended
    }

    /**
     * Opens (creating when absent) the journal in {@code dir}.
     *
     * @throws JournalVersionException when the journal was written by a newer format
     * @throws UncheckedIOException when the directory cannot be used or the journal cannot be written
     */
    public static RegistrationJournal open(Path dir) {
        return open(dir, DEFAULT_COMPACT_MIN_BYTES);
    }

    static RegistrationJournal open(Path dir, long compactMinBytes) {
        return new RegistrationJournal(dir, compactMinBytes);
    }

    public Recovery recovery() {
        return recovery;
    }

    public Path file() {
        return file;
    }

    /** Bytes in the journal file now. */
    public synchronized long sizeBytes() {
        return size;
    }

    /** Compactions since open, the one at open included. */
    public synchronized long compactions() {
        return compactions;
    }

    /** Instances with at least one journaled registration. */
    public synchronized List<String> instanceIds() {
        return new ArrayList<>(live.keySet());
    }

    @Override
    public synchronized void registered(RegisterCommand command) {
        ensureOpen();
        byte[] frame = JournalFormat.frame(JournalFormat.REGISTER, JournalFormat.register(command));
        append(frame);
        live.computeIfAbsent(command.instanceId(), k -> new ArrayList<>()).add(new Entry(frame, command));
        liveBytes += frame.length;
        maybeCompact();
    }

    /**
     * Drops the record of a registration that failed after it was journaled: a REMOVE record when it was the
     * instance's only one, else a compaction without it (the format has no per-registration removal, and failures
     * after the fsync are rare).
     */
    @Override
    public synchronized void withdrawn(RegisterCommand command) {
        if (closed) {
            return;
        }
        List<Entry> entries = live.get(command.instanceId());
        Entry entry = entries == null
                ? null
                : entries.stream()
                        .filter(e -> e.command().equals(command))
                        .findFirst()
                        .orElse(null);
        if (entries == null || entry == null) {
            return;
        }
        entries.remove(entry);
        liveBytes -= entry.frame().length;
        if (entries.isEmpty()) {
            live.remove(command.instanceId());
            append(JournalFormat.frame(JournalFormat.REMOVE, JournalFormat.remove(command.instanceId())));
            maybeCompact();
        } else {
            compact();
        }
    }

    @Override
    public synchronized void removed(String instanceId) {
        if (closed) {
            return;
        }
        List<Entry> gone = live.remove(instanceId);
        if (gone == null) {
            return;
        }
        for (Entry e : gone) {
            liveBytes -= e.frame().length;
        }
        try {
            append(JournalFormat.frame(JournalFormat.REMOVE, JournalFormat.remove(instanceId)));
            maybeCompact();
        } catch (UncheckedIOException e) {
            // The instance is gone either way; a restart would find its memory gone too, or time it out.
            LOG.warn("the end of instance {} could not be journaled: {}", instanceId, e.getMessage());
        }
    }

    /** Rewrites the journal with only the live registrations. */
    public synchronized void compact() {
        ensureOpen();
        Path tmp = dir.resolve(COMPACT_NAME);
        try {
            Files.deleteIfExists(tmp); // left by a process that died while compacting; the link itself if it is one
            long written;
            try (FileChannel out = FileChannel.open(
                    tmp,
                    Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
                written = writeFully(out, 0, JournalFormat.header());
                for (List<Entry> entries : live.values()) {
                    for (Entry e : entries) {
                        written = writeFully(out, written, e.frame());
                    }
                }
                out.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("the state directory must support atomic rename", e);
            }
            syncDirectory();
            FileChannel reopened = FileChannel.open(file, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            if (channel != null) {
                channel.close();
            }
            channel = reopened;
            size = written;
            liveBytes = written; // the header and every live frame, exactly
            compactions++;
        } catch (IOException e) {
            throw new UncheckedIOException(
                    new IOException("registration journal " + file + " cannot be written: " + e.getMessage(), e));
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (channel != null) {
                channel.close();
            }
        } catch (IOException e) {
            LOG.warn("closing registration journal {}: {}", file, e.toString());
        }
    }

    // ---------------------------------------------------------------- internals

    private void maybeCompact() {
        if (size <= Math.max(compactMinBytes, 2 * liveBytes)) {
            return;
        }
        try {
            compact();
        } catch (UncheckedIOException e) {
            LOG.warn("registration journal not compacted, appending to it as it is: {}", e.getMessage());
        }
    }

    /** Writes at the end of the last durable record: a failed earlier append left nothing the reader would trust. */
    private void append(byte[] frame) {
        try {
            if (channel.size() != size) {
                channel.truncate(size);
            }
            long end = writeFully(channel, size, frame);
            channel.force(false); // fdatasync: the bytes and the new length
            size = end;
        } catch (IOException e) {
            throw new UncheckedIOException(
                    new IOException("registration journal " + file + " cannot be written: " + e.getMessage(), e));
        }
    }

    private static long writeFully(FileChannel out, long position, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        long pos = position;
        while (b.hasRemaining()) {
            pos += out.write(b, pos);
        }
        return pos;
    }

    private void syncDirectory() throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("registration journal " + file + " is closed");
        }
    }

    private Recovery read() {
        byte[] bytes;
        try {
            Object owner = Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                return setAside("is not a regular file");
            }
            if (!owner.equals(ProcessUid.current())) {
                return setAside("belongs to uid " + owner + ", not to this server's user " + ProcessUid.current());
            }
            try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                long length = in.size();
                if (length > Integer.MAX_VALUE - 16) {
                    return setAside("is " + length + " bytes, far larger than any journal");
                }
                ByteBuffer all = ByteBuffer.allocate((int) length);
                while (all.hasRemaining() && in.read(all) >= 0) {
                    // read to the end
                }
                bytes = Arrays.copyOf(all.array(), all.position());
            }
        } catch (NoSuchFileException e) {
            return new Recovery(List.of(), 0, null);
        } catch (IOException e) {
            return setAside("cannot be read (" + e.getMessage() + ")");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (bytes.length < JournalFormat.HEADER_BYTES) {
            return setAside("is too short for a journal header (" + bytes.length + " bytes)");
        }
        byte[] magic = new byte[JournalFormat.MAGIC.length];
        b.get(magic);
        if (!Arrays.equals(magic, JournalFormat.MAGIC)) {
            return setAside("does not start with the journal's magic bytes");
        }
        int version = b.getInt();
        b.getInt(); // reserved
        if (version > JournalFormat.VERSION) {
            throw new JournalVersionException("registration journal " + file + " has format version " + version
                    + ", written by a newer pega-server; this one reads version " + JournalFormat.VERSION
                    + " and refuses it rather than lose what it cannot read. Start the newer server, or move the file"
                    + " away to start without restoring registrations");
        }
        if (version < 1) {
            return setAside("has format version " + version + ", which no pega-server writes");
        }
        List<RegisterCommand> kept = readRecords(b);
        return new Recovery(kept, droppedTail, null);
    }

    private List<RegisterCommand> readRecords(ByteBuffer b) {
        while (b.remaining() > 0) {
            int start = b.position();
            String problem = readRecord(b);
            if (problem != null) {
                droppedTail = (long) b.limit() - start;
                LOG.warn(
                        "registration journal {}: dropped a torn or corrupt tail of {} bytes at offset {} ({});"
                                + " the records before it are kept",
                        file,
                        droppedTail,
                        start,
                        problem);
                b.position(b.limit());
            }
        }
        List<RegisterCommand> out = new ArrayList<>();
        for (List<Entry> entries : live.values()) {
            for (Entry e : entries) {
                out.add(e.command());
            }
        }
        return List.copyOf(out);
    }

    /** Applies one record; returns null, or what is wrong with the record at the position (which is then the end). */
    private @Nullable String readRecord(ByteBuffer b) {
        if (b.remaining() < JournalFormat.RECORD_HEADER_BYTES) {
            return "a record header cut short";
        }
        int start = b.position();
        int length = b.getInt();
        int crc = b.getInt();
        byte type = b.get();
        if (length < 0 || length > JournalFormat.MAX_PAYLOAD_BYTES) {
            return "a record length of " + Integer.toUnsignedString(length);
        }
        if (length > b.remaining()) {
            return "a record cut short";
        }
        ByteBuffer payload = b.slice();
        payload.limit(length);
        if (!JournalFormat.crcMatches(type, payload, crc)) {
            return "a CRC mismatch";
        }
        byte[] frame = new byte[JournalFormat.RECORD_HEADER_BYTES + length];
        b.position(start);
        b.get(frame);
        try {
            switch (type) {
                case JournalFormat.REGISTER -> {
                    RegisterCommand c = JournalFormat.readRegister(payload);
                    live.computeIfAbsent(c.instanceId(), k -> new ArrayList<>()).add(new Entry(frame, c));
                }
                case JournalFormat.REMOVE -> live.remove(JournalFormat.readRemove(payload));
                default -> {
                    b.position(start);
                    return "an unknown record type " + type;
                }
            }
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            b.position(start);
            return "a record that does not parse (" + e + ")";
        }
        return null;
    }

    private Recovery setAside(String why) {
        Path aside = dir.resolve(SET_ASIDE_NAME);
        try {
            Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(new IOException(
                    "registration journal " + file + " " + why + " and cannot be moved aside: " + e.getMessage(), e));
        }
        LOG.warn("registration journal {} {}; moved to {}, starting without restoring registrations", file, why, aside);
        return new Recovery(List.of(), 0, why);
    }
}
