package io.pegaflow.bench.loadgen;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.StreamWriteFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The report as JSON, written by Jackson: maps keep their order, doubles are rounded to 6 significant digits (the
 * measurements carry no more), and a non-finite double (a rate over no samples) becomes null.
 */
public final class Json {
    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .build();

    private Json() {}

    public static String write(Object value) {
        return MAPPER.writeValueAsString(normalize(value)) + "\n";
    }

    /** Reads what {@link #write} wrote (tests, and tools that post-process a run). */
    public static Object read(String json) {
        return MAPPER.readValue(json, Object.class);
    }

    private static @Nullable Object normalize(@Nullable Object v) {
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            return Double.isFinite(d)
                    ? new BigDecimal(d).round(new MathContext(6)).stripTrailingZeros()
                    : null;
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, @Nullable Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(String.valueOf(k), normalize(x)));
            return out;
        }
        if (v instanceof List<?> l) {
            List<@Nullable Object> out = new ArrayList<>(l.size());
            l.forEach(x -> out.add(normalize(x)));
            return out;
        }
        return v;
    }
}
