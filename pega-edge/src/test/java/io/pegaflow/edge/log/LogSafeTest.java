package io.pegaflow.edge.log;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class LogSafeTest {

    @Test
    void shouldPassPrintableTextThroughAsTheSameString() {
        String id = "vllm-instance-0:tp 3/8 ünïcödé \\n stays";
        assertThat(LogSafe.of(id)).isSameAs(id);
    }

    @Test
    void shouldEscapeLineBreaksAndEveryOtherControl() {
        assertThat(LogSafe.of("a\nb\rc\td")).isEqualTo("a\\nb\\rc\\td");
        assertThat(LogSafe.of("nul\0del\u007fnel\u0085esc\u001b[31m"))
                .isEqualTo("nul\\u0000del\\u007fnel\\u0085esc\\u001b[31m");
        assertThat(LogSafe.of("ls\u2028ps\u2029rlo\u202eisolate\u2066"))
                .isEqualTo("ls\\u2028ps\\u2029rlo\\u202eisolate\\u2066");
    }

    @Test
    void shouldBoundALongValueAndSayHowMuchWasLeftOut() {
        String huge = "n".repeat(LogSafe.MAX_CHARS + 10);
        assertThat(LogSafe.of(huge)).isEqualTo("n".repeat(LogSafe.MAX_CHARS) + "...(10 more chars)");
    }

    @Test
    void shouldPrintNullAsNull() {
        assertThat(LogSafe.of(null)).isEqualTo("null");
    }
}
