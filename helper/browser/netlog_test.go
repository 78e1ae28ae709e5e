package browser

import (
	"encoding/json"
	"os"
	"testing"
)

// netEvent is one event of a Chromium NetLog with its type's name, the id
// of its source (a socket's events share it) and the parameters the tests
// read.
type netEvent struct {
	name   string
	source int
	params netParams
}

// netParams are the parameters of a NetLog event that the tests read: a
// resolver request's host ("http://example.com:80"), a connect's address
// ("1.2.3.4:443", "[2001:db8::1]:443"); empty where the event has none.
type netParams struct {
	Host    string `json:"host"`
	Address string `json:"address"`
}

// readNetLog reads the Chromium NetLog at path (--log-net-log) and returns
// its events in order. The file is {"constants": ..., "events": [...]},
// each event naming its type by a number that constants.logEventTypes
// maps to the names of net/log/net_log_event_type_list.h. A NetLog with
// no event types or no events fails the test: Chromium was not closed
// gracefully, or logged elsewhere, and a check over it would pass on
// nothing.
func readNetLog(t *testing.T, path string) []netEvent {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nl struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int `json:"type"`
			Source struct {
				ID int `json:"id"`
			} `json:"source"`
			Params netParams `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &nl); err != nil {
		t.Fatalf("the NetLog (%d bytes): %v", len(raw), err)
	}
	name := map[int]string{}
	for k, v := range nl.Constants.LogEventTypes {
		name[v] = k
	}
	if len(name) == 0 || len(nl.Events) == 0 {
		t.Fatalf("the NetLog has %d event types and %d events", len(name), len(nl.Events))
	}
	out := make([]netEvent, len(nl.Events))
	for i, e := range nl.Events {
		out[i] = netEvent{name: name[e.Type], source: e.Source.ID, params: e.Params}
	}
	return out
}
