package io.pegaflow.core.device.cuda;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The {@code torch.<dtype>} globals the restricted unpickler accepts, with their element sizes. A dtype pickles as
 * the global {@code torch.<canonical name>} (its {@code __reduce__} returns the name), so only canonical names appear
 * in practice; the common aliases are accepted too because they name the same objects.
 */
public enum TorchDtype {
    FLOAT64("float64", 8, "double"),
    FLOAT32("float32", 4, "float"),
    FLOAT16("float16", 2, "half"),
    BFLOAT16("bfloat16", 2),
    COMPLEX128("complex128", 16, "cdouble"),
    COMPLEX64("complex64", 8, "cfloat"),
    COMPLEX32("complex32", 4, "chalf"),
    INT64("int64", 8, "long"),
    INT32("int32", 4, "int"),
    INT16("int16", 2, "short"),
    INT8("int8", 1),
    UINT64("uint64", 8),
    UINT32("uint32", 4),
    UINT16("uint16", 2),
    UINT8("uint8", 1),
    BOOL("bool", 1),
    FLOAT8_E4M3FN("float8_e4m3fn", 1),
    FLOAT8_E4M3FNUZ("float8_e4m3fnuz", 1),
    FLOAT8_E5M2("float8_e5m2", 1),
    FLOAT8_E5M2FNUZ("float8_e5m2fnuz", 1),
    FLOAT8_E8M0FNU("float8_e8m0fnu", 1),
    FLOAT4_E2M1FN_X2("float4_e2m1fn_x2", 1);

    private static final Map<String, TorchDtype> BY_NAME = new HashMap<>();

    static {
        for (TorchDtype d : values()) {
            BY_NAME.put(d.torchName, d);
            if (d.alias != null) {
                BY_NAME.put(d.alias, d);
            }
        }
    }

    private final String torchName;
    private final int elementSize;
    /** The other name torch gives this dtype ({@code torch.double} for {@code torch.float64}), or null. */
    private final @Nullable String alias;

    TorchDtype(String torchName, int elementSize) {
        this(torchName, elementSize, null);
    }

    TorchDtype(String torchName, int elementSize, @Nullable String alias) {
        this.torchName = torchName;
        this.elementSize = elementSize;
        this.alias = alias;
    }

    /** The attribute name in module {@code torch}, e.g. {@code bfloat16}. */
    public String torchName() {
        return torchName;
    }

    /** Bytes per element ({@code tensor.element_size()}). */
    public int elementSize() {
        return elementSize;
    }

    /** The dtype named {@code torch.<name>}, or null when the name is not a dtype we accept. */
    static @Nullable TorchDtype byTorchName(String name) {
        return BY_NAME.get(name);
    }

    @Override
    public String toString() {
        return "torch." + torchName.toLowerCase(Locale.ROOT);
    }
}
