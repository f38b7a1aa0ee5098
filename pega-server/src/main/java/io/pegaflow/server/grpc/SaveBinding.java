package io.pegaflow.server.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.pegaflow.core.engine.LayerSave;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SaveResponse;
import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.Reference;
import java.lang.ref.WeakReference;

/**
 * Binds {@code pegaflow.Engine/Save} to a handler of {@link SaveCall}: the request's bytes are decoded by
 * {@link SaveWire} into the engine's arrays instead of the generated {@code SaveRequest}, which builds an object per
 * hash (36,864 of them for a 36-layer Save of 1024 blocks). The wire is unchanged.
 */
final class SaveBinding {
    /** Requests up to this size are read into a per-thread buffer (the gRPC default inbound limit). */
    private static final int REUSED_BUFFER_BYTES = 4 << 20;

    /** The per-thread buffer, weakly held as grpc-java's own protobuf marshaller holds its one. */
    private static final ThreadLocal<Reference<byte[]>> BUFFER = new ThreadLocal<>();

    private SaveBinding() {}

    static ServerServiceDefinition rebind(
            ServerServiceDefinition generated, ServerCalls.UnaryMethod<SaveCall, SaveResponse> save) {
        MethodDescriptor<SaveCall, SaveResponse> saveMethod = EngineGrpc.getSaveMethod().toBuilder(
                        new Marshaller(), ProtoUtils.marshaller(SaveResponse.getDefaultInstance()))
                .build();
        return RequestBinding.rebind(generated, saveMethod, save);
    }

    /** Parses a request; malformed bytes give a {@link SaveCall#malformed} call instead of an exception. */
    static SaveCall parse(InputStream stream) {
        try {
            if (!(stream instanceof KnownLength)) {
                byte[] all = stream.readAllBytes();
                return SaveWire.decode(all, 0, all.length);
            }
            int size = stream.available();
            byte[] buf = buffer(size);
            int read = stream.readNBytes(buf, 0, size);
            if (read == size && stream.available() == 0) { // the known length was the whole message, as it is
                return SaveWire.decode(buf, 0, read);
            }
            byte[] rest = stream.readAllBytes();
            byte[] all = new byte[read + rest.length];
            System.arraycopy(buf, 0, all, 0, read);
            System.arraycopy(rest, 0, all, read, rest.length);
            return SaveWire.decode(all, 0, all.length);
        } catch (InvalidProtocolBufferException e) {
            return SaveCall.malformed("SaveRequest is not valid protobuf: " + e.getMessage());
        } catch (IOException e) {
            throw Status.INTERNAL
                    .withDescription("reading the SaveRequest failed")
                    .withCause(e)
                    .asRuntimeException();
        }
    }

    private static byte[] buffer(int size) {
        if (size > REUSED_BUFFER_BYTES) {
            return new byte[size];
        }
        Reference<byte[]> ref = BUFFER.get();
        byte[] buf = ref == null ? null : ref.get();
        if (buf == null || buf.length < size) {
            buf = new byte[Math.max(size, 64 << 10)];
            BUFFER.set(new WeakReference<>(buf));
        }
        return buf;
    }

    /** The generated message's bytes (a client or an in-process test may stream a call). */
    static SaveRequest toRequest(SaveCall call) {
        SaveRequest.Builder b = SaveRequest.newBuilder()
                .setInstanceId(call.instanceId())
                .setTpRank(call.tpRank())
                .setDeviceId(call.deviceId())
                .setPpRank(call.ppRank());
        for (LayerSave layer : call.layers()) {
            SaveLayer.Builder l = SaveLayer.newBuilder().setLayerName(layer.layerName());
            for (int id : layer.blockIds()) {
                l.addBlockIds(id);
            }
            for (byte[] hash : layer.blockHashes()) {
                l.addBlockHashes(ByteString.copyFrom(hash));
            }
            b.addSaves(l);
        }
        return b.build();
    }

    private static final class Marshaller implements MethodDescriptor.Marshaller<SaveCall> {
        @Override
        public InputStream stream(SaveCall value) {
            return toRequest(value).toByteString().newInput();
        }

        @Override
        public SaveCall parse(InputStream stream) {
            return SaveBinding.parse(stream);
        }
    }
}
