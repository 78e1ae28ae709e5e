// Package server is earshot's composition root: the settings of the
// operator contract (config.go), the secret key file (secret.go), the
// adapters those settings pick (adapters.go), the HTTP server with health
// and readiness (http.go), and what each command runs (wire.go): serve's
// services built top to bottom with app's plain constructors and its
// background loops, the first-start print, the admin console (the same
// services over the database) and the mock. fx runs the lifecycle and
// validates the wiring; it restates none of app's Deps. It is the one
// package that imports both app and the adapters; cmd/earshot only parses
// a command line and runs what this package builds. Keeping it out of app
// means that embedding app pulls in no adapter, driver or broker client.
package server
