package facebook

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
)

// The checkpoints kept are the searches of the phrases given, in their
// own groups and in the joined groups the state lists, the list and the
// rotation's place, and every key not facebook's.
func TestKeepsTheSearchesOfThePhrases(t *testing.T) {
	joined, _ := json.Marshal(joinedGroups{At: time.Unix(1000, 0), Groups: []Group{{ID: "111", Name: "Makers"}}})
	state := map[string]string{groupsKey: string(joined)}
	keep := (&Reader{}).Keeps([]helper.Phrase{{Phrase: " acme "}, {Phrase: "widgets", Community: "/makersclub/"}},
		func(k string) string { return state[k] })
	for k, want := range map[string]bool{
		Key("acme", ""):              true,
		Key("widgets", ""):           true,
		Key("widgets", "makersclub"): true,
		Key("acme", "111"):           true,
		Key("widgets", "111"):        true,
		Key("acme", "222"):           false,
		Key("gone", ""):              false,
		Key("gone", "111"):           false,
		Key("acme", "makersclub"):    false,
		groupsKey:                    true,
		rotationKey:                  true,
		"x:search:acme":              true,
		"reddit:new:golang":          true,
	} {
		if keep(k) != want {
			t.Errorf("%q kept: %t, want %t", k, !want, want)
		}
	}
}
