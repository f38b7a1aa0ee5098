/**
 * Prefill-to-decode KV push between servers (docs/pd-push.md): {@link io.pegaflow.push.PushEngine} (both roles of one
 * server), its settings {@link io.pegaflow.push.PushConfig}, counters {@link io.pegaflow.push.PushStats} and read-only
 * {@link io.pegaflow.push.view.PushView}.
 */
@NullMarked
package io.pegaflow.push;

import org.jspecify.annotations.NullMarked;
