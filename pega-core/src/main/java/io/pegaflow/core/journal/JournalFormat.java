package io.pegaflow.core.journal;

import io.pegaflow.core.engine.RegisterCommand;
import io.pegaflow.core.instance.Connector;
import io.pegaflow.core.instance.ConnectorGeneration;
import io.pegaflow.core.instance.Principal;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.zip.CRC32C;

/**
 * The journal's bytes (big-endian throughout).
 *
 * <pre>
 *   file   := header record*
 *   header := "PGFLJRNL" u32 version u32 reserved(0)                      16 bytes
 *   record := u32 payloadLength u32 crc32c(type, payload) u8 type payload
 *   REGISTER (1) := str instance, str namespace, i64 tpRank, i64 tpSize, i64 worldSize, i32 deviceId,
 *                   i64 numLayers, i64 ppRank, i32 n, n x (str layer, bytes wrapper, i64 numBlocks,
 *                   i64 bytesPerBlock, i64 kvStrideBytes, i64 segments), u8 hasUid, i32 uid
 *                   [u8 generation, str clientVersion, u8 flags (1 page_first, 2 kernel transfer)]   (version 2)
 *                   [i32 g, g x u32 layerGroupId]                                                    (version 3)
 *   REMOVE (2)   := str instance
 *   str := i32 length, UTF-8 bytes;  bytes := i32 length, bytes
 * </pre>
 *
 * The version in the header covers every record type and field; a reader refuses a higher one. Within a version, a
 * record that does not parse, fails its CRC or has an unknown type is where the valid journal ends (a torn write).
 * Version 2 added the connector section of REGISTER; compaction keeps version-1 records as they were, so a REGISTER
 * without it is a v0.22.4 connector's ({@link Connector#LEGACY}). Version 3 added the layers' storage groups (hybrid
 * cache groups); a REGISTER without them has every layer in group 0.
 */
final class JournalFormat {
    static final byte[] MAGIC = "PGFLJRNL".getBytes(StandardCharsets.US_ASCII);
    static final int VERSION = 3;
    static final int HEADER_BYTES = 16;
    static final int RECORD_HEADER_BYTES = 9;
    /** A RegisterContextBatch is at most one gRPC message (64 MB); nothing longer is a real record. */
    static final int MAX_PAYLOAD_BYTES = 64 << 20;

    static final byte REGISTER = 1;
    static final byte REMOVE = 2;

    private static final int FLAG_PAGE_FIRST = 1;
    private static final int FLAG_KERNEL = 2;

    private JournalFormat() {}

