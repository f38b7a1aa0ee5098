package io.pegaflow.edge.access;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class CrossSiteRuleTest {

    @Test
    void shouldCompareOriginWithHostSchemeAside() {
        assertThat(CrossSiteRule.sameOrigin("http://127.0.0.1:9091", "127.0.0.1:9091"))
                .isTrue();
        assertThat(CrossSiteRule.sameOrigin("https://pega.example", "pega.example"))
                .isTrue();
        assertThat(CrossSiteRule.sameOrigin("http://PEGA.example:80", "pega.example"))
                .isTrue();
        assertThat(CrossSiteRule.sameOrigin("http://[::1]:9091", "[::1]:9091")).isTrue();
        assertThat(CrossSiteRule.sameOrigin("http://localhost:8099", "localhost:9091"))
                .isFalse();
        assertThat(CrossSiteRule.sameOrigin("http://evil.example", "pega.example"))
                .isFalse();
        assertThat(CrossSiteRule.sameOrigin("null", "pega.example")).isFalse();
        assertThat(CrossSiteRule.sameOrigin("http://pega.example:8080", "pega.example"))
                .isFalse();
    }

    @Test
    void shouldNotTakeABasicAuthorizationAsNonSimple() {
        // a browser attaches cached Basic credentials to a cross-site form post by itself; never a Bearer token
        assertThat(CrossSiteRule.judge("POST", "h", null, null, null, null, "Basic dTpw"))
                .extracting(CrossSiteRule.Refusal::kind)
                .isEqualTo("marker");
        assertThat(CrossSiteRule.judge("POST", "h", null, null, null, null, "Bearer t0ken"))
                .isNull();
    }

    @Test
    void shouldRefuseTheFormContentTypes() {
        for (String type :
                List.of("text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded")) {
            assertThat(CrossSiteRule.judge("POST", "h", null, null, type, null, null))
                    .isNotNull();
        }
    }

    @Test
    void shouldAllowEveryHostWithStar() {
        assertThat(new HostAllowList(List.of("*"), null).permits("anything.example"))
                .isTrue();
        HostAllowList list = new HostAllowList(List.of("Pega.Internal."), "pega-0.svc");
        assertThat(list.permits("pega.internal:9091")).isTrue();
        assertThat(list.permits("PEGA-0.svc")).isTrue();
        assertThat(list.permits("pega.internal.evil.example")).isFalse();
        assertThat(list.permits(null)).isTrue();
    }
}
