package io.pegaflow.transfer.ucx;

import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.TransferException.Kind;
import java.nio.file.Path;
import java.util.List;
import org.openucx.jucx.UcxException;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpParams;

/** The one way this module makes a UCX context from a {@link TransferConfig}. */
final class UcxContexts {
    private UcxContexts() {}

    /** @throws TransferException {@code INIT_FAILED} naming the NICs, transports and UCX's reason */
    static UcpContext open(TransferConfig config, Path sysClass) {
        List<String> devices = NetDevices.resolve(config.nics(), config.keys().nics(), sysClass);
        try {
            return new UcpContext(params(config, devices));
        } catch (UcxException | LinkageError e) { // LinkageError: libucx0 missing or too old
            throw initFailed(config, "UCX context: " + e.getMessage(), e);
        }
    }

    private static UcpParams params(TransferConfig config, List<String> devices) {
        UcpParams p = new UcpParams()
                .requestRmaFeature()
                .setMtWorkersShared(false)
                .setEstimatedNumEps(64L * config.qpsPerPeer())
                .setConfig("NET_DEVICES", String.join(",", devices));
        if (!config.transports().isEmpty()) {
            p.setConfig("TLS", config.transports());
        }
        return p;
    }

    static TransferException initFailed(TransferConfig config, String why, Throwable cause) {
        return new TransferException(
                Kind.INIT_FAILED,
                "UCX initialisation failed for " + config.keys().nics() + "=" + String.join(",", config.nics())
                        + (config.transports().isEmpty()
                                ? ""
                                : " " + config.keys().transports() + "=" + config.transports())
                        + ": "
                        + why,
                cause);
    }
}
