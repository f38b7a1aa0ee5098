package io.pegaflow.proto.ext;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.pegaflow.proto.QueryBlocksForTransferRequest;
import io.pegaflow.proto.QueryBlocksForTransferResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * The block checksums of {@code QueryBlocksForTransfer} (documented in {@code pegaflow/ext/transfer_ext.proto}): a
 * requester asks for them with field {@value #FIELD} of its request, and the owner answers with one CRC32C per block in
 * field {@value #FIELD} of its response. Both travel as fields the reference's messages do not declare, so the
 * reference on either side ignores them.
 */
public final class TransferChecksums {
    /** The field number on both messages; far above what upstream numbers its fields. */
    public static final int FIELD = 1000;

    private static final int[] NONE = new int[0];

    private TransferChecksums() {}

    /** {@code request} asking the owner for checksums. */
    public static QueryBlocksForTransferRequest.Builder ask(QueryBlocksForTransferRequest.Builder request) {
        return request.setUnknownFields(UnknownFieldSet.newBuilder(request.getUnknownFields())
                .addField(FIELD, UnknownFieldSet.Field.newBuilder().addVarint(1).build())
                .build());
    }

    /** Whether the requester asked for checksums. */
    public static boolean asked(QueryBlocksForTransferRequest request) {
        List<Long> values = request.getUnknownFields().getField(FIELD).getVarintList();
        return !values.isEmpty() && values.get(values.size() - 1) == 1L;
    }

    /** Adds one checksum per block, in block order. */
    public static QueryBlocksForTransferResponse.Builder attach(
            QueryBlocksForTransferResponse.Builder response, int[] blockCrc32c) {
        ByteBuffer bytes = ByteBuffer.allocate(4 * blockCrc32c.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int crc : blockCrc32c) {
            bytes.putInt(crc);
        }
        bytes.flip();
        return response.setUnknownFields(UnknownFieldSet.newBuilder(response.getUnknownFields())
                .addField(
                        FIELD,
                        UnknownFieldSet.Field.newBuilder()
                                .addLengthDelimited(ByteString.copyFrom(bytes))
                                .build())
                .build());
    }

    /**
     * The owner's checksums, one per block; empty when it sent none (a reference owner, or one that does not compute
     * them) or sent a count that does not match the blocks (then none of them can be trusted to line up).
     */
    public static int[] read(QueryBlocksForTransferResponse response) {
        List<ByteString> values = response.getUnknownFields().getField(FIELD).getLengthDelimitedList();
        if (values.size() != 1 || values.get(0).size() != 4 * response.getBlocksCount()) {
            return NONE;
        }
        ByteBuffer bytes = values.get(0).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        int[] out = new int[response.getBlocksCount()];
        for (int i = 0; i < out.length; i++) {
            out[i] = bytes.getInt();
        }
        return out;
    }
}
