package legacymock

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
)

// account is a connection record (spec section 2).
type account struct {
	ID            string     `json:"id"`
	Platform      string     `json:"platform"`
	Label         string     `json:"label"`
	ConnectedAt   *string    `json:"connectedAt"`
	LastIssue     *string    `json:"lastIssue"`
	RawSignal     *rawSignal `json:"rawSignal"`
	LastCheckedAt *string    `json:"lastCheckedAt"`
	RetryAfter    *string    `json:"retryAfter"`
}

// rawSignal is the platform's error code and subcode behind lastIssue.
type rawSignal struct {
	Code    int `json:"code"`
	Subcode int `json:"subcode"`
}

// defaultAccountID is the seeded personal facebook account, used by
// listings when no account is given.
const defaultAccountID = "account-1714557600000-p4k9zq"

var errPlatform = core.Errorf(core.KindInvalid, "platform must be facebook, x, or reddit")

var errAccountNotFound = core.Errorf(core.KindNotFound, "Account not found")

func parsePlatform(s string) (core.Platform, error) {
	p := core.Platform(s)
	if !p.Valid() {
		return "", errPlatform
	}
	return p, nil
}

// platformLabel is the label a new account gets: the platform's name.
func platformLabel(p core.Platform) string {
	switch p {
	case core.Facebook:
		return "Facebook"
	case core.X:
		return "X"
	default:
		return "Reddit"
	}
}

func (st *state) findAccount(id string) *account {
	for i := range st.Accounts {
		if st.Accounts[i].ID == id {
			return &st.Accounts[i]
		}
	}
	return nil
}

// legacyDefaultLabels are the labels older dashboards sent for "my own
// facebook account" before accounts had ids.
var legacyDefaultLabels = map[string]bool{"personal": true, "default": true, "me": true, "personal-facebook": true, "facebook-personal": true}

// facebookAccount resolves a reference to a facebook account: an id, a
// label (case-insensitive), a legacy default label, or "" for the default
// personal account (the seeded one while it exists, else the first
// facebook account).
func (st *state) facebookAccount(ref string) (*account, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" || legacyDefaultLabels[strings.ToLower(ref)] {
		if a := st.findAccount(defaultAccountID); a != nil && a.Platform == string(core.Facebook) {
			return a, nil
		}
		for i := range st.Accounts {
			if st.Accounts[i].Platform == string(core.Facebook) {
				return &st.Accounts[i], nil
			}
		}
		return nil, core.Errorf(core.KindInvalid, "No facebook account yet: connect one with POST /accounts")
	}
	if a := st.findAccount(ref); a != nil {
		if a.Platform != string(core.Facebook) {
			return nil, core.Errorf(core.KindInvalid, "accountId %s is a %s account; a facebook account is needed", ref, a.Platform)
		}
		return a, nil
	}
	for i := range st.Accounts {
		if st.Accounts[i].Platform == string(core.Facebook) && strings.EqualFold(st.Accounts[i].Label, ref) {
			return &st.Accounts[i], nil
		}
	}
	return nil, core.Errorf(core.KindInvalid, "accountId %s does not match any facebook account", ref)
}

func (s *Server) listAccounts(context.Context, any) (any, error) {
	return s.store.read(func(st *state) (result, error) {
		return ok(map[string]any{"accounts": st.Accounts}), nil
	})
}

type createAccountRequest struct {
	Platform string `json:"platform"`
}

var decodeCreateAccount = decodeBody[createAccountRequest]

func (s *Server) createAccount(_ context.Context, request any) (any, error) {
	req := request.(createAccountRequest)
	p, err := parsePlatform(req.Platform)
	if err != nil {
		return nil, err
	}
	return s.store.write(func(st *state) (result, error) {
		a := account{ID: s.store.newID("account"), Platform: string(p), Label: platformLabel(p)}
		st.Accounts = append(st.Accounts, a)
		return created(map[string]any{"account": a, "accounts": st.Accounts}), nil
	})
}