    static byte[] header() {
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES);
        b.put(MAGIC).putInt(VERSION).putInt(0);
        return b.array();
    }

    /** A whole record: framing, CRC and payload. */
    static byte[] frame(byte type, byte[] payload) {
        CRC32C crc = new CRC32C();
        crc.update(type);
        crc.update(payload);
        ByteBuffer b = ByteBuffer.allocate(RECORD_HEADER_BYTES + payload.length);
        b.putInt(payload.length).putInt((int) crc.getValue()).put(type).put(payload);
        return b.array();
    }

    static byte[] register(RegisterCommand c) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            str(out, c.instanceId());
            str(out, c.namespace());
            out.writeLong(c.tpRank());
            out.writeLong(c.tpSize());
            out.writeLong(c.worldSize());
            out.writeInt(c.deviceId());
            out.writeLong(c.numLayers());
            out.writeLong(c.ppRank());
            int n = c.layerNames().size();
            out.writeInt(n);
            for (int i = 0; i < n; i++) {
                str(out, c.layerNames().get(i));
                byte[] wrapper = c.wrapperBytes().get(i);
                out.writeInt(wrapper.length);
                out.write(wrapper);
                out.writeLong(c.numBlocks()[i]);
                out.writeLong(c.bytesPerBlock()[i]);
                out.writeLong(c.kvStrideBytes()[i]);
                out.writeLong(c.segments()[i]);
            }
            out.writeBoolean(c.callerUid().isPresent());
            out.writeInt(c.callerUid().orElse(0));
            Connector connector = c.connector();
            out.writeByte(generationCode(connector.generation()));
            str(out, connector.clientVersion());
            out.writeByte(
                    (connector.pageFirst() ? FLAG_PAGE_FIRST : 0) | (connector.kernelTransfer() ? FLAG_KERNEL : 0));
            out.writeInt(c.layerGroupIds().length);
            for (int group : c.layerGroupIds()) {
                out.writeInt(group);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return bytes.toByteArray();
    }

    static byte[] remove(String instanceId) {
        return utf8(instanceId, 4);
    }

    static RegisterCommand readRegister(ByteBuffer p) {
        String instance = str(p);
        String namespace = str(p);
        long tpRank = p.getLong();
        long tpSize = p.getLong();
        long worldSize = p.getLong();
        int deviceId = p.getInt();
        long numLayers = p.getLong();
        long ppRank = p.getLong();
        int n = p.getInt();
        if (n < 0 || n > p.remaining()) {
            throw new IllegalArgumentException("layer count " + n);
        }
        List<String> names = new ArrayList<>(n);
        List<byte[]> wrappers = new ArrayList<>(n);
        long[] numBlocks = new long[n];
        long[] bytesPerBlock = new long[n];
        long[] kvStride = new long[n];
        long[] segments = new long[n];
        for (int i = 0; i < n; i++) {
            names.add(str(p));
            wrappers.add(bytes(p));
            numBlocks[i] = p.getLong();
            bytesPerBlock[i] = p.getLong();
            kvStride[i] = p.getLong();
            segments[i] = p.getLong();
        }
        boolean hasUid = p.get() != 0;
        int uid = p.getInt();
        OptionalInt callerUid = hasUid ? OptionalInt.of(uid) : OptionalInt.empty();
        Connector connector = p.hasRemaining() ? readConnector(p) : Connector.LEGACY;
        int[] groups = p.hasRemaining() ? readGroups(p, n) : new int[0];
        end(p);
        return new RegisterCommand(
                instance,
                namespace,
                tpRank,
                tpSize,
                worldSize,
                deviceId,
                numLayers,
                ppRank,
                List.copyOf(names),
                List.copyOf(wrappers),
                numBlocks,
                bytesPerBlock,
                kvStride,
                segments,
                callerUid,
                Principal.of(callerUid, "unknown"),
                connector,
                groups);
    }

    private static int[] readGroups(ByteBuffer p, int layers) {
        int g = p.getInt();
        if (g != 0 && g != layers) {
            throw new IllegalArgumentException("layer group count " + g);
        }
        int[] groups = new int[g];
        for (int i = 0; i < g; i++) {
            groups[i] = p.getInt();
        }
        return groups;
    }

    private static Connector readConnector(ByteBuffer p) {
        ConnectorGeneration generation = switch (p.get()) {
            case 0 -> ConnectorGeneration.G0;
            case 1 -> ConnectorGeneration.G1;
            case 2 -> ConnectorGeneration.G2;
            case 3 -> ConnectorGeneration.G3;
            default -> throw new IllegalArgumentException("unknown connector generation");
        };
        String version = str(p);
        int flags = p.get();
        return new Connector(version, generation, (flags & FLAG_PAGE_FIRST) != 0, (flags & FLAG_KERNEL) != 0);
    }

    /** The generation's byte in the journal: fixed here, not the enum's declaration order. */
    private static int generationCode(ConnectorGeneration generation) {
        return switch (generation) {
            case G0 -> 0;
            case G1 -> 1;
            case G2 -> 2;
            case G3 -> 3;
        };
    }

    static String readRemove(ByteBuffer p) {
        String instance = str(p);
        end(p);
        return instance;
    }

    static boolean crcMatches(byte type, ByteBuffer payload, int expected) {
        CRC32C crc = new CRC32C();
        crc.update(type);
        crc.update(payload.duplicate());
        return (int) crc.getValue() == expected;
    }

    private static void str(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static byte[] utf8(String s, int prefix) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(prefix + b.length).putInt(b.length).put(b).array();
    }

    private static String str(ByteBuffer p) {
        return new String(bytes(p), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(ByteBuffer p) {
        int len = p.getInt();
        if (len < 0 || len > p.remaining()) {
            throw new BufferUnderflowException();
        }
        byte[] b = new byte[len];
        p.get(b);
        return b;
    }

    private static void end(ByteBuffer p) {
        if (p.hasRemaining()) {
            throw new IllegalArgumentException(p.remaining() + " trailing bytes");
        }
    }
}
