package io.pegaflow.core.device.cuda;

import com.jayway.jsonpath.JsonPath;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Reads the pickles captured from torch on an H200 ({@code gpu-tests/capture_pickles.py}) and the hostile pickles
 * made by {@code pickles/hostile/make_hostile.py}, from the test classpath.
 */
final class PickleResources {
    static final String[] HOSTILE = {
        "os_system_p2",
        "os_system_p4",
        "os_system_p5",
        "builtins_eval_p2",
        "builtins_eval_p4",
        "builtins_eval_p5",
        "builtins_exec_p4",
        "subprocess_popen_p4",
        "getattr_p4",
        "protocol0_os_system",
        "protocol1_list",
        "wrong_module_p4",
        "payload_in_dtype_p4",
        "torch_load_p4",
        "list_shape_p4"
    };

    private PickleResources() {}

    static byte[] bytes(String resource) {
        try (InputStream in = PickleResources.class.getResourceAsStream("/pickles/" + resource)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource pickles/" + resource);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] pickle(String name) {
        return bytes(name + ".pkl");
    }

    static byte[] hostile(String name) {
        return bytes("hostile/" + name + ".pkl");
    }

    /** The manifest entries: name, protocol, file, length and {@code expect} (null for the expandable one). */
    static List<Map<String, Object>> manifest() {
        String json = new String(bytes("manifest.json"), StandardCharsets.UTF_8);
        return JsonPath.parse(json).read("$.entries");
    }

    static Map<String, Object> entry(String name) {
        return manifest().stream()
                .filter(e -> e.get("name").equals(name))
                .findFirst()
                .orElseThrow();
    }
}
