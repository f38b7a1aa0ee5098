package io.pegaflow.core.device.cuda;

import io.pegaflow.sys.cuda.Cuda;
import java.util.Arrays;
import java.util.Locale;

/**
 * Resolves {@code pega.device.backend} ({@code auto | cuda | host}) and parses {@code pega.devices} (the reference's
 * {@code --devices}: a comma list of CUDA ordinals, empty for all).
 *
 * <p>{@code auto} picks cuda when {@code libcuda} loads and sees a GPU, else host; {@code cuda} fails with the
 * driver's reason when it cannot; {@code host} never touches the driver. Stateless.
 */
public final class CudaBackendSelector {
    /** The backend a server runs. */
    public enum Choice {
        CUDA,
        HOST
    }

    private CudaBackendSelector() {}

    /**
     * Resolves {@code mode} to the backend this machine runs.
     *
     * @param mode {@code auto}, {@code cuda} or {@code host} (case-insensitive; null or blank means auto)
     * @throws IllegalArgumentException for another mode, or {@code cuda} on a machine without a usable driver
     */
    public static Choice choose(String mode) {
        String m = mode == null || mode.isBlank() ? "auto" : mode.trim().toLowerCase(Locale.ROOT);
        return switch (m) {
            case "host" -> Choice.HOST;
            case "auto" -> CudaDeviceBackend.isAvailable() ? Choice.CUDA : Choice.HOST;
            case "cuda" -> {
                Cuda.Availability a = Cuda.probe();
                if (!a.usable()) {
                    throw new IllegalArgumentException("pega.device.backend=cuda but CUDA is not usable here: "
                            + (a.reason().isEmpty() ? "no device" : a.reason()));
                }
                yield Choice.CUDA;
            }
            default ->
                throw new IllegalArgumentException(
                        "pega.device.backend must be auto, cuda or host, got '" + mode + "'");
        };
    }

    /** Why {@code auto} would pick host: the driver probe's reason, or empty when CUDA is usable. */
    public static String unavailableReason() {
        try {
            Cuda.Availability a = Cuda.probe();
            return a.usable() ? "" : a.reason();
        } catch (RuntimeException | LinkageError e) {
            return e.toString();
        }
    }

    /**
     * Parses {@code "0,1, 3"} into {@code [0, 1, 3]}; null or blank gives an empty array (all devices). Duplicates and
     * negatives are rejected.
     */
    public static int[] parseDevices(String spec) {
        if (spec == null || spec.isBlank()) {
            return new int[0];
        }
        String[] parts = spec.split("[,\\s]+");
        int[] out = Arrays.stream(parts)
                .filter(p -> !p.isEmpty())
                .mapToInt(p -> {
                    try {
                        return Integer.parseInt(p);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("pega.devices: '" + p + "' is not a device ordinal");
                    }
                })
                .toArray();
        for (int i = 0; i < out.length; i++) {
            if (out[i] < 0) {
                throw new IllegalArgumentException("pega.devices: negative device " + out[i]);
            }
            for (int j = 0; j < i; j++) {
                if (out[j] == out[i]) {
                    throw new IllegalArgumentException("pega.devices: device " + out[i] + " listed twice");
                }
            }
        }
        return out;
    }
}
