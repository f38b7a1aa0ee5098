package io.pegaflow.server.internode;

import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything drained from the queue in one pass, folded into a net operation per {@code (namespace, hash)}: the last
 * command wins, so a block sealed and evicted before the batch went out is only removed, and duplicates are sent
 * once. Then one Insert and one Remove list per namespace, in first-seen order. Not thread-safe (worker thread only).
 */
final class CommandBatch {

    private final Map<String, LinkedHashMap<ByteString, Boolean>> byNamespace = new LinkedHashMap<>();

    static CommandBatch of(List<Announcement> announcements) {
        CommandBatch batch = new CommandBatch();
        for (Announcement announcement : announcements) {
            LinkedHashMap<ByteString, Boolean> ops =
                    batch.byNamespace.computeIfAbsent(announcement.namespace(), ns -> new LinkedHashMap<>());
            for (byte[] hash : announcement.hashes()) {
                ops.put(ByteString.copyFrom(hash), announcement.insert());
            }
        }
        return batch;
    }

    /** The engine's hash arrays as the wire's bytes, in order. */
    static List<ByteString> byteStrings(List<byte[]> hashes) {
        List<ByteString> out = new ArrayList<>(hashes.size());
        for (byte[] hash : hashes) {
            out.add(ByteString.copyFrom(hash));
        }
        return out;
    }

    Map<String, List<ByteString>> inserts() {
        return select(true);
    }

    Map<String, List<ByteString>> removes() {
        return select(false);
    }

    private Map<String, List<ByteString>> select(boolean insert) {
        Map<String, List<ByteString>> out = new LinkedHashMap<>();
        byNamespace.forEach((namespace, ops) -> {
            List<ByteString> hashes = new ArrayList<>();
            ops.forEach((hash, isInsert) -> {
                if (isInsert == insert) {
                    hashes.add(hash);
                }
            });
            if (!hashes.isEmpty()) {
                out.put(namespace, hashes);
            }
        });
        return out;
    }

    static int count(Map<String, List<ByteString>> groups) {
        return groups.values().stream().mapToInt(List::size).sum();
    }
}
