package health

// Severity says how a notification is presented.
type Severity string

const (
	// Alert: the account needs the user (a challenge, an expired session).
	Alert Severity = "alert"
	// Informational: worth knowing, nothing to do (rate limited, connected).
	Informational Severity = "info"
	// Recovery: an issue cleared and the account is healthy again.
	Recovery Severity = "recovery"
)

// Notification is produced when an account's effective state or its
// normalised issue changes.
type Notification struct {
	AccountID string
	From, To  View
	Severity  Severity
	// Action is the user action of the new view (none on recovery).
	Action  Action
	Message string
}

// Transition compares two views of one account and returns the
// notification the change deserves, or ok false when neither the state nor
// the issue changed (a re-render, or the same issue reported again).
func Transition(from, to View) (n Notification, ok bool) {
	if from.State == to.State && from.Issue == to.Issue {
		return Notification{}, false
	}
	n = Notification{From: from, To: to, Action: to.Action}
	switch {
	case to.State == ActionRequired:
		n.Severity = Alert
		n.Message = to.Info.Title + ". " + to.Info.Remedy
	case to.State == Healthy && from.Issue != None:
		n.Severity = Recovery
		n.Message = "The account is healthy again."
	case to.State == Healthy:
		n.Severity = Informational
		n.Message = "The account is connected."
	case to.State == NotConnected:
		n.Severity = Informational
		n.Message = "The account is not connected. Connect it to resume listening."
	default: // degraded
		n.Severity = Informational
		n.Message = to.Info.Title + ". " + to.Info.Remedy
	}
	return n, true
}

// Notifier remembers the last view of each account it was shown and emits
// a notification only on a change. The zero value is ready to use. It
// holds no goroutines and does no I/O; it is not safe for concurrent use,
// as a client feeds it from one place (its store subscription).
type Notifier struct {
	last map[string]View
}

// Observe feeds the current stored health of an account. The first
// observation of an account is its baseline and emits nothing: the view
// already shows the state, and a reload must not replay old alerts.
func (n *Notifier) Observe(accountID string, connected bool, issue Issue) (Notification, bool) {
	v := Evaluate(connected, issue)
	if n.last == nil {
		n.last = make(map[string]View)
	}
	prev, seen := n.last[accountID]
	n.last[accountID] = v
	if !seen {
		return Notification{}, false
	}
	note, ok := Transition(prev, v)
	if !ok {
		return Notification{}, false
	}
	note.AccountID = accountID
	return note, true
}

// Forget drops an account, so a deleted and re-created id starts afresh.
func (n *Notifier) Forget(accountID string) {
	delete(n.last, accountID)
}
