// Package reconnecttest provides a fake reconnect.Clock for tests of the
// reconnect package and of its callers: time moves only when the test calls
// Advance, and the test can wait for code under test to arm a timer instead
// of sleeping.
package reconnecttest
