package io.pegaflow.metaserver.node;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.UUID;

/**
 * What may be shown of a node_id. The node_id is the only credential of a node's writes (Insert, Remove, Unregister),
 * so no read endpoint discloses it; a fingerprint (the first 12 hex digits of its SHA-256) tells sessions apart and
 * matches the one the node logs, without helping anyone forge its writes.
 */
public final class NodeIdFingerprint {
    private static final int HEX_DIGITS = 12;

    private NodeIdFingerprint() {}

    public static String of(UUID nodeId) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(nodeId.toString().getBytes(StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(digest).substring(0, HEX_DIGITS);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM provides SHA-256", e);
        }
    }
}
