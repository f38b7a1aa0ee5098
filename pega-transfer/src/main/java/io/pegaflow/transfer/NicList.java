package io.pegaflow.transfer;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Parses {@code pega.rdma.nics}: device names separated by commas, whitespace or both ({@code mlx5_0,mlx5_1},
 * {@code mlx5_0 mlx5_1}, {@code "mlx5_0, mlx5_1"}), each optionally with a port ({@code mlx5_0:1}). A comma with
 * nothing but blanks before the next comma or the end ({@code mlx5_0,,mlx5_1}, {@code mlx5_0,}) is refused with a
 * message that names its position, as the reference's parser does; so is a name listed twice. A blank value means "no
 * NICs": the transfer engine is off.
 */
public final class NicList {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}(:[0-9]{1,3})?");
    private static final Pattern BLANKS = Pattern.compile("\\s+");
    private static final Pattern COMMA = Pattern.compile(",");

    private NicList() {}

    /**
     * Splits and checks a {@code pega.rdma.nics} value.
     *
     * @param key the setting {@code raw} came from, which a refusal names
     * @return the names in order; empty for a null or blank value
     * @throws TransferException {@link TransferException.Kind#INIT_FAILED} naming the key and the bad entry
     */
    public static List<String> parse(String raw, String key) {
        if (raw == null || raw.isBlank()) {
            return List.of();
        }
        String[] entries = COMMA.split(raw, -1);
        Set<String> names = new LinkedHashSet<>();
        for (int i = 0; i < entries.length; i++) {
            String entry = entries[i].strip();
            if (entry.isEmpty()) {
                throw refused(key, "empty NIC name at entry " + (i + 1) + " of '" + raw + "'");
            }
            for (String name : BLANKS.split(entry, -1)) {
                if (!NAME.matcher(name).matches()) {
                    throw refused(
                            key,
                            "'" + name + "' is not a device name (letters, digits, '_', '.', '-',"
                                    + " optionally ':port') in '" + raw + "'");
                }
                if (!names.add(name)) {
                    throw refused(key, "'" + name + "' is listed twice in '" + raw + "'");
                }
            }
        }
        return List.copyOf(new ArrayList<>(names));
    }

    private static TransferException refused(String key, String why) {
        return new TransferException(TransferException.Kind.INIT_FAILED, key + ": " + why);
    }
}