// updateAccountRequest is a partial account; id is taken from the path and
// any id in the body is ignored.
type updateAccountRequest struct {
	pathID
	Platform      optional[string]          `json:"platform"`
	Label         optional[string]          `json:"label"`
	ConnectedAt   optional[string]          `json:"connectedAt"`
	LastIssue     optional[string]          `json:"lastIssue"`
	RawSignal     optional[rawSignal]       `json:"rawSignal"`
	LastCheckedAt optional[string]          `json:"lastCheckedAt"`
	RetryAfter    optional[json.RawMessage] `json:"retryAfter"`
}

var decodeUpdateAccount = decodeBodyAt[updateAccountRequest]("accountId", false)

func (s *Server) updateAccount(_ context.Context, request any) (any, error) {
	req := request.(updateAccountRequest)
	return s.store.write(func(st *state) (result, error) {
		a := st.findAccount(req.id)
		if a == nil {
			return result{}, errAccountNotFound
		}
		next := *a
		if err := s.mergeAccount(&next, req); err != nil {
			return result{}, err
		}
		*a = next
		return ok(map[string]any{"accounts": st.Accounts}), nil
	})
}

// mergeAccount applies a PATCH body over a record. The detector's write
// path is simulated here: a lastIssue is normalised with core/health, a
// rawSignal alone is classified into a lastIssue, and a new lastIssue
// stamps lastCheckedAt unless the body gives one.
func (s *Server) mergeAccount(a *account, req updateAccountRequest) error {
	if req.Platform.Set {
		p, err := parsePlatform(req.Platform.Value)
		if err != nil || req.Platform.Null {
			return errPlatform
		}
		a.Platform = string(p)
	}
	if req.Label.Set {
		label := strings.TrimSpace(req.Label.Value)
		if req.Label.Null || label == "" {
			return core.Errorf(core.KindInvalid, "label must be a non-empty string")
		}
		a.Label = label
	}
	var err error
	if a.ConnectedAt, err = optionalTime("connectedAt", req.ConnectedAt, a.ConnectedAt); err != nil {
		return err
	}
	if a.LastCheckedAt, err = optionalTime("lastCheckedAt", req.LastCheckedAt, a.LastCheckedAt); err != nil {
		return err
	}
	if req.RawSignal.Set {
		a.RawSignal = nil
		if !req.RawSignal.Null {
			sig := req.RawSignal.Value
			a.RawSignal = &sig
		}
	}
	issueChanged := false
	switch {
	case req.LastIssue.Set:
		a.LastIssue = issuePtr(health.None)
		if !req.LastIssue.Null {
			a.LastIssue = issuePtr(health.ParseIssue(req.LastIssue.Value))
		}
		issueChanged = true
	case req.RawSignal.Set && a.RawSignal != nil:
		is := health.Classify(health.Signal{Platform: core.Platform(a.Platform), Code: a.RawSignal.Code, Subcode: a.RawSignal.Subcode})
		// As on the detector's path (health.Record.Apply), a stored
		// challenge stays until the resolve route clears it: a later
		// signal of another kind does not replace it.
		challenged := a.LastIssue != nil && health.ParseIssue(*a.LastIssue).Resolvable()
		if is != health.None && (!challenged || is.Resolvable()) {
			a.LastIssue = issuePtr(is)
			issueChanged = true
		}
	}
	if issueChanged && !req.LastCheckedAt.Set {
		now := s.store.stamp()
		a.LastCheckedAt = &now
	}
	if req.RetryAfter.Set {
		ra, err := s.retryAfter(req.RetryAfter)
		if err != nil {
			return err
		}
		a.RetryAfter = ra
	}
	return nil
}

func issuePtr(is health.Issue) *string {
	if is == health.None {
		return nil
	}
	s := string(is)
	return &s
}

