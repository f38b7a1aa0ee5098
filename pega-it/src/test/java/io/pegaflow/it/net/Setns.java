package io.pegaflow.it.net;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import io.pegaflow.sys.LibC;

/**
 * Moves the calling thread, and only it, into a named network namespace ({@code setns(2)} on
 * {@code /var/run/netns/NAME}, where {@code ip netns add} mounts it). Sockets the thread creates afterwards belong to
 * that namespace and keep belonging to it whichever thread uses them; that is how this JVM, which stays in the root
 * namespace, dials addresses that exist only inside one.
 */
final class Setns {
    static {
        Native.register(NativeLibrary.getInstance("c"));
    }

    private static final int CLONE_NEWNET = 0x40000000;

    private Setns() {}

    private static native int setns(int fd, int nstype) throws LastErrorException;

    /** Never call on a pooled thread: the thread stays in the namespace until it ends. */
    static void enterNetworkNamespace(String name) {
        int fd = LibC.open("/var/run/netns/" + name, LibC.O_RDONLY | LibC.O_CLOEXEC, 0);
        try {
            setns(fd, CLONE_NEWNET);
        } finally {
            LibC.close(fd);
        }
    }
}
