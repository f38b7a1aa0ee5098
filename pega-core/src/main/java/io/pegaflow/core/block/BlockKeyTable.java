package io.pegaflow.core.block;

import java.util.Arrays;
import java.util.List;

/**
 * Insertion-ordered set of keys with int indices: open addressing over {@code int[]} (index + 1, 0 = empty),
 * linear probing, load factor at most 1/2. A lookup by (namespace, bytes) builds a {@link BlockKey} only for a key
 * it has not seen.
 */
public final class BlockKeyTable {
    private BlockKey[] keys;
    private int[] slots;
    private int size;

    public BlockKeyTable(int expected) {
        keys = new BlockKey[Math.max(4, expected)];
        slots = new int[tableSizeFor(Math.max(4, expected))];
    }

    private static int tableSizeFor(int entries) {
        return Integer.highestOneBit(Math.max(8, entries * 2 - 1)) << 1;
    }

    /** The index of ({@code namespace}, {@code hash}), added at the end if new. */
    public int intern(String namespace, byte[] hash) {
        int h = BlockKey.hashOf(namespace, hash);
        int mask = slots.length - 1;
        int at = h & mask;
        for (int s; (s = slots[at]) != 0; at = (at + 1) & mask) {
            if (keys[s - 1].matches(namespace, hash, h)) {
                return s - 1;
            }
        }
        if (size == keys.length) {
            keys = Arrays.copyOf(keys, size * 2);
        }
        keys[size] = new BlockKey(namespace, hash);
        slots[at] = ++size;
        if (size * 2 > slots.length) {
            rehash();
        }
        return size - 1;
    }

    private void rehash() {
        int[] bigger = new int[slots.length * 2];
        int mask = bigger.length - 1;
        for (int i = 0; i < size; i++) {
            int at = keys[i].hashCode() & mask;
            while (bigger[at] != 0) {
                at = (at + 1) & mask;
            }
            bigger[at] = i + 1;
        }
        slots = bigger;
    }

    public int size() {
        return size;
    }

    public BlockKey key(int index) {
        return keys[index];
    }

    public List<BlockKey> keyList() {
        return Arrays.asList(keys).subList(0, size);
    }
}
