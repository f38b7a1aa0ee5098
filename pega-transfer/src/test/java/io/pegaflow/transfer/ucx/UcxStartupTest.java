package io.pegaflow.transfer.ucx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Startup refuses what cannot work, with a message naming it, and leaves nothing behind: no silent fallback. */
@Timeout(60)
class UcxStartupTest {
    private PinnedMemoryPool pool;

    @BeforeEach
    void pool() {
        pool = PinnedMemoryPool.create(PoolConfig.of(4 * 1024 * 1024));
    }

    @AfterEach
    void close() {
        pool.close();
    }

    @Test
    void shouldRefuseANicThisHostDoesNotHave() {
        assertRefused(TransferConfig.of("lo, nosuchnic0", 2), "no RDMA device or network interface named 'nosuchnic0'");
    }

    @Test
    void shouldRefuseATransportUcxDoesNotHave() {
        assertRefused(
                TransferConfig.of("lo", 2).withTransports("nosuchtl"),
                "UCX initialisation failed for" + " pega.rdma.nics=lo pega.rdma.transports=nosuchtl");
    }

    @Test
    void shouldStartAndCloseAfterARefusal() {
        assertRefused(TransferConfig.of("nosuchnic0", 1), "nosuchnic0");
        try (TransferEngine engine = UcxTransferEngine.open(
                TransferConfig.of("lo", 2).withTransports("tcp"), pool.regions(), NanoClock.SYSTEM)) {
            assertThat(engine.localDescriptor().lanes()).isEqualTo(2);
            assertThat(engine.localDescriptor().regions()).hasSize(1);
            assertThat(engine.view().fabric()).isEqualTo("ucx");
            assertThat(engine.view().nics()).containsExactly("lo");
            assertThat(engine.view().registeredBytes())
                    .isEqualTo(pool.regions().get(0).lengthBytes());
        }
    }

    private void assertRefused(TransferConfig config, String message) {
        assertThatThrownBy(() -> UcxTransferEngine.open(config, pool.regions(), NanoClock.SYSTEM)
                        .close())
                .isInstanceOfSatisfying(
                        TransferException.class,
                        e -> assertThat(e.kind()).isEqualTo(TransferException.Kind.INIT_FAILED))
                .hasMessageContaining(message);
    }
}
