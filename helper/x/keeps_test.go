package x_test

import (
	"testing"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/x"
)

// The checkpoints kept are the searches of the phrases given, as Read
// names them (trimmed, any case), and every key not a search's.
func TestKeepsTheSearchesOfThePhrases(t *testing.T) {
	keep := (&x.Reader{}).Keeps([]helper.Phrase{{Phrase: " Acme CRM "}, {Phrase: "widgets"}}, nil)
	for k, want := range map[string]bool{
		x.Key("acme crm"): true,
		x.Key("widgets"):  true,
		x.Key("gone"):     false,
		"x:search:":       false,
		"reddit:new:go":   true,
		"facebook:groups": true,
	} {
		if keep(k) != want {
			t.Errorf("%q kept: %t, want %t", k, !want, want)
		}
	}
}
