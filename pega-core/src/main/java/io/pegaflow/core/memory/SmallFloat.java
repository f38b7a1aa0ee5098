package io.pegaflow.core.memory;

/**
 * The size classes of {@link OffsetAllocator}: a size in units is written as a tiny floating-point number with a
 * 3-bit mantissa and a 5-bit exponent, and that 8-bit code is the bin index.
 *
 * <pre>
 *   bin = exponent &lt;&lt; 3 | mantissa
 *   size &lt; 8            : exponent 0, mantissa = size           (exact)
 *   size with msb at m  : exponent = m - 2, mantissa = the 3 bits below the msb
 *   lower bound of bin  : exponent 0 ? mantissa : (8 | mantissa) &lt;&lt; (exponent - 1)
 * </pre>
 *
 * <p>Each power-of-two range is cut into 8 equal steps, so a bin's sizes differ by at most 12.5%. Sizes up to
 * {@code 2^32 - 1} use bins 0..239 (round-down) or 0..240 (round-up), inside the 32 x 8 = 256 bins.
 *
 * <p>Stateless and thread-safe.
 */
final class SmallFloat {
    static final int MANTISSA_BITS = 3;
    static final int MANTISSA_VALUE = 1 << MANTISSA_BITS;
    static final int MANTISSA_MASK = MANTISSA_VALUE - 1;

    private SmallFloat() {}

    /**
     * The bin whose lower bound is the largest one not above {@code sizeUnits}: where a free region of this size is
     * filed, so every region in a bin is at least the bin's lower bound.
     */
    static int binRoundDown(long sizeUnits) {
        if (sizeUnits < MANTISSA_VALUE) {
            return (int) sizeUnits;
        }
        int shift = mantissaShift(sizeUnits);
        int mantissa = (int) (sizeUnits >>> shift) & MANTISSA_MASK;
        return ((shift + 1) << MANTISSA_BITS) | mantissa;
    }

    /**
     * The lowest bin whose lower bound is not below {@code sizeUnits}: where a request of this size starts looking, so
     * any region found there or higher fits. A mantissa overflow carries into the exponent (addition, not OR).
     */
    static int binRoundUp(long sizeUnits) {
        if (sizeUnits < MANTISSA_VALUE) {
            return (int) sizeUnits;
        }
        int shift = mantissaShift(sizeUnits);
        int mantissa = (int) (sizeUnits >>> shift) & MANTISSA_MASK;
        long droppedBits = sizeUnits & ((1L << shift) - 1);
        if (droppedBits != 0) {
            mantissa++;
        }
        return ((shift + 1) << MANTISSA_BITS) + mantissa;
    }

    /** The smallest size, in units, that {@link #binRoundDown} files into {@code bin}. */
    static long binLowerBound(int bin) {
        int exponent = bin >>> MANTISSA_BITS;
        int mantissa = bin & MANTISSA_MASK;
        if (exponent == 0) {
            return mantissa;
        }
        return ((long) (mantissa | MANTISSA_VALUE)) << (exponent - 1);
    }

    /** Position of the lowest mantissa bit: three below the most significant set bit. */
    private static int mantissaShift(long sizeUnits) {
        int msb = 63 - Long.numberOfLeadingZeros(sizeUnits);
        return msb - MANTISSA_BITS;
    }
}
