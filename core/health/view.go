package health

import "github.com/earshothq/earshot/core"

// State is what the dashboard shows for an account.
type State string

const (
	NotConnected   State = "not_connected"   // no verified session: show the connect action
	Healthy        State = "healthy"         // normal status
	Degraded       State = "degraded"        // a transient issue; shown, nothing to do
	ActionRequired State = "action_required" // an issue with a remedy and an action button
)

// Action is the one concrete thing the dashboard offers for an account.
type Action string

// The actions. Which issue calls for which is the table Describe reads
// (Info.Action); Evaluate picks Connect for an account never connected
// and NoAction for a healthy one.
const (
	Connect        Action = "connect"
	Reconnect      Action = "reconnect"
	Wait           Action = "wait"
	UseProxy       Action = "use_proxy"
	OpenChallenge  Action = "open_challenge"
	LoginInBrowser Action = "login_in_browser"
	Appeal         Action = "appeal"
	Rejoin         Action = "rejoin"
	NoAction       Action = "none"
)

// View is the account view model without the record itself: the state, the
// issue info (nil when the account has no issue), the action and whether
// the user must act.
type View struct {
	State          State
	Issue          Issue
	Info           *Info
	Action         Action
	RequiresAction bool
}

// Evaluate maps an account's stored health to its view. connected is true
// when the record has a connectedAt; issue is its lastIssue, normalised
// with ParseIssue first so a loose spelling cannot read as healthy.
//
// An issue that needs the user (a challenge, an expired session, ...)
// wins over a missing connection, because its remedy is the way to a
// connection: a checkpoint met while verifying a new session must still
// offer open_challenge. A transient issue on an account that is not
// connected yet shows not_connected, since waiting would not connect it.
// requiresAction is true exactly for not_connected and action_required.
func Evaluate(connected bool, issue Issue) View {
	issue = ParseIssue(string(issue))
	info, has := Describe(issue)
	v := View{Issue: issue}
	if has {
		v.Info = &info
	}
	switch {
	case has && info.State == ActionRequired:
		v.State, v.Action = ActionRequired, info.Action
	case !connected:
		v.State, v.Action = NotConnected, Connect
	case has:
		v.State, v.Action = info.State, info.Action
	default:
		v.State, v.Action = Healthy, NoAction
	}
	v.RequiresAction = v.State == ActionRequired || v.State == NotConnected
	return v
}

// ErrNotResolvable is returned by Resolve for an account whose issue is not
// one of the three challenges; its message is the one the resolve route
// answers with 409.
var ErrNotResolvable = core.Errorf(core.KindConflict, "No resolvable challenge on this account")

// Resolve applies the resolve rule to an account's lastIssue: a challenge
// issue (checkpointed, challenge_interstitial, captcha_html) that a human
// has completed becomes None; anything else, a healthy account included,
// is left alone and gives ErrNotResolvable. The caller also clears the
// raw signal and retry time, stamps lastCheckedAt and fills a missing
// connectedAt.
func Resolve(issue Issue) (Issue, error) {
	if !ParseIssue(string(issue)).Resolvable() {
		return issue, ErrNotResolvable
	}
	return None, nil
}
