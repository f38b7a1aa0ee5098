/**
 * The shared-memory objects between a worker and its server used by pushing: the layer-ready signal.
 */
@NullMarked
package io.pegaflow.push.signal;

import org.jspecify.annotations.NullMarked;
