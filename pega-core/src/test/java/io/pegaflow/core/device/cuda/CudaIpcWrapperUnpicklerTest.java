package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CudaIpcWrapperUnpicklerTest {

    static Stream<Arguments> realPickles() {
        return PickleResources.manifest().stream()
                .filter(e -> e.get("expect") != null)
                .map(e -> Arguments.of(e.get("name"), e));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("realPickles")
    @SuppressWarnings("unchecked")
    void decodesEveryPickleCapturedFromTorch(String name, Map<String, Object> entry) {
        Map<String, Object> x = (Map<String, Object>) entry.get("expect");
        CudaIpcWrapper w = CudaIpcWrapperUnpickler.decode(PickleResources.bytes((String) entry.get("file")));

        assertThat(w.handleFormat().name()).isEqualTo(x.get("handle_format"));
        assertThat(w.handleVersion()).isEqualTo(((Number) x.get("handle_version")).intValue());
        assertThat(HexFormat.of().formatHex(w.ipcHandle())).isEqualTo(x.get("ipc_handle_hex"));
        assertThat(w.ipcHandle()).hasSize(64);
        assertThat(w.storageSizeBytes()).isEqualTo(((Number) x.get("storage_size")).longValue());
        assertThat(w.storageOffsetBytes()).isEqualTo(((Number) x.get("storage_offset_bytes")).longValue());
        assertThat(w.producerDevice()).isEqualTo(((Number) x.get("producer_device")).intValue());
        assertThat(HexFormat.of().formatHex(w.refCounterName())).isEqualTo(x.get("ref_counter_name_hex"));
        assertThat(w.refCounterOffset()).isEqualTo(((Number) x.get("ref_counter_offset")).longValue());
        assertThat(HexFormat.of().formatHex(w.eventHandle())).isEqualTo(x.get("event_handle_hex"));
        assertThat(w.eventSyncRequired()).isEqualTo(x.get("event_sync_required"));
        assertThat(w.dtype().torchName()).isEqualTo(x.get("dtype"));
        assertThat(w.shape()).containsExactly(longs(x.get("shape")));
        if (x.get("stride") == null) {
            assertThat(w.stride()).isNull();
        } else {
            assertThat(w.stride()).containsExactly(longs(x.get("stride")));
        }
        assertThat(w.tensorStorageOffset()).isEqualTo(((Number) x.get("storage_offset")).longValue());
        assertThat(w.deviceUuid()).isEqualTo(x.get("device_uuid"));

        Map<String, Object> reg = (Map<String, Object>) x.get("registration");
        String layout = (String) x.get("layout");
        if (reg != null && w.stride() != null && !layout.startsWith("MLA")) {
            // What the connector registers is a function of the decoded shape, stride and dtype.
            long[] shape = w.shape();
            long[] stride = w.stride();
            int elem = w.dtype().elementSize();
            boolean kvFirst = shape.length >= 2 && shape[0] == 2;
            long n = kvFirst ? shape[1] : shape[0];
            long b = (kvFirst ? stride[1] : stride[0]) * elem;
            long k = kvFirst ? stride[0] * elem : 0;
            assertThat(n).isEqualTo(((Number) reg.get("N")).longValue());
            assertThat(b).isEqualTo(((Number) reg.get("B")).longValue());
            assertThat(k).isEqualTo(((Number) reg.get("K")).longValue());
            // and the registered range fits in the storage
            int g = ((Number) reg.get("G")).intValue();
            assertThat((n - 1) * b + (g - 1) * k + b).isLessThanOrEqualTo(w.storageSizeBytes());
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "kv_first_bf16",
                "blocks_first_fp16",
                "cross_layer_fp16",
                "mla_bf16",
                "kv_first_fp8",
                "blocks_first_fp32",
                "kv_first_padded_fp16",
                "shared_a",
                "shared_b",
                "legacy_raw64",
                "legacy_nostride"
            })
    void protocolsTwoToFiveDecodeToTheSameValue(String base) {
        CudaIpcWrapper p4 = CudaIpcWrapperUnpickler.decode(PickleResources.pickle(base + "_p4"));
        for (String p : List.of("_p2", "_p3", "_p5", "_default")) {
            assertThat(CudaIpcWrapperUnpickler.decode(PickleResources.pickle(base + p)))
                    .as(base + p)
                    .isEqualTo(p4);
        }
        assertThat(PickleResources.pickle(base + "_p2")[1]).isEqualTo((byte) 2);
        assertThat(PickleResources.pickle(base + "_p5")[1]).isEqualTo((byte) 5);
    }

    @Test
    void theCapturedProtocolFourPickleMatchesTheSpecExample() {
        byte[] p = PickleResources.pickle("kv_first_bf16_default");
        assertThat(p).hasSize(416); // the reference's pickle: a (2,6,16,8,128) bf16 tensor pickles to 416 bytes
        CudaIpcWrapper w = CudaIpcWrapperUnpickler.decode(p);
        assertThat(w.handleFormat()).isEqualTo(CudaIpcHandleFormat.VERSIONED);
        assertThat(w.handleVersion()).isEqualTo(2);
        assertThat(w.dtype()).isEqualTo(TorchDtype.BFLOAT16);
        assertThat(w.shape()).containsExactly(2, 6, 16, 8, 128);
        assertThat(w.stride()).containsExactly(98304, 16384, 1024, 128, 1);
        assertThat(w.storageSizeBytes()).isEqualTo(2L * 6 * 16 * 8 * 128 * 2);
        assertThat(w.deviceUuid()).matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    }

    @Test
    void layersCarvedFromOneAllocationShareTheHandleWithDifferentOffsets() {
        CudaIpcWrapper a = CudaIpcWrapperUnpickler.decode(PickleResources.pickle("shared_a_default"));
        CudaIpcWrapper b = CudaIpcWrapperUnpickler.decode(PickleResources.pickle("shared_b_default"));
        assertThat(a.ipcHandle()).isEqualTo(b.ipcHandle());
        assertThat(a.storageOffsetBytes()).isZero();
        assertThat(b.storageOffsetBytes()).isEqualTo(4L << 20);
        assertThat(a.storageSizeBytes()).isEqualTo(4L << 20);
    }

    @Test
    void theRawSixtyFourByteHandleOfOlderTorchIsAccepted() {
        CudaIpcWrapper raw = CudaIpcWrapperUnpickler.decode(PickleResources.pickle("legacy_raw64_default"));
        assertThat(raw.handleFormat()).isEqualTo(CudaIpcHandleFormat.RAW);
        assertThat(raw.handleVersion()).isZero();
        assertThat(raw.ipcHandle()).hasSize(64);
    }

    @Test
    void aWrapperWithoutStrideIsAcceptedAsContiguous() {
        CudaIpcWrapper w = CudaIpcWrapperUnpickler.decode(PickleResources.pickle("legacy_nostride_p4"));
        assertThat(w.stride()).isNull();
        assertThat(w.tensorStorageOffset()).isZero();
    }

    @Test
    void expandableSegmentsAreRejectedWithAdviceForTheOperator() {
        byte[] p = PickleResources.pickle("expandable_default");
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(p))
                .isInstanceOf(PickleRejectedException.class)
                .hasMessageContaining("expandable segments")
                .hasMessageContaining("expandable_segments:False");
    }

    @Test
    void anUnknownHandleVersionOrTypeIsRejected() {
        byte[] p = PickleResources.pickle("kv_first_bf16_p4");
        int at = indexOf(p, new byte[] {'C', 66, 2, 'c'}) + 2;
        assertThat(at).isGreaterThan(2);
        byte[] v3 = p.clone();
        v3[at] = 3;
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(v3)).hasMessageContaining("version 3");
        byte[] typeX = p.clone();
        typeX[at + 1] = 'x';
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(typeX)).hasMessageContaining("unrecognised IPC handle");
    }

    // ------------------------------------------------------------------ hostile input

    @ParameterizedTest
    @MethodSource("hostileNames")
    void hostilePicklesAreRejectedWithoutRunningAnything(String name) {
        byte[] p = PickleResources.hostile(name);
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(p)).isInstanceOf(PickleRejectedException.class);
    }

    static Stream<String> hostileNames() {
        return Arrays.stream(PickleResources.HOSTILE);
    }

    @Test
    void hostileRejectionsNameTheForbiddenGlobal() {
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(PickleResources.hostile("os_system_p4")))
                .hasMessageMatching("global (posix|os)\\.system is not allowed.*");
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(PickleResources.hostile("os_system_p2")))
                .hasMessageMatching("global (posix|os)\\.system is not allowed.*");
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(PickleResources.hostile("builtins_eval_p4")))
                .hasMessageStartingWith("global builtins.eval is not allowed");
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(PickleResources.hostile("builtins_eval_p2")))
                .hasMessageStartingWith("global __builtin__.eval is not allowed");
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(PickleResources.hostile("payload_in_dtype_p4")))
                .hasMessageMatching("global (posix|os)\\.system is not allowed.*");
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(PickleResources.hostile("torch_load_p4")))
                .hasMessageStartingWith("global torch.load is not allowed");
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(PickleResources.hostile("wrong_module_p4")))
                .hasMessageStartingWith("global pegaflow.ipc_wrapper_evil.CudaIPCWrapper is not allowed");
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(PickleResources.hostile("protocol0_os_system")))
                .hasMessageContaining("no PROTO opcode");
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(PickleResources.hostile("list_shape_p4")))
                .hasMessageContaining("EMPTY_LIST is not allowed");
    }

    @Test
    void everyTruncationOfARealPickleIsRejected() {
        for (String name : List.of("kv_first_bf16_p2", "kv_first_bf16_p3", "kv_first_bf16_p4", "kv_first_bf16_p5")) {
            byte[] p = PickleResources.pickle(name);
            for (int len = 0; len < p.length; len++) {
                byte[] prefix = Arrays.copyOf(p, len);
                assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(prefix))
                        .as(name + " cut at " + len)
                        .isInstanceOf(PickleRejectedException.class);
            }
        }
    }

    @Test
    void bytesAfterStopAreRejected() {
        byte[] p = PickleResources.pickle("kv_first_bf16_p4");
        byte[] longer = Arrays.copyOf(p, p.length + 1);
        longer[p.length] = '.';
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(longer)).hasMessageContaining("after STOP");
    }

    @Test
    void hugeDeclaredLengthsAreRejectedBeforeAnyAllocation() {
        // BINUNICODE8 claiming 2^62 bytes
        assertRejected(concat(proto(4), new byte[] {(byte) 0x8d}, le64(1L << 62), new byte[] {'.'}), "truncated");
        // BINBYTES claiming 4 GiB - 1
        assertRejected(concat(proto(4), new byte[] {'B'}, le32(0xFFFF_FFFFL), new byte[] {'.'}), "truncated");
        // BINBYTES8 with a negative (huge unsigned) length
        assertRejected(concat(proto(4), new byte[] {(byte) 0x8e}, le64(-1L), new byte[] {'.'}), "truncated");
        // FRAME larger than the input
        assertRejected(concat(proto(4), new byte[] {(byte) 0x95}, le64(Long.MAX_VALUE), new byte[] {'.'}), "frame");
        // SHORT_BINBYTES 255 with three bytes left
        assertRejected(concat(proto(4), new byte[] {'C', (byte) 255, 1, 2, 3}), "truncated");
        // a string longer than any wrapper field, but inside the input
        byte[] big = new byte[CudaIpcWrapperUnpickler.MAX_STRING_BYTES + 1];
        assertRejected(concat(proto(4), new byte[] {'B'}, le32(big.length), big, new byte[] {'.'}), "exceeds");
        // LONG1 of 200 bytes
        assertRejected(
                concat(proto(4), new byte[] {(byte) 0x8a, (byte) 200}, new byte[200], new byte[] {'.'}), "64 bits");
        // LONG4 (arbitrary-size ints) is not accepted at all
        assertRejected(concat(proto(4), new byte[] {(byte) 0x8b}, le32(1), new byte[] {1, '.'}), "LONG4");
        // memo index far out of range
        assertRejected(concat(proto(4), new byte[] {'N', 'r'}, le32(0x7FFF_FFFFL), new byte[] {'.'}), "memo index");
        assertRejected(concat(proto(4), new byte[] {'j'}, le32(5), new byte[] {'.'}), "never stored");
        // deep nesting
        byte[] marks = new byte[10_000];
        Arrays.fill(marks, (byte) '(');
        assertRejected(concat(proto(4), marks, new byte[] {'.'}), "MARK");
        byte[] nones = new byte[10_000];
        Arrays.fill(nones, (byte) 'N');
        assertRejected(concat(proto(4), nones, new byte[] {'.'}), "stack deeper");
        // a stream over the size limit
        assertRejected(new byte[CudaIpcWrapperUnpickler.MAX_PICKLE_BYTES + 1], "more than");
        assertRejected(new byte[0], "empty");
        assertRejected(null, "empty");
    }

    @Test
    void structuralMisuseIsRejected() {
        // NEWOBJ on torch.Size, REDUCE on the wrapper class, BUILD twice, unknown protocol
        byte[] size = concat(proto(4), str("torch"), str("Size"), new byte[] {(byte) 0x93, ')', (byte) 0x81, '.'});
        assertRejected(size, "NEWOBJ is only accepted");
        byte[] reduceClass = concat(
                proto(4), str("pegaflow.ipc_wrapper"), str("CudaIPCWrapper"), new byte[] {(byte) 0x93, ')', 'R', '.'});
        assertRejected(reduceClass, "REDUCE is only accepted");
        byte[] twice = concat(proto(4), str("pegaflow.ipc_wrapper"), str("CudaIPCWrapper"), new byte[] {
            (byte) 0x93, ')', (byte) 0x81, '}', 'b', '}', 'b', '.'
        });
        assertRejected(twice, "twice");
        assertRejected(new byte[] {(byte) 0x80, 6, 'N', '.'}, "protocol 6");
        assertRejected(new byte[] {(byte) 0x80, 1, 'N', '.'}, "protocol 1");
        // a wrapper without a handle
        byte[] empty = concat(proto(4), str("pegaflow.ipc_wrapper"), str("CudaIPCWrapper"), new byte[] {
            (byte) 0x93, ')', (byte) 0x81, '}', 'b', '.'
        });
        assertRejected(empty, "handle must be");
        // only a plain value
        assertRejected(new byte[] {(byte) 0x80, 4, 'N', '.'}, "does not hold");
    }

    @Test
    void randomCorruptionNeverEscapesAsAnotherException() {
        Random r = new Random(20261130L);
        List<String> seeds = List.of(
                "kv_first_bf16_p2",
                "kv_first_bf16_p3",
                "kv_first_bf16_p4",
                "kv_first_bf16_p5",
                "mla_bf16_p2",
                "legacy_nostride_p4",
                "expandable_default");
        int accepted = 0;
        for (int i = 0; i < 30_000; i++) {
            byte[] p = PickleResources.pickle(seeds.get(i % seeds.size())).clone();
            int flips = 1 + r.nextInt(3);
            for (int f = 0; f < flips; f++) {
                int at = r.nextInt(p.length);
                p[at] = r.nextInt(4) == 0 ? (byte) r.nextInt(256) : (byte) (p[at] ^ (1 << r.nextInt(8)));
            }
            try {
                CudaIpcWrapper w = CudaIpcWrapperUnpickler.decode(p);
                assertThat(w.ipcHandle()).hasSize(64);
                accepted++;
            } catch (PickleRejectedException expected) {
                // the only acceptable failure
            }
        }
        assertThat(accepted).isLessThan(30_000);
    }

    @Test
    void uuidsAreNormalisedToTorchSpelling() {
        assertThat(CudaIpcWrapperUnpickler.normaliseUuid("GPU-7900793A-26D2-8FC4-D520-E62EDFD0EEC6"))
                .isEqualTo("7900793a-26d2-8fc4-d520-e62edfd0eec6");
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.normaliseUuid("../../etc/passwd"))
                .isInstanceOf(PickleRejectedException.class);
    }

    @Test
    void picklesAreToldApartFromHostDescriptors() {
        assertThat(CudaIpcWrapperUnpickler.looksLikePickle(PickleResources.pickle("kv_first_bf16_p4")))
                .isTrue();
        assertThat(CudaIpcWrapperUnpickler.looksLikePickle(
                        "{\"kind\":\"host-shm\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isFalse();
        assertThat(CudaIpcWrapperUnpickler.looksLikePickle(new byte[0])).isFalse();
    }

    @Test
    void dtypesKnowTheirElementSizes() {
        assertThat(TorchDtype.byTorchName("bfloat16").elementSize()).isEqualTo(2);
        assertThat(TorchDtype.byTorchName("float8_e4m3fn").elementSize()).isEqualTo(1);
        assertThat(TorchDtype.byTorchName("half")).isEqualTo(TorchDtype.FLOAT16);
        assertThat(TorchDtype.byTorchName("load")).isNull();
    }

    // ------------------------------------------------------------------ helpers

    private static void assertRejected(byte[] p, String messagePart) {
        assertThatThrownBy(() -> CudaIpcWrapperUnpickler.decode(p))
                .isInstanceOf(PickleRejectedException.class)
                .hasMessageContaining(messagePart);
    }

    private static long[] longs(Object list) {
        return ((List<?>) list)
                .stream().mapToLong(o -> ((Number) o).longValue()).toArray();
    }

    private static byte[] proto(int v) {
        return new byte[] {(byte) 0x80, (byte) v};
    }

    private static byte[] str(String s) {
        byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return concat(new byte[] {(byte) 0x8c, (byte) b.length}, b);
    }

    private static byte[] le32(long v) {
        return ByteBuffer.allocate(4)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putInt((int) v)
                .array();
    }

    private static byte[] le64(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i <= hay.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
