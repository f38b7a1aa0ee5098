package io.pegaflow.core.instance;

/**
 * The four wire generations of the pegaflow-llm connector (upstream {@code novitalabs/pegaflow}, tags {@code v0.22.4}
 * to {@code v0.23.12}). Save, Load and Query carry no version, so an instance's generation, fixed by its first
 * registration, is what says how its later requests read.
 *
 * <ul>
 *   <li>{@link #G0} v0.22.4 and 0.22.5: no {@code client_version}, sends {@code num_layers}, legacy Load.
 *   <li>{@link #G1} 0.22.6 to 0.22.8: sends its version and still {@code num_layers}; legacy Load.
 *   <li>{@link #G2} 0.22.9 to 0.23.6: no {@code num_layers}, so the layer space is sealed once {@code world_size}
 *       workers registered; legacy Load.
 *   <li>{@link #G3} 0.23.7 and later: as G2, and Load names layer groups and per-group, possibly absent, targets.
 * </ul>
 */
public enum ConnectorGeneration {
    G0("v0.22.4-0.22.5"),
    G1("0.22.6-0.22.8"),
    G2("0.22.9-0.23.6"),
    G3("0.23.7+");

    private final String versions;

    ConnectorGeneration(String versions) {
        this.versions = versions;
    }

    /** The connector versions of this generation, for messages and the admin surface. */
    public String versions() {
        return versions;
    }

    /**
     * Whether the connector declares the instance's layer count ({@code num_layers}); without it the layer space is
     * the union of what {@code world_size} workers registered.
     */
    public boolean declaresLayerCount() {
        return this == G0 || this == G1;
    }

    /** Whether Load carries layer groups and per-group targets (upstream #421) instead of names and block ids. */
    public boolean groupedLoad() {
        return this == G3;
    }
}
