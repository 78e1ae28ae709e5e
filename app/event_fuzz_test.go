package app

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/earshothq/earshot/ports"
)

// FuzzMatchEvent hands the scoring service any message of the
// new-matches topic, as the bus delivers it from the broker (the seeds:
// what announce publishes, MatchEvent's JSON, and hostile variants),
// and checks what Handle promises: it never fails (a malformed event is
// acknowledged, not redelivered without end), and it wakes the sweep
// exactly when the event names a match.
func FuzzMatchEvent(f *testing.F) {
	ev, _ := json.Marshal(MatchEvent{OwnerID: "o_1", MatchID: "m_1", MatchIDs: []string{"m_1", "m_2"}})
	f.Add(ev)
	f.Add([]byte(`{"matchId":""}`))
	f.Add([]byte(`{"matchId":5}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"matchId":"m","matchIds":[` + "1," + `2]}`))
	f.Add([]byte("\xff"))
	s := NewScoring(ScoringDeps{Log: quiet}, ScoringConfig{})
	f.Fuzz(func(t *testing.T, payload []byte) {
		// One event at a time: the wake channel holds one.
		select {
		case <-s.wake:
		default:
		}
		if err := s.Handle(context.Background(), ports.Event{Topic: TopicMatchStored, Key: "k", Payload: payload}); err != nil {
			t.Fatalf("Handle: %v", err)
		}
		var e MatchEvent
		names := json.Unmarshal(payload, &e) == nil && e.MatchID != ""
		select {
		case <-s.wake:
			if !names {
				t.Errorf("woken by %q, which names no match", payload)
			}
		default:
			if names {
				t.Errorf("not woken by %q", payload)
			}
		}
	})
}
