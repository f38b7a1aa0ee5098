package io.pegaflow.bench.loadgen;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Weighted choice between the load generator's operations, parsed from {@code save=1,query=3,load=2,request=1}.
 *
 * <ul>
 *   <li>{@code save}: Save every block of a prefix (the server skips the ones already resident).
 *   <li>{@code query}: QueryPrefetch of a prefix, then Release of the lease.
 *   <li>{@code load}: QueryPrefetch, then Load of the hit blocks and wait for the load state; bytes are verified.
 *   <li>{@code request}: what one vLLM request does: query, load the hits, save the missing suffix.
 * </ul>
 */
final class OpMix {
    enum Op {
        SAVE,
        QUERY,
        LOAD,
        REQUEST;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Map<Op, Integer> weights;
    private final Op[] table;

    private OpMix(Map<Op, Integer> weights) {
        this.weights = weights;
        int total = weights.values().stream().mapToInt(Integer::intValue).sum();
        this.table = new Op[total];
        int at = 0;
        for (Map.Entry<Op, Integer> e : weights.entrySet()) {
            for (int i = 0; i < e.getValue(); i++) {
                table[at++] = e.getKey();
            }
        }
    }

    /**
     * Parses {@code op=weight,...}; weights are non-negative integers, at least one positive.
     *
     * @throws IllegalArgumentException naming the bad part
     */
    static OpMix parse(String text) {
        Map<Op, Integer> weights = new EnumMap<>(Op.class);
        for (String part : text.split(",", -1)) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            String[] kv = p.split("=", -1);
            if (kv.length != 2) {
                throw new IllegalArgumentException("mix entry '" + p + "' is not op=weight");
            }
            Op op;
            try {
                op = Op.valueOf(kv[0].trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "unknown operation '" + kv[0].trim() + "' (expected save, query, load or request)");
            }
            int weight;
            try {
                weight = Integer.parseInt(kv[1].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("weight of " + op.label() + " is not an integer: '" + kv[1] + "'");
            }
            if (weight < 0 || weight > 1000) {
                throw new IllegalArgumentException("weight of " + op.label() + " must be 0..1000, got " + weight);
            }
            if (weights.put(op, weight) != null) {
                throw new IllegalArgumentException("operation " + op.label() + " listed twice");
            }
        }
        weights.values().removeIf(w -> w == 0);
        if (weights.isEmpty()) {
            throw new IllegalArgumentException("mix '" + text + "' has no operation with a positive weight");
        }
        return new OpMix(weights);
    }

    Op next(SplittableRandom random) {
        return table[random.nextInt(table.length)];
    }

    boolean includes(Op op) {
        return weights.containsKey(op);
    }

    int weight(Op op) {
        return weights.getOrDefault(op, 0);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        weights.forEach((op, w) -> sb.append(sb.length() == 0 ? "" : ",")
                .append(op.label())
                .append('=')
                .append(w));
        return sb.toString();
    }
}
