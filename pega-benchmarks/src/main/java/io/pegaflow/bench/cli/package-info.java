/**
 * The benchmarks' command lines ({@link io.pegaflow.bench.cli.CommandLines}): one way to parse options, to answer
 * {@code --help} and bad options, and one duration syntax, for every tool in this module.
 */
@NullMarked
package io.pegaflow.bench.cli;

import org.jspecify.annotations.NullMarked;