// optionalTime applies a nullable timestamp field: absent keeps cur, null
// clears, a string must be RFC 3339 and is stored in the mock's format.
func optionalTime(field string, o optional[string], cur *string) (*string, error) {
	switch {
	case !o.Set:
		return cur, nil
	case o.Null:
		return nil, nil
	}
	ts, valid := parseStamp(o.Value)
	if !valid {
		return nil, core.Errorf(core.KindInvalid, "%s must be an RFC 3339 timestamp or null", field)
	}
	return &ts, nil
}

// parseStamp reads an RFC 3339 time into the mock's format. A time whose
// offset carries it past year 9999 (or before year 0) in UTC is refused:
// stored, it would no longer be RFC 3339, and a client sending the
// record back would be refused.
func parseStamp(s string) (string, bool) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return "", false
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return "", false
	}
	return timestamp(t), true
}

// retryAfter reads a retryAfter value: null, a number of seconds from now,
// or an RFC 3339 timestamp. It is always stored as a timestamp, so a client
// reading it later needs no reference time.
func (s *Server) retryAfter(o optional[json.RawMessage]) (*string, error) {
	if o.Null {
		return nil, nil
	}
	bad := core.Errorf(core.KindInvalid, "retryAfter must be null, a number of seconds or an RFC 3339 timestamp")
	var secs float64
	if err := json.Unmarshal(o.Value, &secs); err == nil {
		if secs < 0 || secs > 366*24*3600 || math.IsNaN(secs) {
			return nil, bad
		}
		ts := timestamp(s.store.now().Add(time.Duration(secs * float64(time.Second))))
		return &ts, nil
	}
	var str string
	if err := json.Unmarshal(o.Value, &str); err != nil {
		return nil, bad
	}
	ts, valid := parseStamp(str)
	if !valid {
		return nil, bad
	}
	return &ts, nil
}

// decodeAccountID is shared by the routes whose only input is the
// account id in the path.
var decodeAccountID = decodePath("accountId")

var decodeDeleteAccount = decodeAccountID

// decodeResolveAccount refuses callers that present an API key: the route
// belongs to the dashboard session, and the spec says keys never call it.
func decodeResolveAccount(ctx context.Context, r *http.Request) (any, error) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	if r.Header.Get("X-API-Key") != "" || strings.HasPrefix(strings.ToLower(auth), "bearer ") {
		return nil, core.Errorf(core.KindForbidden, "Resolving a challenge is for the dashboard session; API keys cannot call this route")
	}
	return decodeAccountID(ctx, r)
}

func (s *Server) deleteAccount(_ context.Context, request any) (any, error) {
	id := request.(string)
	return s.store.write(func(st *state) (result, error) {
		for i := range st.Accounts {
			if st.Accounts[i].ID == id {
				st.Accounts = append(st.Accounts[:i], st.Accounts[i+1:]...)
				// Community join relations of the account are dropped by
				// prune on the next read.
				return ok(map[string]any{"accounts": st.Accounts}), nil
			}
		}
		return result{}, errAccountNotFound
	})
}

// resolveAccount is the dashboard's "mark resolved" after a human solved a
// challenge. Only the challenge issues resolve (core/health's rule).
func (s *Server) resolveAccount(_ context.Context, request any) (any, error) {
	id := request.(string)
	return s.store.write(func(st *state) (result, error) {
		a := st.findAccount(id)
		if a == nil {
			return result{}, errAccountNotFound
		}
		cur := health.None
		if a.LastIssue != nil {
			cur = health.Issue(*a.LastIssue)
		}
		if _, err := health.Resolve(cur); err != nil {
			return result{}, err
		}
		now := s.store.stamp()
		a.LastIssue, a.RawSignal, a.RetryAfter = nil, nil, nil
		a.LastCheckedAt = &now
		if a.ConnectedAt == nil {
			a.ConnectedAt = &now
		}
		return ok(map[string]any{"account": *a, "accounts": st.Accounts}), nil
	})
}
