package io.pegaflow.server.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.server.transfer.RdmaConfiguration;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

/** Which UCX context the push engine runs on, and that the one it borrows closes after it. */
@Timeout(60)
class PdPushPoolContextTest {
    private static final TransferConfig RDMA = TransferConfig.of("lo", 2).withTransports("shm,self");

    @Test
    void shouldRunOnTheTransferEnginesContextWhenNicsAndTransportsAreTheSame() {
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        try (UcxSharedMemory rdma = UcxSharedMemory.open(RDMA)) {
            TransferConfig push = TransferConfig.of("lo", 4).withTransports("shm,self");
            assertThat(PdPushConfiguration.poolContext(push, null, rdma, beans)).isSameAs(rdma);
            assertThat(beans.getDependentBeans(RdmaConfiguration.POOL_MEMORY_BEAN))
                    .containsExactly(PdPushConfiguration.PUSH_BEAN);
        }
    }

    @Test
    void shouldKeepAContextOfItsOwnWhenTheTransportsDiffer() {
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        try (UcxSharedMemory rdma = UcxSharedMemory.open(RDMA)) {
            TransferConfig push = TransferConfig.of("lo", 2).withTransports("tcp");
            assertThat(PdPushConfiguration.poolContext(push, null, rdma, beans)).isNull();
            assertThat(beans.getDependentBeans(RdmaConfiguration.POOL_MEMORY_BEAN))
                    .isEmpty();
        }
    }

    @Test
    void shouldRunOnItsOwnPoolContextOrNoneWithoutTheTransferEngines() {
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        TransferConfig push = TransferConfig.of("lo", 2).withTransports("shm,self");
        try (UcxSharedMemory own = UcxSharedMemory.open(push)) {
            assertThat(PdPushConfiguration.poolContext(push, own, null, beans)).isSameAs(own);
        }
        assertThat(PdPushConfiguration.poolContext(push, null, null, beans)).isNull();
    }
}
