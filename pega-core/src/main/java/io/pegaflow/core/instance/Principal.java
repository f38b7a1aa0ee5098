package io.pegaflow.core.instance;

import io.pegaflow.core.device.ProcessUid;
import java.util.OptionalInt;

/**
 * Who a caller is, for owning an instance id (decision 0011, defect 6): the operating-system user of the calling
 * process when the transport can tell (a local TCP peer, an in-process call), otherwise the peer's host address.
 *
 * <p>The uid is the unit because Linux already makes it one: two processes of one user can read each other's memory
 * ({@code ptrace}, {@code /proc/<pid>/mem}), so binding an instance to anything finer would protect nothing. Two
 * remote peers on one host address are one principal for the same reason a NAT makes them one.
 *
 * @param name a printable identity, compared for equality; never shown to another caller
 */
public record Principal(String name) {

    /** The principal of a process of user {@code uid}. */
    public static Principal uid(int uid) {
        return new Principal("uid " + Integer.toUnsignedString(uid));
    }

    /** A peer whose user cannot be told (another host): its numeric address. */
    public static Principal host(String address) {
        return new Principal("host " + address);
    }

    /** A caller of this process (tests, benchmarks, in-process transports). */
    public static Principal inProcess() {
        return uid(ProcessUid.current());
    }

    /** The principal of a caller with {@code uid} when known, else of {@code hostAddress}. */
    public static Principal of(OptionalInt uid, String hostAddress) {
        return uid.isPresent() ? uid(uid.getAsInt()) : host(hostAddress);
    }
}
