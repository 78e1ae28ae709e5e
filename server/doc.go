// Package server is earshot's composition root: the settings of the
// operator contract, the secret key file, the fx modules that pick
// adapters from those settings and bind them to the ports app needs, the
// HTTP server with health and readiness, the first-start print, the admin
// console and the mock's wiring. It is the one package that imports both
// app and the adapters; cmd/earshot only parses a command line and runs
// what this package builds. Keeping it out of app means that embedding app
// pulls in no adapter, driver or broker client.
package server
