package io.pegaflow.transfer;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * How to build a transfer engine. Validated on construction, so a bad value fails startup with a message naming it.
 *
 * @param nics devices the lanes run over, from {@link NicList#parse} (at least one): RDMA devices such as
 *     {@code mlx5_0} or {@code mlx5_0:1}, or network interfaces such as {@code eth0} for UCX's TCP transport; passed to
 *     UCX as {@code NET_DEVICES}
 * @param qpsPerPeer connections per peer, each on its own UCX worker and progress thread ({@code pega.rdma.qps-per-peer},
 *     1 to 64); every node of a cluster must use the same value
 * @param transports UCX transport list ({@code UCX_TLS}, for example {@code tcp}, {@code rc,sm} or {@code shm,self});
 *     empty lets UCX choose. Other UCX settings ({@code UCX_IB_GID_INDEX}, ...) are UCX's own environment variables:
 *     this record carries only what the engine must know about (JUCX ignores an unknown setting with a warning, so a
 *     pass-through map here could not refuse a misspelt one)
 * @param keys the settings' configuration keys, which a refusal names ({@link TransferKeys#RDMA} unless another
 *     engine's)
 */
public record TransferConfig(List<String> nics, int qpsPerPeer, String transports, TransferKeys keys) {
    /** The reference's default: two RC QPs per NIC pair saturate a 400G link for reads. */
    public static final int DEFAULT_QPS_PER_PEER = 2;

    public static final int MAX_QPS_PER_PEER = 64;

    private static final Pattern TRANSPORTS = Pattern.compile("[a-z0-9_^,:]*");
    private static final Pattern COMMA = Pattern.compile(",");
    // shared-memory transports have no peer-failure detection in UCX: an endpoint asking for it cannot be created
    // (UCX 1.13), so peer error handling is only requested when a network transport may be used
    private static final Set<String> SHM_TRANSPORTS =
            Set.of("sm", "shm", "posix", "sysv", "cma", "knem", "xpmem", "self");

    /** @throws TransferException {@link TransferException.Kind#INIT_FAILED} naming the setting */
    public TransferConfig {
        nics = List.copyOf(nics);
        transports = transports == null ? "" : transports.strip().toLowerCase(Locale.ROOT);
        if (nics.isEmpty()) {
            throw refused(keys.nics() + ": at least one NIC is needed to run the transfer engine");
        }
        if (qpsPerPeer < 1 || qpsPerPeer > MAX_QPS_PER_PEER) {
            throw refused(keys.lanes() + ": " + qpsPerPeer + " (expected 1 to " + MAX_QPS_PER_PEER + ")");
        }
        if (!TRANSPORTS.matcher(transports).matches()) {
            throw refused(keys.transports() + ": '" + transports + "' is not a UCX transport list");
        }
    }

    /** Read from {@link TransferKeys#RDMA}. */
    public TransferConfig(List<String> nics, int qpsPerPeer, String transports) {
        this(nics, qpsPerPeer, transports, TransferKeys.RDMA);
    }

    /** NICs from a {@code pega.rdma.nics} value, with no transport restriction. */
    public static TransferConfig of(String nics, int qpsPerPeer) {
        return of(nics, qpsPerPeer, "", TransferKeys.RDMA);
    }

    /**
     * The settings as read from {@code keys}, each refusal naming its key.
     *
     * @throws TransferException {@link TransferException.Kind#INIT_FAILED} naming the setting
     */
    public static TransferConfig of(String nics, int lanes, String transports, TransferKeys keys) {
        return new TransferConfig(NicList.parse(nics, keys.nics()), lanes, transports, keys);
    }

    /** A copy with another transport list. */
    public TransferConfig withTransports(String tls) {
        return new TransferConfig(nics, qpsPerPeer, tls, keys);
    }

    /**
     * Whether an engine of this configuration can run on a UCX context made for {@code other}: the context is made
     * for its NICs and transports, while the lane count only sizes a hint, so two engines of one node (the transfer
     * engine and the push engine) with their own lane counts can share it.
     */
    public boolean sharesContextWith(TransferConfig other) {
        return nics.equals(other.nics) && transports.equals(other.transports);
    }

    /** Whether endpoints ask UCX to detect peer failure: false only for a transport list of shared memory alone. */
    public boolean peerErrorHandling() {
        if (transports.isEmpty()) {
            return true;
        }
        for (String t : COMMA.split(transports, -1)) {
            // "^x" excludes x and keeps every other transport, network ones included
            if (t.startsWith("^") || (!t.isEmpty() && !SHM_TRANSPORTS.contains(t))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether UCX may use shared memory between processes of this host: the list is empty (UCX chooses), excludes
     * other transports only ({@code ^tcp}), or names {@code all}, {@code sm}, {@code shm}, {@code posix} or
     * {@code sysv}.
     */
    public boolean allowsSharedMemory() {
        return allowsSharedMemory(transports);
    }

    /** {@link #allowsSharedMemory()} for a {@code pega.rdma.transports} value, before it is validated. */
    public static boolean allowsSharedMemory(String transports) {
        String t = transports.strip().toLowerCase(Locale.ROOT);
        if (t.isEmpty()) {
            return true;
        }
        boolean exclude = t.startsWith("^");
        Set<String> named = Set.copyOf(Arrays.asList(COMMA.split(exclude ? t.substring(1) : t, -1)));
        boolean namesShm = named.contains("sm") || named.contains("shm") || (!exclude && named.contains("all"));
        boolean namesMm = named.contains("posix") || named.contains("sysv");
        if (exclude) {
            return !namesShm && !(named.contains("posix") && named.contains("sysv"));
        }
        return namesShm || namesMm;
    }

    private static TransferException refused(String why) {
        return new TransferException(TransferException.Kind.INIT_FAILED, why);
    }
}
