package io.pegaflow.metaserver.grpc;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.metaserver.config.MetaserverProperties;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Request checks with clear {@code INVALID_ARGUMENT} messages, thrown as statuses that the edge passes through. The reference only parses node_id and rejects empty
 * hash lists; the node address, sizes and lengths are our additions, so a misconfigured client or an oversized batch
 * gets a message that names the field and the limit instead of being indexed.
 */
final class RequestValidator {

    private static final Pattern HYPHENATED_UUID =
            Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
    private static final Pattern SIMPLE_UUID = Pattern.compile("[0-9a-fA-F]{32}");
    private static final int MAX_NODE_CHARS = 255;
    private static final int MAX_ECHO_CHARS = 64;

    private final MetaserverProperties limits;

    RequestValidator(MetaserverProperties limits) {
        this.limits = limits;
    }

    /**
     * Parses node_id in the forms the reference's uuid crate accepts: hyphenated, 32 hex digits, {@code {...}} and
     * {@code urn:uuid:...}. Java's {@link UUID#fromString} alone would take "1-2-3-4-5".
     */
    static UUID nodeId(String raw) {
        String text = raw;
        if (text.regionMatches(true, 0, "urn:uuid:", 0, 9)) {
            text = text.substring(9);
        } else if (text.length() > 2 && text.startsWith("{") && text.endsWith("}")) {
            text = text.substring(1, text.length() - 1);
        }
        if (SIMPLE_UUID.matcher(text).matches()) {
            text = text.substring(0, 8) + "-" + text.substring(8, 12) + "-" + text.substring(12, 16) + "-"
                    + text.substring(16, 20) + "-" + text.substring(20);
        }
        if (!HYPHENATED_UUID.matcher(text).matches()) {
            throw invalid(
                    "invalid node_id: expected a UUID such as 67e55044-10b1-426f-9247-bb680e5fe0c8, got " + echo(raw));
        }
        return UUID.fromString(text);
    }

    /** The owner address: {@code host:port}, as the server advertises it (it is also the RDMA requester id). */
    static String node(String raw) {
        if (raw.isEmpty()) {
            throw invalid("invalid node: node cannot be empty (expected the server's advertised host:port)");
        }
        int colon = raw.lastIndexOf(':');
        boolean valid = raw.length() <= MAX_NODE_CHARS && colon > 0 && isPort(raw.substring(colon + 1));
        if (!valid || raw.chars().anyMatch(c -> c <= ' ')) {
            throw invalid("invalid node: expected host:port (the server's advertised gRPC address), got " + echo(raw));
        }
        return raw;
    }

    private static boolean isPort(String text) {
        if (text.isEmpty() || text.length() > 5 || !text.chars().allMatch(Character::isDigit)) {
            return false;
        }
        int port = Integer.parseInt(text);
        return port > 0 && port <= 65535;
    }

    /** Limits on a non-empty hash list and its namespace. */
    void hashes(String namespace, List<ByteString> hashes) {
        if (namespace.length() > limits.maxNamespaceChars()) {
            throw invalid("namespace is " + namespace.length() + " characters long; at most "
                    + limits.maxNamespaceChars() + " are accepted (pega.metaserver.max-namespace-chars)");
        }
        if (hashes.size() > limits.maxHashesPerRequest()) {
            throw invalid("block_hashes has " + hashes.size() + " entries; at most " + limits.maxHashesPerRequest()
                    + " are accepted per request (pega.metaserver.max-hashes-per-request): split the batch");
        }
        for (int i = 0; i < hashes.size(); i++) {
            int size = hashes.get(i).size();
            if (size == 0) {
                throw invalid("block_hashes[" + i + "] is empty");
            }
            if (size > limits.maxHashBytes()) {
                throw invalid("block_hashes[" + i + "] is " + size + " bytes long; at most " + limits.maxHashBytes()
                        + " are accepted (pega.metaserver.max-hash-bytes)");
            }
        }
    }

    private static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }

    private static String echo(String raw) {
        String shown = raw.length() > MAX_ECHO_CHARS ? raw.substring(0, MAX_ECHO_CHARS) + "..." : raw;
        return "\"" + shown + "\"";
    }
}
