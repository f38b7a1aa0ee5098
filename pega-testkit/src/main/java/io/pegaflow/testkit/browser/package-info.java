/**
 * Browser tests of the admin dashboard: Debian's {@code chromium} and {@code chromium-driver} driven headless through
 * Selenium, with screenshots and a check that a page asked no other host for anything. Selenium is an optional
 * dependency of the testkit: a module that uses this package declares it (test scope).
 */
@NullMarked
package io.pegaflow.testkit.browser;

import org.jspecify.annotations.NullMarked;
