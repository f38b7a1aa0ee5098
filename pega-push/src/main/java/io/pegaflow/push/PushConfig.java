package io.pegaflow.push;

import java.time.Duration;

/**
 * Settings of the push engine ({@code pega.pd.*}, docs/configuration.md), validated on construction so a bad value
 * fails startup naming its key.
 *
 * @param pushTimeout how long a push may take from StartPush to the last layer's arrival before it fails
 * @param receiveTimeout how long a prepared receive waits for every layer of every rank before it fails
 * @param connectTimeout how long connecting the transfer engine to a decode server may take
 * @param rpcTimeout the deadline of every server-to-server call (LayerArrived, PushFailed)
 * @param quarantine how long the staging of a failed receive stays allocated, so that a put still in flight from a
 *     prefill server that has not learnt of the failure cannot land in memory given to someone else
 * @param maxInflightLayers layer puts in flight over all pushes (the reference's 64-transfer window)
 * @param maxRequests pushes plus receives open at once; more are refused with RESOURCE_EXHAUSTED
 * @param putChunkBytes the largest single put; a layer is cut into puts of at most this many bytes, spread over the
 *     lanes
 * @param maxRequestsPerPrincipal pushes plus receives one principal (OS user, or host) may hold open at once, so that
 *     one tenant cannot take every slot of {@code maxRequests}; 0 means half of {@code maxRequests}, at least 1
 */
public record PushConfig(
        Duration pushTimeout,
        Duration receiveTimeout,
        Duration connectTimeout,
        Duration rpcTimeout,
        Duration quarantine,
        int maxInflightLayers,
        int maxRequests,
        long putChunkBytes,
        int maxRequestsPerPrincipal) {

    public PushConfig {
        positive("pega.pd.push-timeout", pushTimeout);
        positive("pega.pd.receive-timeout", receiveTimeout);
        positive("pega.pd.connect-timeout", connectTimeout);
        positive("pega.pd.rpc-timeout", rpcTimeout);
        if (quarantine == null || quarantine.isNegative()) {
            throw refused("pega.pd.quarantine", String.valueOf(quarantine), ">= 0");
        }
        if (maxInflightLayers < 1 || maxInflightLayers > 4096) {
            throw refused("pega.pd.max-inflight-layers", Integer.toString(maxInflightLayers), "1 to 4096");
        }
        if (maxRequests < 1 || maxRequests > 65536) {
            throw refused("pega.pd.max-requests", Integer.toString(maxRequests), "1 to 65536");
        }
        if (putChunkBytes < 4096) {
            throw refused("pega.pd.put-chunk", putChunkBytes + "B", ">= 4KB");
        }
        if (maxRequestsPerPrincipal < 0 || maxRequestsPerPrincipal > maxRequests) {
            throw refused(
                    "pega.pd.max-requests-per-principal",
                    Integer.toString(maxRequestsPerPrincipal),
                    "0 (half of pega.pd.max-requests) to pega.pd.max-requests (" + maxRequests + ")");
        }
    }

    /** The share one principal may hold, with 0 resolved. */
    public int principalShare() {
        return maxRequestsPerPrincipal == 0 ? Math.max(1, maxRequests / 2) : maxRequestsPerPrincipal;
    }

    /** Defaults for tests and tools: every timeout as in docs/configuration.md. */
    public static PushConfig defaults() {
        return new PushConfig(
                Duration.ofSeconds(30),
                Duration.ofSeconds(60),
                Duration.ofSeconds(10),
                Duration.ofSeconds(5),
                Duration.ofSeconds(30),
                64,
                256,
                4L << 20,
                0);
    }

    public PushConfig withTimeouts(Duration push, Duration receive) {
        return new PushConfig(
                push,
                receive,
                connectTimeout,
                rpcTimeout,
                quarantine,
                maxInflightLayers,
                maxRequests,
                putChunkBytes,
                maxRequestsPerPrincipal);
    }

    private static void positive(String key, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw refused(key, String.valueOf(d), "> 0");
        }
    }

    private static IllegalArgumentException refused(String key, String value, String expected) {
        return new IllegalArgumentException(key + ": " + value + " (expected: " + expected + ")");
    }
}
