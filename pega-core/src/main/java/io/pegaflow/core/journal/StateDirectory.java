package io.pegaflow.core.journal;

import io.pegaflow.core.device.ProcessUid;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The directory the journal lives in. The journal holds CUDA IPC handles and shared-memory names, which let whoever
 * reads them map a worker's KV cache, so the directory is created {@code 0700}; a directory anyone may write into,
 * on the way to it or itself, lets another local user swap files under the server, which is warned about. A state
 * directory that is itself a symbolic link, or that belongs to another user, is refused: its owner, or whoever made
 * the link, could remove the journal or swap an old one back and so lose or replay the restore.
 */
final class StateDirectory {
    private static final Logger LOG = LoggerFactory.getLogger(StateDirectory.class);
    static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

    private StateDirectory() {}

    /**
     * Creates {@code dir} (and missing parents, {@code 0700}) and returns the directories on its real path that other
     * users may write into, after logging one warning naming them.
     *
     * @throws UncheckedIOException when it cannot be created, is not a directory, is a symbolic link or belongs to
     *     another user
     */
    static List<Path> prepare(Path dir) {
        return prepare(dir, ProcessUid.current());
    }

    /** As {@link #prepare(Path)}, for a server running as {@code uid}. */
    static List<Path> prepare(Path dir, int uid) {
        try {
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            }
            if (Files.isSymbolicLink(dir)) {
                throw new IOException("it is a symbolic link (to " + Files.readSymbolicLink(dir) + "); name the real"
                        + " directory, owned by this server's user");
            }
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException("not a directory");
            }
            int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if (owner != uid) {
                throw new IOException("it belongs to uid " + Integer.toUnsignedString(owner) + ", not to this server's"
                        + " user (uid " + Integer.toUnsignedString(uid) + "), who could remove or replace the journal"
                        + " in it");
            }
            Path real = dir.toRealPath();
            List<Path> worldWritable = new ArrayList<>();
            for (Path p = real; p != null; p = p.getParent()) {
                if (Files.getPosixFilePermissions(p).contains(PosixFilePermission.OTHERS_WRITE)) {
                    worldWritable.add(p);
                }
            }
            if (!worldWritable.isEmpty()) {
                LOG.warn(
                        "state directory {} lies in a world-writable path ({}): another local user could replace the"
                                + " registration journal there; use a directory only this user can write to",
                        real,
                        worldWritable);
            }
            Set<PosixFilePermission> own = Files.getPosixFilePermissions(real);
            if (!OWNER_ONLY.containsAll(own)) {
                LOG.warn(
                        "state directory {} is accessible to other users ({}); the journal in it holds handles to"
                                + " workers' KV-cache memory",
                        real,
                        PosixFilePermissions.toString(own));
            }
            return worldWritable;
        } catch (IOException | UnsupportedOperationException e) {
            throw new UncheckedIOException(
                    new IOException("state directory " + dir + " cannot be used: " + e.getMessage(), e));
        }
    }
}
