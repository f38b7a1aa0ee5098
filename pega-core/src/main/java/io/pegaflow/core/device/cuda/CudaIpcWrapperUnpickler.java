package io.pegaflow.core.device.cuda;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A restricted unpickler for {@code pickle.dumps(pegaflow.ipc_wrapper.CudaIPCWrapper(t))}, protocols 2 to 5. It is a
 * data decoder, not a Python emulator: it recognises a fixed set of opcodes and globals, builds plain Java values and
 * never calls anything. See docs/decisions/0003-restricted-unpickler.md.
 *
 * <pre>
 *   stream     = PROTO(2..5) body STOP                      (nothing may follow STOP)
 *   opcodes    PROTO FRAME STOP MARK
 *              GLOBAL STACK_GLOBAL NEWOBJ REDUCE BUILD        (only on the globals below)
 *              EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3 EMPTY_DICT SETITEM SETITEMS
 *              BININT1 BININT2 BININT LONG1(<= 8 bytes) NEWTRUE NEWFALSE NONE
 *              SHORT_BINUNICODE BINUNICODE BINUNICODE8 SHORT_BINBYTES BINBYTES BINBYTES8
 *              MEMOIZE BINPUT LONG_BINPUT BINGET LONG_BINGET
 *   globals    pegaflow.ipc_wrapper.CudaIPCWrapper    NEWOBJ with () -> an instance; BUILD with a str-keyed dict
 *              torch.Size                             REDUCE with ((int, ...),) -> a shape
 *              torch.&lt;dtype&gt;                          a TorchDtype value
 *              _codecs.encode                         REDUCE with (str, 'latin1') -> bytes   (protocol 2 only:
 *              __builtin__.bytes / builtins.bytes     REDUCE with ()          -> b''      how bytes are pickled)
 * </pre>
 *
 * Anything else (another global such as {@code os.system} or {@code builtins.eval}, PERSID, NEWOBJ_EX, INST/OBJ,
 * lists, sets, out-of-band buffers, a second BUILD) is rejected with a {@link PickleRejectedException}. Sizes are
 * bounded: the whole stream ({@link #MAX_PICKLE_BYTES}), each string or bytes value, the stack, the memo and tuple
 * lengths; a declared length past the end of the input is "truncated", never an allocation.
 *
 * <p>Thread-safe: {@link #decode} keeps all state on its own stack frame.
 */
public final class CudaIpcWrapperUnpickler {
    /** Largest accepted payload. A real wrapper is about 420 bytes (protocol 4) or 700 (protocol 2). */
    public static final int MAX_PICKLE_BYTES = 64 * 1024;

    static final int MAX_STRING_BYTES = 4096;
    static final int MAX_STACK = 256;
    static final int MAX_MEMO = 256;
    static final int MAX_TUPLE = 64;

    static final String WRAPPER_MODULE = "pegaflow.ipc_wrapper";
    static final String WRAPPER_CLASS = "CudaIPCWrapper";

    private static final Pattern UUID =
            Pattern.compile("^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$");

    // Opcodes (CPython Lib/pickle.py).
    private static final int MARK = '(';
    private static final int STOP = '.';
    private static final int BININT = 'J';
    private static final int BININT1 = 'K';
    private static final int BININT2 = 'M';
    private static final int NONE = 'N';
    private static final int REDUCE = 'R';
    private static final int BINUNICODE = 'X';
    private static final int EMPTY_DICT = '}';
    private static final int BUILD = 'b';
    private static final int GLOBAL = 'c';
    private static final int BINGET = 'h';
    private static final int LONG_BINGET = 'j';
    private static final int BINPUT = 'q';
    private static final int LONG_BINPUT = 'r';
    private static final int SETITEM = 's';
    private static final int TUPLE = 't';
    private static final int SETITEMS = 'u';
    private static final int EMPTY_TUPLE = ')';
    private static final int BINBYTES = 'B';
    private static final int SHORT_BINBYTES = 'C';
    private static final int PROTO = 0x80;
    private static final int NEWOBJ = 0x81;
    private static final int TUPLE1 = 0x85;
    private static final int TUPLE2 = 0x86;
    private static final int TUPLE3 = 0x87;
    private static final int NEWTRUE = 0x88;
    private static final int NEWFALSE = 0x89;
    private static final int LONG1 = 0x8a;
    private static final int SHORT_BINUNICODE = 0x8c;
    private static final int BINUNICODE8 = 0x8d;
    private static final int BINBYTES8 = 0x8e;
    private static final int STACK_GLOBAL = 0x93;
    private static final int MEMOIZE = 0x94;
    private static final int FRAME = 0x95;

    private CudaIpcWrapperUnpickler() {}

    /** True when {@code bytes} starts like a pickle of protocol 2 or later ({@code PROTO n}). */
    public static boolean looksLikePickle(byte[] bytes) {
        return bytes != null && bytes.length >= 2 && (bytes[0] & 0xFF) == PROTO;
    }

    /**
     * Decodes a pickled {@code CudaIPCWrapper}.
     *
     * @throws PickleRejectedException for anything that is not exactly such a pickle
     */
    public static CudaIpcWrapper decode(byte[] pickle) {
        if (pickle == null || pickle.length == 0) {
            throw new PickleRejectedException("empty wrapper_bytes", -1);
        }
        if (pickle.length > MAX_PICKLE_BYTES) {
            throw new PickleRejectedException(
                    "wrapper_bytes is " + pickle.length + " bytes, more than the " + MAX_PICKLE_BYTES + " accepted",
                    -1);
        }
        Object top = new Machine(pickle).run();
        return extract(top);
    }

    // ------------------------------------------------------------------ value model

    /** Python's None. */
    private enum PyNone {
        NONE
    }

    /** An accepted global that is only meaningful as a callable or a class. */
    private enum Callable {
        WRAPPER_CLASS,
        TORCH_SIZE,
        CODECS_ENCODE,
        BYTES
    }

    /** An immutable Python tuple. */
    private record Tuple(List<Object> items) {}

    /** A {@code torch.Size}. */
    private record TorchSize(long[] dims) {}

    /** Python bytes (a wrapper so that it is distinguishable from other arrays). */
    private record Bytes(byte[] value) {}

    /** A Python dict with str keys, insertion-ordered. */
    private static final class Dict {
        final Map<String, Object> items = new LinkedHashMap<>();
    }

    /** The object NEWOBJ made; BUILD fills its state once. */
    private static final class WrapperInstance {
        @Nullable
        Map<String, Object> state;
    }

    // ------------------------------------------------------------------ the machine

    private static final class Machine {
        private final byte[] in;
        private int pos;
        private int opStart;
        private final ArrayList<Object> stack = new ArrayList<>();
        private final ArrayList<Integer> marks = new ArrayList<>();
        private final ArrayList<Object> memo = new ArrayList<>();

        Machine(byte[] in) {
            this.in = in;
        }

        Object run() {
            if (in.length < 2 || u8() != PROTO) {
                throw reject("not a pickle of protocol 2 or later (no PROTO opcode)");
            }
            int proto = u8();
            if (proto < 2 || proto > 5) {
                throw reject("pickle protocol " + proto + " is not accepted (2 to 5 are)");
            }
            while (true) {
                if (pos >= in.length) {
                    throw reject("truncated stream: no STOP opcode");
                }
                opStart = pos;
                int op = u8();
                switch (op) {
                    case STOP -> {
                        if (pos != in.length) {
                            throw reject((in.length - pos) + " bytes after STOP");
                        }
                        if (stack.size() != 1 || !marks.isEmpty()) {
                            throw reject("stack holds " + stack.size() + " values at STOP, expected 1");
                        }
                        return stack.get(0);
                    }
                    case FRAME -> {
                        long len = u64();
                        if (len < 0 || len > in.length - pos) {
                            throw reject("frame length " + Long.toUnsignedString(len) + " exceeds the input");
                        }
                    }
                    case PROTO -> throw reject("a second PROTO opcode");
                    case MARK -> {
                        if (marks.size() >= MAX_STACK) {
                            throw reject("too many MARKs");
                        }
                        marks.add(stack.size());
                    }
                    case GLOBAL -> push(global(line(), line()));
                    case STACK_GLOBAL -> {
                        Object name = pop();
                        Object module = pop();
                        if (!(module instanceof String m) || !(name instanceof String n)) {
                            throw reject("STACK_GLOBAL needs two str operands");
                        }
                        push(global(m, n));
                    }
                    case EMPTY_TUPLE -> push(new Tuple(List.of()));
                    case TUPLE1 -> push(tupleOf(1));
                    case TUPLE2 -> push(tupleOf(2));
                    case TUPLE3 -> push(tupleOf(3));
                    case TUPLE -> {
                        List<Object> items = popToMark();
                        if (items.size() > MAX_TUPLE) {
                            throw reject("tuple of " + items.size() + " items");
                        }
                        push(new Tuple(Collections.unmodifiableList(items)));
                    }
                    case EMPTY_DICT -> push(new Dict());
                    case SETITEM -> {
                        Object value = pop();
                        Object key = pop();
                        setItem(peek(), key, value);
                    }
                    case SETITEMS -> {
                        List<Object> items = popToMark();
                        if (items.size() % 2 != 0) {
                            throw reject("SETITEMS with an odd number of items");
                        }
                        Object dict = peek();
                        for (int i = 0; i < items.size(); i += 2) {
                            setItem(dict, items.get(i), items.get(i + 1));
                        }
                    }
                    case NEWOBJ -> {
                        Object args = pop();
                        Object cls = pop();
                        if (cls != Callable.WRAPPER_CLASS) {
                            throw reject("NEWOBJ is only accepted for " + WRAPPER_MODULE + "." + WRAPPER_CLASS);
                        }
                        if (!(args instanceof Tuple t) || !t.items().isEmpty()) {
                            throw reject("NEWOBJ of " + WRAPPER_CLASS + " with arguments");
                        }
                        push(new WrapperInstance());
                    }
                    case REDUCE -> {
                        Object args = pop();
                        Object fn = pop();
                        push(reduce(fn, args));
                    }
                    case BUILD -> {
                        Object state = pop();
                        Object target = peek();
                        if (!(target instanceof WrapperInstance w)) {
                            throw reject("BUILD is only accepted on a " + WRAPPER_CLASS);
                        }
                        if (w.state != null) {
                            throw reject("BUILD applied twice");
                        }
                        if (!(state instanceof Dict d)) {
                            throw reject("BUILD state must be a dict");
                        }
                        w.state = d.items;
                    }
                    case BININT1 -> push((long) u8());
                    case BININT2 -> push((long) (u8() | (u8() << 8)));
                    case BININT -> push((long) s32());
                    case LONG1 -> push(long1());
                    case NEWTRUE -> push(true);
                    case NEWFALSE -> push(false);
                    case NONE -> push(PyNone.NONE);
                    case SHORT_BINUNICODE -> push(utf8(u8()));
                    case BINUNICODE -> push(utf8(u32()));
                    case BINUNICODE8 -> push(utf8(u64()));
                    case SHORT_BINBYTES -> push(new Bytes(raw(u8())));
                    case BINBYTES -> push(new Bytes(raw(u32())));
                    case BINBYTES8 -> push(new Bytes(raw(u64())));
                    case MEMOIZE -> memoPut(memo.size());
                    case BINPUT -> memoPut(u8());
                    case LONG_BINPUT -> memoPut(u32());
                    case BINGET -> push(memoGet(u8()));
                    case LONG_BINGET -> push(memoGet(u32()));
                    default -> throw reject(opcodeName(op) + " is not allowed in a CudaIPCWrapper pickle");
                }
            }
        }

        // ---- globals and calls

        private Object global(String module, String name) {
            if (module.equals(WRAPPER_MODULE) && name.equals(WRAPPER_CLASS)) {
                return Callable.WRAPPER_CLASS;
            }
            if (module.equals("torch")) {
                if (name.equals("Size")) {
                    return Callable.TORCH_SIZE;
                }
                TorchDtype dtype = TorchDtype.byTorchName(name);
                if (dtype != null) {
                    return dtype;
                }
            }
            if (module.equals("_codecs") && name.equals("encode")) {
                return Callable.CODECS_ENCODE;
            }
            if ((module.equals("__builtin__") || module.equals("builtins")) && name.equals("bytes")) {
                return Callable.BYTES;
            }
            throw reject("global " + printable(module) + "." + printable(name) + " is not allowed");
        }

        private Object reduce(Object fn, Object args) {
            if (!(args instanceof Tuple t)) {
                throw reject("REDUCE arguments must be a tuple");
            }
            List<Object> a = t.items();
            if (fn == Callable.TORCH_SIZE) {
                if (a.size() != 1 || !(a.get(0) instanceof Tuple dims)) {
                    throw reject("torch.Size expects one tuple of ints");
                }
                long[] out = new long[dims.items().size()];
                for (int i = 0; i < out.length; i++) {
                    if (!(dims.items().get(i) instanceof Long v) || v < 0) {
                        throw reject("torch.Size dimension " + i + " is not a non-negative int");
                    }
                    out[i] = v;
                }
                return new TorchSize(out);
            }
            if (fn == Callable.CODECS_ENCODE) {
                if (a.size() != 2
                        || !(a.get(0) instanceof String s)
                        || !("latin1".equals(a.get(1)) || "latin-1".equals(a.get(1)))) {
                    throw reject("_codecs.encode is only accepted as encode(str, 'latin1')");
                }
                byte[] out = new byte[s.length()];
                for (int i = 0; i < out.length; i++) {
                    char c = s.charAt(i);
                    if (c > 0xFF) {
                        throw reject("_codecs.encode: character outside latin-1");
                    }
                    out[i] = (byte) c;
                }
                return new Bytes(out);
            }
            if (fn == Callable.BYTES) {
                if (!a.isEmpty()) {
                    throw reject("bytes() is only accepted without arguments");
                }
                return new Bytes(new byte[0]);
            }
            throw reject("REDUCE is only accepted on torch.Size, _codecs.encode and bytes");
        }

        private void setItem(Object dict, Object key, Object value) {
            if (!(dict instanceof Dict d)) {
                throw reject("SETITEM(S) target is not a dict");
            }
            if (!(key instanceof String k)) {
                throw reject("dict keys must be str");
            }
            if (d.items.size() >= MAX_TUPLE && !d.items.containsKey(k)) {
                throw reject("dict of more than " + MAX_TUPLE + " items");
            }
            d.items.put(k, value);
        }

        // ---- stack and memo

        private void push(Object o) {
            if (stack.size() >= MAX_STACK) {
                throw reject("stack deeper than " + MAX_STACK);
            }
            stack.add(o);
        }

        private Object pop() {
            int floor = marks.isEmpty() ? 0 : marks.get(marks.size() - 1);
            if (stack.size() <= floor) {
                throw reject("stack underflow");
            }
            return stack.remove(stack.size() - 1);
        }

        private Object peek() {
            if (stack.isEmpty()) {
                throw reject("stack underflow");
            }
            return stack.get(stack.size() - 1);
        }

        private Tuple tupleOf(int n) {
            Object[] items = new Object[n];
            for (int i = n - 1; i >= 0; i--) {
                items[i] = pop();
            }
            return new Tuple(List.of(items));
        }

        private List<Object> popToMark() {
            if (marks.isEmpty()) {
                throw reject("no MARK on the stack");
            }
            int mark = marks.remove(marks.size() - 1);
            List<Object> items = new ArrayList<>(stack.subList(mark, stack.size()));
            stack.subList(mark, stack.size()).clear();
            return items;
        }

        private void memoPut(long index) {
            if (index < 0 || index >= MAX_MEMO) {
                throw reject("memo index " + index + " out of range");
            }
            Object v = peek();
            int i = (int) index;
            while (memo.size() <= i) {
                memo.add(null);
            }
            memo.set(i, v);
        }

        private Object memoGet(long index) {
            if (index < 0 || index >= memo.size() || memo.get((int) index) == null) {
                throw reject("memo index " + index + " was never stored");
            }
            return memo.get((int) index);
        }

        // ---- readers (every length is checked against what is left before anything is allocated)

        private int u8() {
            if (pos >= in.length) {
                throw reject("truncated stream");
            }
            return in[pos++] & 0xFF;
        }

        private int s32() {
            need(4);
            int v = (in[pos] & 0xFF)
                    | (in[pos + 1] & 0xFF) << 8
                    | (in[pos + 2] & 0xFF) << 16
                    | (in[pos + 3] & 0xFF) << 24;
            pos += 4;
            return v;
        }

        private long u32() {
            return s32() & 0xFFFF_FFFFL;
        }

        private long u64() {
            need(8);
            long v = 0;
            for (int i = 7; i >= 0; i--) {
                v = (v << 8) | (in[pos + i] & 0xFF);
            }
            pos += 8;
            return v;
        }

        private long long1() {
            int n = u8();
            if (n > 8) {
                throw reject("LONG1 of " + n + " bytes exceeds 64 bits");
            }
            need(n);
            if (n == 0) {
                return 0L;
            }
            long v = 0;
            for (int i = n - 1; i >= 0; i--) {
                v = (v << 8) | (in[pos + i] & 0xFF);
            }
            if (n < 8 && (in[pos + n - 1] & 0x80) != 0) {
                v |= -1L << (8 * n); // sign-extend
            }
            pos += n;
            return v;
        }

        private void need(long n) {
            if (n < 0 || n > in.length - pos) {
                throw reject("truncated stream: " + Long.toUnsignedString(n) + " bytes declared, " + (in.length - pos)
                        + " left");
            }
        }

        private byte[] raw(long len) {
            need(len);
            if (len > MAX_STRING_BYTES) {
                throw reject("a value of " + len + " bytes exceeds " + MAX_STRING_BYTES);
            }
            byte[] out = Arrays.copyOfRange(in, pos, pos + (int) len);
            pos += (int) len;
            return out;
        }

        private String utf8(long len) {
            byte[] b = raw(len);
            try {
                return StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(java.nio.ByteBuffer.wrap(b))
                        .toString();
            } catch (CharacterCodingException e) {
                throw reject("invalid UTF-8 in a str");
            }
        }

        /** A newline-terminated ASCII line (GLOBAL's operands). */
        private String line() {
            int start = pos;
            int limit = Math.min(in.length, pos + 256);
            for (int i = pos; i < limit; i++) {
                if (in[i] == '\n') {
                    pos = i + 1;
                    for (int j = start; j < i; j++) {
                        if (in[j] < 0x20 || in[j] > 0x7E) {
                            throw reject("non-ASCII GLOBAL operand");
                        }
                    }
                    return new String(in, start, i - start, StandardCharsets.US_ASCII);
                }
            }
            throw reject("truncated or over-long GLOBAL operand");
        }

        private PickleRejectedException reject(String reason) {
            return new PickleRejectedException(reason, opStart);
        }
    }

    // ------------------------------------------------------------------ extraction

    private static CudaIpcWrapper extract(Object top) {
        if (!(top instanceof WrapperInstance w) || w.state == null) {
            throw content("the pickle does not hold a " + WRAPPER_MODULE + "." + WRAPPER_CLASS + " instance");
        }
        Map<String, Object> s = w.state;
        Object handleObj = s.get("handle");
        if (!(handleObj instanceof Tuple ht) || ht.items().size() != 8) {
            throw content("handle must be the 8-tuple of torch's _share_cuda_()");
        }
        List<Object> h = ht.items();
        long producerDevice = integer(h.get(0), "handle[0] (device)");
        byte[] rawHandle = bytes(h.get(1), "handle[1] (IPC handle)");
        long size = integer(h.get(2), "handle[2] (storage size)");
        long offset = integer(h.get(3), "handle[3] (storage offset)");
        byte[] refCounter = bytes(h.get(4), "handle[4] (ref-counter name)");
        long refCounterOffset = integer(h.get(5), "handle[5] (ref-counter offset)");
        byte[] eventHandle = bytes(h.get(6), "handle[6] (event handle)");
        if (!(h.get(7) instanceof Boolean eventSync)) {
            throw content("handle[7] (event_sync_required) must be a bool");
        }
        if (size < 0 || offset < 0) {
            throw content("negative storage size or offset");
        }

        CudaIpcHandleFormat format;
        int version;
        byte[] ipc;
        if (rawHandle.length == 64) {
            format = CudaIpcHandleFormat.RAW;
            version = 0;
            ipc = rawHandle;
        } else if (rawHandle.length >= 2 && rawHandle[1] == 'e') {
            throw content("the tensor was allocated with PyTorch expandable segments (IPC handle type 'e'), which"
                    + " this server cannot open; start the vLLM workers with"
                    + " PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False (or remove expandable_segments from it)");
        } else if (rawHandle.length == 66 && rawHandle[1] == 'c') {
            version = rawHandle[0] & 0xFF;
            if (version != 1 && version != 2) {
                throw content("unknown torch IPC handle version " + version + " (1 and 2 are known)");
            }
            format = CudaIpcHandleFormat.VERSIONED;
            ipc = Arrays.copyOfRange(rawHandle, 2, 66);
        } else {
            throw content("unrecognised IPC handle of " + rawHandle.length + " bytes (expected 64, or 66 of type 'c')");
        }

        if (!(s.get("dtype") instanceof TorchDtype dtype)) {
            throw content("dtype must be a torch dtype");
        }
        long[] shape;
        Object shapeObj = s.get("shape");
        if (shapeObj instanceof TorchSize ts) {
            shape = ts.dims();
        } else if (shapeObj instanceof Tuple st) {
            shape = ints(st, "shape");
        } else {
            throw content("shape must be a torch.Size");
        }
        long @Nullable [] stride = null;
        Object strideObj = s.get("stride");
        if (strideObj instanceof Tuple st) {
            stride = ints(st, "stride");
            if (stride.length != shape.length) {
                throw content("stride has " + stride.length + " dimensions, shape " + shape.length);
            }
        } else if (strideObj != null && strideObj != PyNone.NONE) {
            throw content("stride must be a tuple of ints");
        }
        long storageOffset = 0;
        Object so = s.get("storage_offset");
        if (so != null) {
            storageOffset = integer(so, "storage_offset");
            if (storageOffset < 0) {
                throw content("negative storage_offset");
            }
        }
        if (!(s.get("device_uuid") instanceof String uuidRaw)) {
            throw content("device_uuid must be a str");
        }
        String uuid = normaliseUuid(uuidRaw);
        if (producerDevice < 0 || producerDevice > Integer.MAX_VALUE) {
            throw content("handle[0] (device) out of range");
        }
        return new CudaIpcWrapper(
                (int) producerDevice,
                format,
                version,
                ipc,
                size,
                offset,
                refCounter,
                refCounterOffset,
                eventHandle,
                eventSync,
                dtype,
                shape,
                stride,
                storageOffset,
                uuid);
    }

    /** Lowercase 8-4-4-4-12 hex, with nvidia-smi's {@code GPU-} prefix removed if a producer added it. */
    static String normaliseUuid(String raw) {
        String u = raw.startsWith("GPU-") ? raw.substring(4) : raw;
        u = u.toLowerCase(java.util.Locale.ROOT);
        if (!UUID.matcher(u).matches()) {
            throw content("device_uuid '" + printable(raw) + "' is not a GPU UUID");
        }
        return u;
    }

    private static long integer(Object o, String what) {
        if (o instanceof Long v) {
            return v;
        }
        if (o instanceof Boolean) {
            throw content(what + " must be an int, got a bool");
        }
        throw content(what + " must be an int");
    }

    private static byte[] bytes(Object o, String what) {
        if (o instanceof Bytes b) {
            return b.value();
        }
        throw content(what + " must be bytes");
    }

    private static long[] ints(Tuple t, String what) {
        long[] out = new long[t.items().size()];
        for (int i = 0; i < out.length; i++) {
            Object o = t.items().get(i);
            if (!(o instanceof Long v) || v < 0) {
                throw content(what + "[" + i + "] is not a non-negative int");
            }
            out[i] = v;
        }
        return out;
    }

    private static PickleRejectedException content(String reason) {
        return new PickleRejectedException(reason, -1);
    }

    private static String printable(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length() && i < 80; i++) {
            char c = s.charAt(i);
            sb.append(c >= 0x20 && c < 0x7F ? c : '?');
        }
        return sb.toString();
    }

    private static String opcodeName(int op) {
        String name = switch (op) {
            case 'P' -> "PERSID";
            case 'Q' -> "BINPERSID";
            case 'i' -> "INST";
            case 'o' -> "OBJ";
            case 0x92 -> "NEWOBJ_EX";
            case ']' -> "EMPTY_LIST";
            case 'l' -> "LIST";
            case 'a' -> "APPEND";
            case 'e' -> "APPENDS";
            case 0x8f -> "EMPTY_SET";
            case 0x90 -> "ADDITEMS";
            case 0x91 -> "FROZENSET";
            case 0x96 -> "BYTEARRAY8";
            case 0x97 -> "NEXT_BUFFER";
            case 0x98 -> "READONLY_BUFFER";
            case 0x82 -> "EXT1";
            case 0x83 -> "EXT2";
            case 0x84 -> "EXT4";
            case 0x8b -> "LONG4";
            case 'I' -> "INT";
            case 'L' -> "LONG";
            case 'S' -> "STRING";
            case 'V' -> "UNICODE";
            case 'F' -> "FLOAT";
            case 'G' -> "BINFLOAT";
            case 'd' -> "DICT";
            case 'g' -> "GET";
            case 'p' -> "PUT";
            case '0' -> "POP";
            case '1' -> "POP_MARK";
            case '2' -> "DUP";
            default -> null;
        };
        return name != null ? "opcode " + name : String.format("opcode 0x%02x", op);
    }
}
