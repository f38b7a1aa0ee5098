package io.pegaflow.server.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.kernel.memory.ShardMemory;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.TestPropertySource;

/**
 * {@link TransferRpcsTest}'s cases with UCX over shared memory, where the server's pool is allocated by the transfer
 * engine's UCX context ({@code pega.rdma.shm-pool}, decision 0019): the requester's gets copy straight out of the
 * owner's attached segments, byte for byte. The push engine is on too, over shared memory as well: one context can
 * allocate the pool, it is the transfer engine's, and the push engine runs on it.
 */
@TestPropertySource(
        properties = {"pega.rdma.transports=shm,self", "pega.pd.enabled=true", "pega.pd.transports=shm,self"})
class TransferRpcsShmTest extends TransferRpcsTest {

    @Autowired
    UcxSharedMemory poolMemory;

    @Autowired
    PinnedMemoryPool pool;

    @Autowired
    ApplicationContext context;

    @Test
    void shouldRunThePoolInSharedMemoryTheTransferContextAllocated() {
        assertThat(poolMemory.outstanding()).isEqualTo(pool.regions().size());
        assertThat(poolMemory.sharedOutstanding()).isEqualTo(pool.regions().size());
        assertThat(context.containsBean("pdPoolMemory"))
                .as("the push engine's context allocates nothing")
                .isFalse();
        assertThat(context.getBeansOfType(ShardMemory.class)).containsOnlyKeys("rdmaPoolMemory");
        assertThat(poolMemory.borrowers())
                .as("the transfer engine and the push engine (same NICs and transports) run on the one context")
                .isEqualTo(2);
    }
}
