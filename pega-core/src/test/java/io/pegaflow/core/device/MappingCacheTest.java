package io.pegaflow.core.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** One mapping per distinct handle, shared and counted, closed exactly once and always before it is reopened. */
@Timeout(10)
class MappingCacheTest {
    private final List<String> log = new ArrayList<>();
    private int next;
    private final MappingCache<String, String> cache = new MappingCache<>(
            key -> {
                if (key.startsWith("bad")) {
                    throw new IllegalArgumentException(key + " cannot be mapped");
                }
                String mapping = key + "@" + next++;
                log.add("open " + mapping);
                return mapping;
            },
            mapping -> log.add("close " + mapping));

    @Test
    void shouldOpenADistinctHandleOnceAndShareIt() {
        MappingCache.Entry<String, String> a = cache.acquire("shm-a");
        MappingCache.Entry<String, String> b = cache.acquire("shm-a");
        assertThat(b).isSameAs(a);
        assertThat(a.mapping()).isEqualTo("shm-a@0");
        assertThat(cache.size()).isEqualTo(1);
        a.release();
        assertThat(log).containsExactly("open shm-a@0");
        b.release();
        assertThat(log).containsExactly("open shm-a@0", "close shm-a@0");
        assertThat(cache.size()).isZero();
    }

    @Test
    void shouldKeepDistinctHandlesApart() {
        MappingCache.Entry<String, String> a = cache.acquire("a");
        MappingCache.Entry<String, String> b = cache.acquire("b");
        assertThat(cache.size()).isEqualTo(2);
        a.release();
        assertThat(cache.size()).isEqualTo(1);
        b.release();
        assertThat(log).containsExactly("open a@0", "open b@1", "close a@0", "close b@1");
    }

    @Test
    void shouldOpenAFreshMappingAfterTheLastRelease() {
        cache.acquire("a").release();
        MappingCache.Entry<String, String> again = cache.acquire("a");
        assertThat(again.mapping()).isEqualTo("a@1");
        again.release();
        assertThat(log).containsExactly("open a@0", "close a@0", "open a@1", "close a@1");
    }

    @Test
    void shouldCacheNothingWhenTheOpenerFails() {
        assertThatThrownBy(() -> cache.acquire("bad-handle"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad-handle cannot be mapped");
        assertThat(cache.size()).isZero();
        assertThat(log).isEmpty();
    }

    @Test
    void shouldRefuseAReleaseWithoutAReference() {
        MappingCache.Entry<String, String> a = cache.acquire("a");
        a.release();
        assertThatThrownBy(a::release)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("release of an already released mapping");
        assertThat(log).containsExactly("open a@0", "close a@0");
    }

    @Test
    void shouldCloseWhatIsStillOpenAtBackendCloseExactlyOnce() {
        MappingCache.Entry<String, String> a = cache.acquire("a");
        cache.acquire("b").release();
        assertThat(cache.closeAll()).isEqualTo(1);
        assertThat(cache.size()).isZero();
        a.release(); // the holder's late release must not close it again
        assertThat(log).containsExactly("open a@0", "open b@1", "close b@1", "close a@0");
        assertThat(cache.closeAll()).isZero();
    }
}
