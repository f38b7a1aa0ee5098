package io.pegaflow.server.startup;

import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/**
 * The keys the application's {@code @ConfigurationProperties} records can bind, walked from the records themselves
 * (nested records are sub-prefixes, every other component is a key), so the list can never lag behind the code; or the
 * keys a library's configuration metadata lists ({@link SpringKeys}).
 */
final class PropertyKeys {

    /** A bindable key; a list or map key also owns its indexed or named children. */
    private record Key(ConfigurationPropertyName name, boolean container) {
        boolean covers(ConfigurationPropertyName candidate) {
            return name.equals(candidate) || (container && name.isAncestorOf(candidate));
        }
    }

    private final List<Key> keys = new ArrayList<>();

    /** Adds every key of {@code record} (a record class) under {@code prefix}. */
    PropertyKeys add(String prefix, Class<?> record) {
        for (RecordComponent c : record.getRecordComponents()) {
            String name = prefix + "." + kebab(c.getName());
            Class<?> type = c.getType();
            if (type.isRecord() && !type.getName().startsWith("java.")) {
                add(name, type);
            } else {
                boolean container =
                        type.isArray() || Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type);
                keys.add(new Key(ConfigurationPropertyName.of(name), container));
            }
        }
        return this;
    }

    /** Adds one key; a container (list, array or map) also owns every key below it. */
    PropertyKeys addKey(String name, boolean container) {
        keys.add(new Key(ConfigurationPropertyName.of(name), container));
        return this;
    }

    boolean isKnown(ConfigurationPropertyName candidate) {
        return keys.stream().anyMatch(k -> k.covers(candidate));
    }

    /** The known key closest to {@code unknown}, or null when none is close enough to be what was meant. */
    @Nullable
    String suggest(ConfigurationPropertyName unknown) {
        String typed = unknown.toString();
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (Key k : keys) {
            String known = k.name().toString();
            int d = distance(typed, known);
            if (d < bestDistance) {
                bestDistance = d;
                best = known;
            }
        }
        // A typo or two in a key, or a wrong last word (pega.pool.sise, pega.ssd.path): more is a different key.
        return bestDistance <= Math.max(2, typed.length() / 6) ? best : null;
    }

    int size() {
        return keys.size();
    }

    static String kebab(String camel) {
        StringBuilder sb = new StringBuilder(camel.length() + 4);
        for (int i = 0; i < camel.length(); i++) {
            char ch = camel.charAt(i);
            if (Character.isUpperCase(ch)) {
                sb.append('-').append(Character.toLowerCase(ch));
            } else {
                sb.append(ch);
            }
        }
        return sb.toString().toLowerCase(Locale.ROOT);
    }

    /** Edit distance counting a swap of two neighbouring characters as one edit (optimal string alignment). */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                int v = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    v = Math.min(v, d[i - 2][j - 2] + 1);
                }
                d[i][j] = v;
            }
        }
        return d[a.length()][b.length()];
    }
}
