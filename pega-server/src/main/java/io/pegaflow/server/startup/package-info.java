/**
 * What runs before anything costly and once the server is ready: the unknown-key check, the preflight (backend, pool
 * against host memory, ports, metaserver addresses, SSD space), the one-line failure analysis and report, the ready
 * summary and the last shutdown line. Null-marked: types are non-null unless written {@code @Nullable}
 * (docs/java-quality.md, NullAway).
 */
@NullMarked
package io.pegaflow.server.startup;

import org.jspecify.annotations.NullMarked;
