// Package httpstatus is the one table from an error kind of core to the
// HTTP status that answers it, for every HTTP edge of the server: the
// public API and the helper endpoints (adapters/httpapi) and the
// dashboard (adapters/dashboard). It sits outside adapters/ because
// adapters never import each other; it imports only core.
package httpstatus

import (
	"net/http"

	"github.com/earshothq/earshot/core"
)

// statuses maps every kind core defines to its status; core appends
// kinds, and the tests fail until each new one has its status here.
var statuses = map[core.Kind]int{
	core.KindInternal:        http.StatusInternalServerError,
	core.KindInvalid:         http.StatusBadRequest,
	core.KindInvalidRequest:  http.StatusBadRequest,
	core.KindInvalidJSON:     http.StatusBadRequest,
	core.KindUnauthorized:    http.StatusUnauthorized,
	core.KindForbidden:       http.StatusForbidden,
	core.KindPlanLimit:       http.StatusForbidden,
	core.KindNotFound:        http.StatusNotFound,
	core.KindConflict:        http.StatusConflict,
	core.KindPayloadTooLarge: http.StatusRequestEntityTooLarge,
	core.KindRateLimited:     http.StatusTooManyRequests,
	core.KindUnavailable:     http.StatusServiceUnavailable,
}

// Of returns the HTTP status of err's kind (core.KindOf): 500 for an
// error that carries no kind, and for nil.
func Of(err error) int {
	if s, ok := statuses[core.KindOf(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}
