/**
 * The metaserver's admin API ({@code /api/admin/info}, {@code /api/admin/cluster}; docs/admin-api.md) for the cluster
 * page of the dashboard (pega-admin-ui, served at {@code /}): reads only, node ids only as fingerprints.
 */
@NullMarked
package io.pegaflow.metaserver.admin;

import org.jspecify.annotations.NullMarked;
