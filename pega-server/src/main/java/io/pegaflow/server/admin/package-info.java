/**
 * The admin API ({@code /api/admin/*}, docs/admin-api.md) the dashboard of pega-admin-ui reads: JSON documents built
 * from the subsystems' read-only views (the engine's counters and summaries, the SSD tier's view and shard status, the
 * transfer engine's {@code TransferView}, the metaserver client's link), never from their internals. Every endpoint
 * is a read; the dashboard's actions use the operations endpoints and their admin rule.
 */
@NullMarked
package io.pegaflow.server.admin;

import org.jspecify.annotations.NullMarked;
