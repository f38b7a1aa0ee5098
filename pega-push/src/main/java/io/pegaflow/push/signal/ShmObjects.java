package io.pegaflow.push.signal;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.load.LoadStateSignal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.OptionalInt;

/**
 * The shm objects a push or a receive is told to signal through (load_state, push_state, layer-ready), held to the
 * rule host descriptors follow: the object must belong to the calling user. Without it, a caller could name another
 * tenant's object and have the server write its verdicts there, or read another tenant's layer progress. A name is
 * checked before the server opens it; a malformed one, or a missing one, is INVALID_ARGUMENT naming the field (the
 * engine's Load keeps the reference's INTERNAL for its own load_state).
 */
public final class ShmObjects {
    private ShmObjects() {}

    /**
     * Attaches the load_state-layout object {@code name} for {@code field} after checking its owner.
     *
     * @throws EngineException INVALID_ARGUMENT for a bad or missing object, PERMISSION_DENIED for another user's
     */
    public static LoadStateSignal attachState(String field, String name, OptionalInt callerUid) {
        requireOwned(field, name, callerUid);
        try {
            return LoadStateSignal.attach(name);
        } catch (EngineException e) {
            throw EngineException.invalidArgument(field + ": " + e.getMessage());
        }
    }

    /**
     * Opens the layer-ready object {@code name} after checking its owner.
     *
     * @throws EngineException INVALID_ARGUMENT for a bad object, PERMISSION_DENIED for another user's
     */
    public static LayerReadySignal openReady(String name, int expectedLayers, OptionalInt callerUid) {
        requireOwned("layer_ready_shm", name, callerUid);
        return LayerReadySignal.open(name, expectedLayers);
    }

    /** Where the caller's user is known, the object must be that user's (checked without following a link). */
    static void requireOwned(String field, String name, OptionalInt callerUid) {
        if (callerUid.isEmpty()) {
            return; // a remote caller names objects of the server's host it cannot own; the name rules still apply
        }
        String bare = name.startsWith("/") ? name.substring(1) : name;
        if (bare.isEmpty() || bare.contains("/") || bare.equals(".") || bare.equals("..")) {
            throw EngineException.invalidArgument(field + ": invalid shared-memory name '" + name + "'");
        }
        Path path = Path.of("/dev/shm", bare);
        int owner;
        try {
            owner = (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw EngineException.invalidArgument(field + ": no shared-memory object '" + bare + "'");
        } catch (IOException | UnsupportedOperationException e) {
            throw EngineException.invalidArgument(field + ": cannot inspect '" + bare + "': " + e.getMessage());
        }
        if (owner != callerUid.getAsInt()) {
            throw EngineException.permissionDenied(
                    field + ": the shared-memory object '" + bare + "' belongs to another user");
        }
    }
}
