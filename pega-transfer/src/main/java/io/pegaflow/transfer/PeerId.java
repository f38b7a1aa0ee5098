package io.pegaflow.transfer;

/**
 * A peer node, named by the address other nodes dial it at ({@code ip:port} of its gRPC server, as the metaserver and
 * the reference's {@code requester_id} name it). Connections are keyed by the exact string, so a node must advertise
 * the address its peers use.
 */
public record PeerId(String address) {
    /** Longest address accepted: a host name of 253 characters, a colon and a port. */
    public static final int MAX_LENGTH = 260;

    /** @throws IllegalArgumentException when the address is blank or longer than {@link #MAX_LENGTH} */
    public PeerId {
        if (address == null || address.isBlank()) {
            throw new IllegalArgumentException("peer address must not be blank");
        }
        if (address.length() > MAX_LENGTH) {
            throw new IllegalArgumentException(
                    "peer address is " + address.length() + " characters, more than " + MAX_LENGTH);
        }
    }

    @Override
    public String toString() {
        return address;
    }
}
