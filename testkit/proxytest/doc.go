// Package proxytest holds the proxies of an operator, to run in tests: a
// socks5 server (RFC 1928, with RFC 1929's username and password when a
// client offers them) and an HTTP proxy (CONNECT tunnels and requests in
// absolute form). Each listens on 127.0.0.1, joins every connection to
// one target whatever the host asked for, as the operator's proxy joins
// it to the platform, records what each client asked for, and stops with
// the test.
//
// A test that wants to know the moment a client asks waits on Wake and
// reads the asks again.
package proxytest
