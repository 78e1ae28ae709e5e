// Package httpapi is the public JSON API under /api/v1: go-kit endpoints
// and HTTP transports in front of the application's services. Everything
// the spec says about the edge lives here: bearer keys, scopes, the rate
// limit and its headers, the 4 KB body limit, the {data} envelope and the
// {error: {code, message}} body, with one table from error kind to status.
package httpapi
