package io.pegaflow.core.engine;

import java.util.List;

/** Result of the operator's instance cleanup: the instances removed and the layer mappings dropped with them. */
public record CleanupResult(List<String> removedInstances, int removedTensors) {}
