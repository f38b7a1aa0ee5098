package io.pegaflow.server.push;

import io.pegaflow.core.agent.AgentGroup;
import io.pegaflow.core.agent.NanoClock;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.push.PushConfig;
import io.pegaflow.push.PushEngine;
import io.pegaflow.push.grpc.GrpcDecodeLink;
import io.pegaflow.push.grpc.PdPushGrpcService;
import io.pegaflow.server.grpc.CallerUids;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.ucx.UcxTransferEngine;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The P/D push engine beside the cache engine, when {@code pega.pd.enabled=true}: its own UCX transfer engine over the
 * engine's pool regions, the engine's device backend for worker layers, and the {@code pegaflow.ext.PdPush} service.
 * The push engine depends on the cache engine, so Spring closes it first (its staging goes back to the pool before
 * the pool unmaps).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "pega.pd.enabled", havingValue = "true")
public class PdPushConfiguration {

    @Bean(destroyMethod = "close")
    PushEngine pushEngine(PdProperties p, PegaEngine engine, AgentGroup agents, GrpcPort port) {
        PushConfig config = new PushConfig(
                p.pushTimeout(),
                p.receiveTimeout(),
                p.connectTimeout(),
                p.rpcTimeout(),
                p.quarantine(),
                p.maxInflightLayers(),
                p.maxRequests(),
                p.putChunk().toBytes());
        TransferConfig transfer = TransferConfig.of(p.nics(), p.lanes()).withTransports(p.transports());
        String advertised = p.advertiseAddress();
        return new PushEngine(
                config,
                engine.pool(),
                engine.deviceBackend(),
                UcxTransferEngine.open(transfer, engine.pool().regions(), NanoClock.SYSTEM),
                new GrpcDecodeLink(p.rpcTimeout()),
                NanoClock.SYSTEM,
                agents,
                () -> advertised.isBlank() ? "127.0.0.1:" + port.port() : advertised);
    }

    @Bean
    PdPushGrpcService pdPushGrpcService(PushEngine push) {
        return new PdPushGrpcService(push, CallerUids::current);
    }
}
