package io.pegaflow.testkit.hostile;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.instancio.Random;

/**
 * Arbitrary values of the shapes the properties need, drawn from Instancio's seeded {@link Random}: edge numbers
 * (0, ±1, the extremes) and small ones more often than chance, sizes from empty to the bound, strings of control,
 * ASCII, any other BMP character and supplementary ones (surrogate pairs).
 */
public final class HostileValues {
    private static final Integer[] INT_EDGES = {
        0, 1, -1, 2, Integer.MIN_VALUE, Integer.MIN_VALUE + 1, Integer.MAX_VALUE, Integer.MAX_VALUE - 1
    };
    private static final Long[] LONG_EDGES = {
        0L,
        1L,
        -1L,
        2L,
        (long) Integer.MAX_VALUE + 1,
        Long.MIN_VALUE,
        Long.MIN_VALUE + 1,
        Long.MAX_VALUE,
        Long.MAX_VALUE - 1
    };

    /** NUL, whitespace and line breaks, ESC, DEL, NEL, the Unicode line separator and BOM. */
    private static final Character[] SPECIAL_CHARS = {
        '\u0000', '\t', '\n', '\r', '\u001b', '\u007f', '\u0085', '\u2028', '\ufeff'
    };

    private static final int SURROGATES = Character.MAX_SURROGATE - Character.MIN_SURROGATE + 1;

    private HostileValues() {}

    public static int anyInt(Random r) {
        int pick = r.intRange(0, 9);
        if (pick < 2) {
            return r.oneOf(INT_EDGES);
        }
        return pick < 5 ? r.intRange(-1000, 1000) : r.intRange(Integer.MIN_VALUE, Integer.MAX_VALUE);
    }

    public static long anyLong(Random r) {
        int pick = r.intRange(0, 9);
        if (pick < 2) {
            return r.oneOf(LONG_EDGES);
        }
        return pick < 5 ? r.longRange(-1000, 1 << 20) : r.longRange(Long.MIN_VALUE, Long.MAX_VALUE);
    }

    /** A size in [0, max]: empty and full one time in eight each, otherwise uniform. */
    public static int size(Random r, int max) {
        int pick = r.intRange(0, 7);
        if (pick == 0) {
            return 0;
        }
        return pick == 1 ? max : r.intRange(0, max);
    }

    public static <T> List<T> list(Random r, int maxSize, Function<Random, T> element) {
        int n = size(r, maxSize);
        List<T> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(element.apply(r));
        }
        return list;
    }

    public static byte[] bytes(Random r, int maxSize) {
        byte[] bytes = new byte[size(r, maxSize)];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = r.byteRange(Byte.MIN_VALUE, Byte.MAX_VALUE);
        }
        return bytes;
    }

    /** At most {@code maxLength} UTF-16 units. */
    public static String string(Random r, int maxLength) {
        int length = size(r, maxLength);
        StringBuilder s = new StringBuilder(length);
        while (s.length() < length) {
            int pick = r.intRange(0, 9);
            if (pick < 2) {
                s.append(r.oneOf(SPECIAL_CHARS).charValue());
            } else if (pick < 3) {
                s.append(r.characterRange('\u0000', '\u001f'));
            } else if (pick < 6) {
                s.append(r.characterRange(' ', '~'));
            } else if (pick < 9 || s.length() + 2 > length) {
                // any BMP character but a lone surrogate, which protobuf would only send as '?' (and log)
                char c = r.characterRange('\u0000', (char) ('\uffff' - SURROGATES));
                s.append(c < Character.MIN_SURROGATE ? c : (char) (c + SURROGATES));
            } else {
                s.appendCodePoint(r.intRange(Character.MIN_SUPPLEMENTARY_CODE_POINT, Character.MAX_CODE_POINT));
            }
        }
        return s.toString();
    }
}
