package helper_test

import (
	"path/filepath"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// The server's address names the same deployment with or without a
// trailing slash, as the client reads it: the checkpoints kept under one
// are found under the other, so an owner who edits EARSHOT_HELPER_SERVER
// (a systemd unit, a copied command) does not start over, reading every
// platform as a first run.
func TestStateServerWithOrWithoutSlash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	st, err := helper.OpenState(path, "https://earshot.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set(map[string]string{"reddit:new:golang": "1767225000"}); err != nil {
		t.Fatal(err)
	}
	st, err = helper.OpenState(path, "https://earshot.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Get("reddit:new:golang"); got != "1767225000" {
		t.Fatalf("the checkpoint kept with a trailing slash reads %q without it", got)
	}
}
