package io.pegaflow.kernel;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Lets one member use an API that {@code config/quality/forbidden-baseline.txt} or {@code forbidden-apps.txt} bans
 * (forbidden-apis honours any annotation of this simple name). Every use carries a comment saying why it is the one
 * allowed place.
 */
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.CONSTRUCTOR, ElementType.METHOD, ElementType.FIELD, ElementType.TYPE})
public @interface SuppressForbidden {}
