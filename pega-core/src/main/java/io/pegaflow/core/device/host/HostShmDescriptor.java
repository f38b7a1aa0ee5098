package io.pegaflow.core.device.host;

import io.pegaflow.core.error.EngineException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The host backend's {@code wrapper_bytes}: UTF-8 JSON naming a POSIX shared-memory object and a byte range in it.
 *
 * <pre>
 *   {"kind":"host-shm","name":"pega_&lt;...&gt;","offset":&lt;bytes&gt;,"size":&lt;bytes&gt;}
 * </pre>
 *
 * The name must match {@code ^pega_[A-Za-z0-9._-]{1,200}$}: no slash, so it can only ever name a file directly in
 * {@code /dev/shm}, and {@code ..} cannot be formed into a path. The parser is deliberately tiny and strict (a flat
 * object with exactly these four keys, no escapes, at most 1 KiB) because the bytes come from the network.
 */
public record HostShmDescriptor(String name, long offset, long size) {
    public static final String KIND = "host-shm";
    private static final Pattern NAME = Pattern.compile("^pega_[A-Za-z0-9._-]{1,200}$");
    private static final int MAX_BYTES = 1024;

    /**
     * Parses and validates the descriptor.
     *
     * @throws EngineException INVALID_ARGUMENT naming what is wrong
     */
    public static HostShmDescriptor parse(byte[] bytes) {
        if (bytes.length > 0 && (bytes[0] & 0xFF) == 0x80) {
            throw EngineException.invalidArgument("wrapper_bytes is a pickled CudaIPCWrapper, but this server runs the"
                    + " host device backend (no GPU); start it on a GPU machine with pega.device.backend=auto or cuda");
        }
        if (bytes.length == 0 || bytes.length > MAX_BYTES) {
            throw bad("expected a JSON object of at most " + MAX_BYTES + " bytes, got " + bytes.length);
        }
        Parser p = new Parser(new String(bytes, StandardCharsets.UTF_8));
        String kind = null;
        String name = null;
        long offset = -1;
        long size = -1;
        p.expect('{');
        do {
            String key = p.string();
            p.expect(':');
            switch (key) {
                case "kind" -> {
                    p.once(kind, key);
                    kind = p.string();
                }
                case "name" -> {
                    p.once(name, key);
                    name = p.string();
                }
                case "offset" -> offset = p.onceNumber(offset, key);
                case "size" -> size = p.onceNumber(size, key);
                default -> throw bad("unknown key \"" + key + "\"");
            }
        } while (p.comma());
        p.expect('}');
        p.end();
        if (!KIND.equals(kind)) {
            throw bad("kind must be \"" + KIND + "\"");
        }
        if (name == null || !NAME.matcher(name).matches()) {
            throw bad("name must match " + NAME.pattern());
        }
        if (offset < 0 || size < 0) {
            throw bad("offset and size are required");
        }
        if (size == 0) {
            throw bad("size must be > 0");
        }
        return new HostShmDescriptor(name, offset, size);
    }

    static EngineException bad(String reason) {
        return EngineException.invalidArgument("host descriptor: " + reason);
    }

    private static final class Parser {
        private final String s;
        private int i;

        Parser(String s) {
            this.s = s;
        }

        private void skipSpace() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        void expect(char c) {
            skipSpace();
            if (i >= s.length() || s.charAt(i) != c) {
                throw bad("malformed JSON: expected '" + c + "' at " + i);
            }
            i++;
        }

        boolean comma() {
            skipSpace();
            if (i < s.length() && s.charAt(i) == ',') {
                i++;
                return true;
            }
            return false;
        }

        String string() {
            expect('"');
            int start = i;
            while (i < s.length() && s.charAt(i) != '"') {
                char c = s.charAt(i);
                if (c == '\\' || c < 0x20) {
                    throw bad("escapes and control characters are not allowed in strings");
                }
                i++;
            }
            if (i >= s.length()) {
                throw bad("malformed JSON: unterminated string");
            }
            return s.substring(start, i++);
        }

        long number() {
            skipSpace();
            int start = i;
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
            if (start == i || i - start > 18) {
                throw bad("numbers must be non-negative integers below 10^18");
            }
            return Long.parseLong(s.substring(start, i));
        }

        void once(@Nullable String current, String key) {
            if (current != null) {
                throw bad("duplicate key \"" + key + "\"");
            }
        }

        long onceNumber(long current, String key) {
            if (current >= 0) {
                throw bad("duplicate key \"" + key + "\"");
            }
            return number();
        }

        void end() {
            skipSpace();
            if (i != s.length()) {
                throw bad("trailing bytes after the JSON object");
            }
        }
    }
}
