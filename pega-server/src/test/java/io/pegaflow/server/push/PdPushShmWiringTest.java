package io.pegaflow.server.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.test.context.TestPropertySource;

/**
 * {@link PdPushWiringTest} with the push engine over shared memory and P2P off: the push engine's UCX context
 * allocates the pool (decision 0019), so a decode server's pool is memory a prefill server on the same host attaches.
 */
@TestPropertySource(properties = "pega.pd.transports=shm,self")
class PdPushShmWiringTest extends PdPushWiringTest {

    @Autowired
    @Qualifier(PdPushConfiguration.POOL_MEMORY_BEAN)
    UcxSharedMemory poolMemory;

    @Autowired
    PinnedMemoryPool pool;

    @Test
    void shouldAllocateThePoolFromThePushEnginesContextInSharedMemory() {
        assertThat(poolMemory.outstanding()).isEqualTo(pool.regions().size());
        assertThat(poolMemory.sharedOutstanding()).isEqualTo(pool.regions().size());
    }
}
