package io.pegaflow.core.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.invoke.MethodHandles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The one reference-count rule set shared by blocks, allocations and device mappings. */
@Timeout(10)
class RefCountTest {
    static final class Holder {
        static final RefCount REFS = RefCount.of(MethodHandles.lookup(), Holder.class, "refs", "thing");

        @SuppressWarnings("unused") // accessed through REFS
        private volatile int refs = 1;

        @Override
        public String toString() {
            return "holder";
        }
    }

    private final Holder holder = new Holder();

    @Test
    void shouldStartAtOneAndCountRetainsAndReleases() {
        assertThat(Holder.REFS.get(holder)).isEqualTo(1);
        Holder.REFS.retain(holder);
        assertThat(Holder.REFS.tryRetain(holder)).isTrue();
        assertThat(Holder.REFS.get(holder)).isEqualTo(3);
        assertThat(Holder.REFS.release(holder)).isFalse();
        assertThat(Holder.REFS.release(holder)).isFalse();
        assertThat(Holder.REFS.release(holder)).as("the last release frees").isTrue();
        assertThat(Holder.REFS.get(holder)).isZero();
    }

    @Test
    void shouldNeverReviveAFreedHolder() {
        Holder.REFS.release(holder);
        assertThat(Holder.REFS.tryRetain(holder)).isFalse();
        assertThatThrownBy(() -> Holder.REFS.retain(holder))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("retain of a released thing: holder");
        assertThat(Holder.REFS.get(holder)).isZero();
    }

    @Test
    void shouldRefuseAReleaseWithoutAReferenceAndLeaveTheCountAtZero() {
        Holder.REFS.release(holder);
        assertThatThrownBy(() -> Holder.REFS.release(holder))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("release of an already released thing: holder");
        assertThat(Holder.REFS.get(holder)).isZero();
    }

    @Test
    void shouldRefuseToOverflow() {
        Holder h = new Holder();
        h.refs = Integer.MAX_VALUE;
        assertThatThrownBy(() -> Holder.REFS.tryRetain(h))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("overflow");
        assertThat(Holder.REFS.get(h)).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void shouldFailToBindAFieldThatIsNotThere() {
        assertThatThrownBy(() -> RefCount.of(MethodHandles.lookup(), Holder.class, "missing", "thing"))
                .isInstanceOf(ExceptionInInitializerError.class);
    }
}
