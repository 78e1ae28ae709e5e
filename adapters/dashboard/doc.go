// Package dashboard is the owners' web interface, served under /app/ by
// `earshot serve`: server-rendered pages from html/template, our own CSS
// and a little JavaScript, all embedded, driving the same app services as
// the public API.
//
// The layout follows miniflux's ui package: one list of routes (routes.go)
// that says which need no session, one small handler per action, and
// forms read in one place (form.go). Every answer carries a strict
// Content-Security-Policy with no inline script; state-changing requests
// from another origin are refused before any handler runs.
package dashboard
