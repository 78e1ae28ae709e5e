package health

import (
	"errors"
	"testing"

	"github.com/earshothq/earshot/core"
)

func TestEvaluate(t *testing.T) {
	tests := []struct {
		connected bool
		issue     Issue
		state     State
		action    Action
		requires  bool
	}{
		{false, None, NotConnected, Connect, true},
		{true, None, Healthy, NoAction, false},
		{true, Checkpointed, ActionRequired, OpenChallenge, true},
		{true, ChallengeInterstitial, ActionRequired, OpenChallenge, true},
		{true, CaptchaHTML, ActionRequired, OpenChallenge, true},
		{true, RateLimited, Degraded, Wait, false},
		{true, NetworkError, Degraded, Wait, false},
		{true, Unknown, Degraded, NoAction, false},
		{true, SessionExpired, ActionRequired, Reconnect, true},
		{true, LoggedOut, ActionRequired, LoginInBrowser, true},
		{true, AccountLocked, ActionRequired, LoginInBrowser, true},
		{true, AccountDisabled, ActionRequired, Appeal, true},
		{true, IPBlocked, ActionRequired, UseProxy, true},
		{true, ProxyBlocked, ActionRequired, UseProxy, true},
		{true, GroupRemoved, ActionRequired, Rejoin, true},
		{true, NotMember, ActionRequired, Rejoin, true},
		// A challenge met while verifying a new session still offers the challenge.
		{false, Checkpointed, ActionRequired, OpenChallenge, true},
		{false, SessionExpired, ActionRequired, Reconnect, true},
		// Waiting does not connect an account.
		{false, RateLimited, NotConnected, Connect, true},
		// Loose spellings are normalised before mapping.
		{true, "Checkpoint", ActionRequired, OpenChallenge, true},
		{true, "null", Healthy, NoAction, false},
		{true, "brand new failure", Degraded, NoAction, false},
	}
	for _, tt := range tests {
		v := Evaluate(tt.connected, tt.issue)
		if v.State != tt.state || v.Action != tt.action || v.RequiresAction != tt.requires {
			t.Errorf("Evaluate(%v, %q) = %s/%s/%v, want %s/%s/%v",
				tt.connected, tt.issue, v.State, v.Action, v.RequiresAction, tt.state, tt.action, tt.requires)
		}
		if (v.Info == nil) != (v.Issue == None) {
			t.Errorf("Evaluate(%v, %q): info %v for issue %q", tt.connected, tt.issue, v.Info, v.Issue)
		}
	}
}

func TestEvaluateCoversVocabulary(t *testing.T) {
	for _, is := range Issues {
		v := Evaluate(true, is)
		if v.State == Healthy || v.State == NotConnected || v.Action == "" || v.Info == nil {
			t.Errorf("%s: view %+v", is, v)
		}
		if v.RequiresAction != (v.State == ActionRequired) {
			t.Errorf("%s: requiresAction %v with state %s", is, v.RequiresAction, v.State)
		}
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		issue Issue
		want  Issue
		err   bool
	}{
		{Checkpointed, None, false},
		{ChallengeInterstitial, None, false},
		{CaptchaHTML, None, false},
		{"checkpoint", None, false},
		{None, None, true},
		{RateLimited, RateLimited, true},
		{SessionExpired, SessionExpired, true},
		{AccountLocked, AccountLocked, true},
		{Unknown, Unknown, true},
	}
	for _, tt := range tests {
		got, err := Resolve(tt.issue)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("Resolve(%q) = %q, %v", tt.issue, got, err)
		}
		if err != nil {
			if !errors.Is(err, ErrNotResolvable) || !core.IsKind(err, core.KindConflict) {
				t.Errorf("Resolve(%q) error %v is not a conflict", tt.issue, err)
			}
			if core.Message(err) != "No resolvable challenge on this account" {
				t.Errorf("message %q", core.Message(err))
			}
		}
	}
}
