package io.pegaflow.sys;

import java.lang.reflect.Field;
import sun.misc.Unsafe;

/**
 * Loads and stores of single values at native addresses with explicit memory ordering, for the few places that share
 * a word with another process (the 32-byte load-state object a vLLM worker polls).
 *
 * <p>OFF-HEAP: every method trusts its address. Callers validate the mapping's bounds and alignment first.
 */
public final class OffHeap {
    private static final Unsafe UNSAFE = unsafe();

    private OffHeap() {}

    private static Unsafe unsafe() {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Plain read of a possibly unaligned 64-bit little-endian value (x86-64 and aarch64 allow it). */
    public static long getLong(long address) {
        return UNSAFE.getLong(address);
    }

    /** Acquire read of an aligned 32-bit value. */
    public static int getIntAcquire(long address) {
        return UNSAFE.getIntVolatile(null, address);
    }

    /** Acquire read of an aligned 64-bit value. */
    public static long getLongAcquire(long address) {
        return UNSAFE.getLongVolatile(null, address);
    }

    /**
     * Release-or-stronger store of an aligned 64-bit value: everything this thread wrote before (the copied KV bytes)
     * is visible to a reader that sees the new value.
     */
    public static void putLongRelease(long address, long value) {
        UNSAFE.putLongVolatile(null, address, value);
    }

    public static void putLong(long address, long value) {
        UNSAFE.putLong(address, value);
    }

    public static void putInt(long address, int value) {
        UNSAFE.putInt(address, value);
    }

    public static byte getByte(long address) {
        return UNSAFE.getByte(address);
    }

    public static void putByte(long address, byte value) {
        UNSAFE.putByte(address, value);
    }
}
