package httpapi

import (
	"context"
	"net/http"
	"time"

	httptransport "github.com/go-kit/kit/transport/http"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
)

// maxAccountStatusBody bounds a POST /account-status body: the answer's
// body is cut by the helper to its start (health.MaxSignalBody), and the
// rest of the report is a few numbers.
const maxAccountStatusBody = 16 << 10

// AccountStatusService records what a platform answered on an owner's
// behalf. app.AccountHealth is one.
type AccountStatusService interface {
	Report(ctx context.Context, ownerID string, s health.Signal) (health.Status, error)
}

// HandleAccountStatus serves POST /account-status on the helper's
// endpoints with svc: the ingest key names the owner, the body is the
// platform's answer, and the reply is the account's view.
func (h *Helper) HandleAccountStatus(svc AccountStatusService) {
	e := func(ctx context.Context, req any) (any, error) {
		st, err := svc.Report(ctx, keyFrom(ctx).OwnerID, req.(health.Signal))
		if err != nil {
			return nil, err
		}
		return response{body: AccountView(st)}, nil
	}
	// Bounded like every helper route with a body, so the memory reports
	// hold does not grow with the connections.
	h.handle("POST", "/account-status", h.bounded(httptransport.NewServer(e, decodeAccountStatus, encodeResponse,
		httptransport.ServerErrorEncoder(h.api.encodeError))))
}

// AccountViewJSON is an account's view on the wire.
type AccountViewJSON struct {
	AccountID      *string `json:"accountId"`
	Platform       string  `json:"platform"`
	State          string  `json:"state"`
	Issue          *string `json:"issue"`
	Action         string  `json:"action"`
	RequiresAction bool    `json:"requiresAction"`
	// RetryAfter is the account's retryAfter as seconds from the report,
	// left out when there is none: the wait the service decided (the
	// platform's, or 15 minutes for a rate limit that named none), which
	// the helper follows rather than keep its own copy of the rule. In
	// seconds from the report, as the report's own retryAfter, so the
	// helper's clock need not agree with the server's.
	RetryAfter *int `json:"retryAfter,omitempty"`
}

// AccountView renders a status as the helper endpoint answers it: issue
// is the issue's name or null, accountId null for a platform with no
// account, retryAfter left out when the account waits for nothing.
func AccountView(st health.Status) AccountViewJSON {
	v := AccountViewJSON{Platform: string(st.Platform), State: string(st.State), Action: string(st.Action), RequiresAction: st.RequiresAction}
	if !st.RetryAfter.IsZero() && st.RetryAfter.After(st.LastCheckedAt) {
		// Rounded up: a wait cut short would ask the platform too soon.
		secs := int((st.RetryAfter.Sub(st.LastCheckedAt) + time.Second - 1) / time.Second)
		v.RetryAfter = &secs
	}
	if st.AccountID != "" {
		id := st.AccountID
		v.AccountID = &id
	}
	if st.View.Issue != health.None {
		is := string(st.View.Issue)
		v.Issue = &is
	}
	return v
}

// accountStatusJSON is the body on the wire. Every field but platform
// may be left out; the service checks what the values mean.
type accountStatusJSON struct {
	Platform   *string `json:"platform"`
	Status     int     `json:"status"`
	Code       int     `json:"code"`
	Subcode    int     `json:"subcode"`
	Location   string  `json:"location"`
	Body       string  `json:"body"`
	NoResponse bool    `json:"noResponse"`
	ViaProxy   bool    `json:"viaProxy"`
	// RetryAfter is the wait the platform named, in seconds.
	RetryAfter int `json:"retryAfter"`
}

// decodeAccountStatus reads one JSON object of at most
// maxAccountStatusBody bytes with the public API's rules: malformed JSON
// is invalid_json, a wrong type or an unknown field invalid_parameter
// naming it, a larger body payload_too_large.
func decodeAccountStatus(_ context.Context, r *http.Request) (any, error) {
	var req accountStatusJSON
	if err := decodeJSON(r, &req, maxAccountStatusBody); err != nil {
		return nil, err
	}
	if req.Platform == nil {
		return nil, core.Errorf(core.KindInvalid, "platform is required: facebook, x or reddit")
	}
	p, err := core.ParsePlatform("platform", *req.Platform)
	if err != nil {
		return nil, err
	}
	// Bounded before the conversion, so that a count of seconds too large
	// for a duration stays past the service's bound (a day) rather than
	// wrap round to a short wait or a negative one.
	retryAfter := time.Duration(min(req.RetryAfter, int(health.MaxRetryAfter/time.Second)+1)) * time.Second
	return health.Signal{Platform: p, Status: req.Status, Code: req.Code, Subcode: req.Subcode, Location: req.Location,
		Body: req.Body, NoResponse: req.NoResponse, ViaProxy: req.ViaProxy, RetryAfter: retryAfter}, nil
}
