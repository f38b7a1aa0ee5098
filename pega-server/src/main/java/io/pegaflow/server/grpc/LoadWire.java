package io.pegaflow.server.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.pegaflow.core.engine.GroupedLeaseLoad;
import io.pegaflow.core.engine.LeaseLoad;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.ConnectorGeneration;
import io.pegaflow.proto.compat.LeaseLoadWire;
import io.pegaflow.proto.compat.LoadBlockIds;
import io.pegaflow.proto.compat.LoadBlockTarget;
import io.pegaflow.proto.compat.LoadGroup;
import io.pegaflow.proto.compat.LoadRequestWire;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes Load's two generation-dependent fields (see {@code pegaflow/compat/load_wire.proto}) by the generation of
 * the instance the request names. The bytes alone cannot tell the forms apart, so the generation decides; a request
 * whose layer field plainly has the other form (a grouped list always starts with {@code 0x0A}, a layer name never
 * does) is refused instead of read as garbage.
 */
final class LoadWire {
    /** A LoadGroup, and a LoadBlockIds, each start with field 1, length-delimited. */
    private static final int FIELD_1_LEN = 0x0A;

    private LoadWire() {}

    /** Up to 0.23.6: layer names and packed block ids. */
    record Legacy(List<String> layerNames, List<LeaseLoad> loads) {}

    /** From 0.23.7: layer groups and per-group targets. */
    record Grouped(List<List<String>> groups, List<GroupedLeaseLoad> loads) {}

    static Legacy legacy(LoadRequestWire r, ConnectorGeneration generation) {
        List<String> names = new ArrayList<>(r.getLayersCount());
        for (ByteString entry : r.getLayersList()) {
            if (!entry.isEmpty() && (entry.byteAt(0) & 0xFF) == FIELD_1_LEN) {
                throw EngineException.invalidArgument("Load for instance " + r.getInstanceId()
                        + " carries layer groups (the Load of pegaflow-llm 0.23.7 and later), but the instance"
                        + " registered as a generation " + generation + " connector (" + generation.versions() + ")");
            }
            names.add(utf8(entry));
        }
        List<LeaseLoad> loads = new ArrayList<>(r.getLoadsCount());
        for (LeaseLoadWire l : r.getLoadsList()) {
            loads.add(new LeaseLoad(l.getLease().toByteArray(), packedIds(l)));
        }
        return new Legacy(names, loads);
    }

    static Grouped grouped(LoadRequestWire r) {
        List<List<String>> groups = new ArrayList<>(r.getLayersCount());
        for (ByteString entry : r.getLayersList()) {
            if (!entry.isEmpty() && (entry.byteAt(0) & 0xFF) != FIELD_1_LEN) {
                throw EngineException.invalidArgument("Load for instance " + r.getInstanceId()
                        + " carries layer names (the Load of pegaflow-llm 0.23.6 and earlier), but the instance"
                        + " registered as a generation G3 connector (0.23.7+), whose Load names layer groups");
            }
            groups.add(List.copyOf(parse(entry, LoadGroup.parser(), "LoadGroup").getLayerNamesList()));
        }
        List<GroupedLeaseLoad> loads = new ArrayList<>(r.getLoadsCount());
        for (LeaseLoadWire l : r.getLoadsList()) {
            int[][] byGroup = new int[l.getBlockIdsCount()][];
            for (int g = 0; g < byGroup.length; g++) {
                List<LoadBlockTarget> targets = parse(l.getBlockIds(g), LoadBlockIds.parser(), "LoadBlockIds")
                        .getTargetsList();
                byGroup[g] = new int[targets.size()];
                for (int i = 0; i < targets.size(); i++) {
                    byGroup[g][i] = target(targets.get(i));
                }
            }
            loads.add(new GroupedLeaseLoad(l.getLease().toByteArray(), byGroup));
        }
        return new Grouped(groups, loads);
    }

    /** A present target's uint32 block id (0 included), or {@link GroupedLeaseLoad#ABSENT}. */
    private static int target(LoadBlockTarget t) {
        if (t.getTargetCase() != LoadBlockTarget.TargetCase.BLOCK_ID) {
            return GroupedLeaseLoad.ABSENT;
        }
        int id = t.getBlockId();
        if (id < 0) {
            throw EngineException.invalidArgument("block_id " + Integer.toUnsignedString(id)
                    + " exceeds the supported maximum of " + Integer.MAX_VALUE);
        }
        return id;
    }

    /**
     * The legacy ids: prost packs {@code repeated int32}, one blob per lease; unpacked varints (legal protobuf too)
     * arrive as unknown fields of the bytes-typed field and follow the packed ones.
     */
    private static int[] packedIds(LeaseLoadWire l) {
        List<Integer> ids = new ArrayList<>();
        try {
            for (ByteString blob : l.getBlockIdsList()) {
                CodedInputStream in = blob.newCodedInput();
                while (!in.isAtEnd()) {
                    ids.add(in.readInt32());
                }
            }
        } catch (IOException e) {
            throw EngineException.invalidArgument("LeaseLoad.block_ids is not a packed varint list: " + e.getMessage());
        }
        for (long v : l.getUnknownFields().getField(2).getVarintList()) {
            ids.add((int) v);
        }
        int[] out = new int[ids.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ids.get(i);
        }
        return out;
    }

    private static String utf8(ByteString entry) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(entry.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw EngineException.invalidArgument("LoadRequest.layer_names holds a name that is not valid UTF-8");
        }
    }

    private static <T> T parse(ByteString bytes, com.google.protobuf.Parser<T> parser, String what) {
        try {
            return parser.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            throw EngineException.invalidArgument("Load carries a malformed " + what + ": " + e.getMessage());
        }
    }
}
